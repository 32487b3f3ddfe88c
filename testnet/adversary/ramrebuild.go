package adversary

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pog-network/pog/proof/host"
	"github.com/pog-network/pog/testnet/report"
)

// The ram-rebuild adversary (finding F) is RAMRebuildIdentities
// identities whose RAM datasets one host holds one at a time. It answers
// the RAM host rounds of the identity whose dataset it holds, and after
// each host set it rebuilds the next identity's in name order, as a GPU
// holding the light cache would (SPEC §23.7: about 1½–2 min per 2 TiB):
// every identity's RAM round of a host slot falls at one instant, so it
// can answer one of them, and rotating gives each its turn. The holder
// changes only with time, never with the order in which one instant's
// rounds arrive, so a seed replays. Everything else is each identity's
// own. Only a simulated run models the rebuild (virtual time).
const RAMRebuildIdentities = 3

// ramRebuildShare is a rebuild's time as a share of the epoch: 105 s of
// the production 72 min.
const ramRebuildShare = 105.0 / (72 * 60)

// RAMHost is the one host's dataset: whose it holds, since when.
type RAMHost struct {
	mu      sync.Mutex
	keys    []string // the identities, in name order
	holder  int      // index in keys
	since   time.Time
	rebuild time.Duration
}

// NewRAMHost is a host of the identities keys whose rebuilds take their
// production share of an epoch of length epoch.
func NewRAMHost(epoch time.Duration, keys []string) *RAMHost {
	return &RAMHost{keys: slices.Sorted(slices.Values(keys)), rebuild: time.Duration(float64(epoch) * ramRebuildShare)}
}

// HostTime is identity key's host proof time: a RAM proof takes base's
// time if the host holds key's dataset, and is not answered otherwise (a
// negative time); other kinds take base's. The first RAM round a rebuild
// after the holder's last turn allows passes the dataset to the next
// identity.
func (h *RAMHost) HostTime(key string, base func(string, host.Shape) time.Duration) func(string, host.Shape) time.Duration {
	return func(kind string, sh host.Shape) time.Duration {
		if kind != "ram" {
			return base(kind, sh)
		}
		now := time.Now()
		h.mu.Lock()
		defer h.mu.Unlock()
		switch {
		case h.since.IsZero():
			h.since = now
		case !now.Before(h.since.Add(h.rebuild)):
			h.holder, h.since = (h.holder+1)%len(h.keys), now
		}
		if h.keys[h.holder] != key {
			return -1
		}
		return base(kind, sh)
	}
}

// RAMRebuildCheck compares the RAM capacity the ram-rebuild identities
// were credited together with an honest miner's of their profile (each
// validator's mean over its host slots, averaged over validators and
// epochs): every identity's RAM round falls at one instant, so at most one
// is answered, and a miss counts 0 (SPEC §16, §23.7): at most MaxGain.
func RAMRebuildCheck(s *report.Summary) report.Check {
	name := fmt.Sprintf("ram-rebuild's %d identities holding one dataset are credited at most one host's RAM (SPEC §16, §23.7)", RAMRebuildIdentities)
	sum, ref, profile, honest := groupAgainstHonest(s, "ram-rebuild", func(e report.Epoch) map[string]float64 { return e.HostRAM })
	if ref <= 0 || sum <= 0 {
		return report.Check{Name: name, OK: false, Detail: fmt.Sprintf("no RAM proven: group %.4g, honest %.4g (%s)", sum, ref, strings.Join(honest, ", "))}
	}
	ratio := sum / ref
	return report.Check{Name: name, OK: ratio <= MaxGain,
		Detail: fmt.Sprintf("%.4g RAM bytes credited to the group against %.4g to honest %s (%s): ratio %.3f (limit %.2f)", sum, ref, profile, strings.Join(honest, ", "), ratio, MaxGain)}
}
