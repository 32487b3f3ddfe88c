package testnet

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/testnet/report"
)

// epochLine is the console's one line for an epoch every node holds the
// records of: its rounds and who was caught, in place of a line per
// detection.
func (r *run) epochLine(e uint64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return epochLine(e, r.rounds, r.detections, r.adversaryOf)
}

// adversaryOf maps a miner name to its adversary class ("" if honest).
func (r *run) adversaryOf(name string) string {
	for _, m := range r.members {
		if m.info.Name == name {
			return m.info.Adversary
		}
	}
	return ""
}

func epochLine(e uint64, rounds []report.Round, dets []report.Detection, adversaryOf func(string) string) string {
	verified, failed, honestFailed, honestAbsent := 0, 0, 0, 0
	for _, rd := range rounds {
		switch {
		case rd.Epoch != e:
		case rd.Verified:
			verified++
		default:
			failed++
			switch {
			case adversaryOf(rd.Miner) != "":
			case strings.HasPrefix(rd.Reason, epoch.NoShowPrefix):
				honestAbsent++ // not connected to the slot's owner: the late joiner's, a partition's
			default:
				honestFailed++
			}
		}
	}
	caught := map[string]int{}
	for _, d := range dets {
		if d.Epoch == e && d.Adversary != "" {
			caught[d.Adversary]++
		}
	}
	classes := make([]string, 0, len(caught))
	for a := range caught {
		classes = append(classes, a)
	}
	sort.Strings(classes)
	for i, a := range classes {
		classes[i] = fmt.Sprintf("%s ×%d", a, caught[a])
	}
	who := "nobody"
	if len(classes) > 0 {
		who = strings.Join(classes, ", ")
	}
	line := fmt.Sprintf("epoch %d: records on every node; rounds %d verified, %d failed; caught %s", e, verified, failed, who)
	if honestAbsent > 0 {
		line += fmt.Sprintf("; %d no-shows of honest miners not connected to the slot's owner", honestAbsent)
	}
	if honestFailed > 0 {
		line += fmt.Sprintf("; %d failed rounds of honest miners", honestFailed)
	}
	return line
}
