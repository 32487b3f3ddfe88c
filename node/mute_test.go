package node

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/internal/stream"
	"github.com/pog-network/pog/protocol"
)

// A miner that stops answering protocol negotiation holds its validator's
// round for stream.OpenTimeout at most (after the pings' own bound), not
// until the round's context ends at the epoch's cutoff, an hour here,
// with the validator's epoch record waiting on it. libp2p bounds the
// negotiation only for a context without a deadline.
func TestMuteMinerCannotHoldARound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.EpochLength = config.Duration{Duration: time.Hour}
		failed := make(chan time.Time, 1)
		v, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.Logger = slog.New(openFailures{testLogger(t).Handler(), failed})
		})
		m := tn.start(RoleMiner, cfg, cpu.Backend{})
		tn.connect(m, v)
		tn.waitVerified([]*Node{v}, []*Node{m}, 1, time.Minute)

		// From now the miner holds every new stream unanswered, and the
		// validator no longer knows its protocols, so opening a round
		// stream negotiates.
		muted := time.Now()
		m.host.Network().SetStreamHandler(func(s network.Stream) {
			<-t.Context().Done()
			s.Reset()
		})
		v.host.Peerstore().RemoveProtocols(m.ID(), protocol.RoundProtocol)
		select {
		case at := <-failed:
			// The next round starts within seconds; its pings wait 5 s.
			if held := at.Sub(muted); held > stream.OpenTimeout+20*time.Second {
				t.Fatalf("the mute miner held the round %v", held)
			} else {
				t.Logf("round failed to open %v after the miner went mute", held)
			}
		case <-time.After(2 * time.Hour):
			t.Fatal("no round failed to open in two hours")
		}
	})
}

// openFailures passes records on to its handler and signals each "round
// failed" whose reason is a round stream that could not be opened.
type openFailures struct {
	slog.Handler
	at chan time.Time
}

// Enabled is true for warnings, "round failed" among them, even where the
// test's own handler discards everything.
func (h openFailures) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.Handler.Enabled(ctx, l)
}

func (h openFailures) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "round failed" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "reason" && strings.HasPrefix(a.Value.String(), "open round stream") {
				select {
				case h.at <- time.Now():
				default:
				}
			}
			return true
		})
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h openFailures) WithAttrs(as []slog.Attr) slog.Handler {
	return openFailures{h.Handler.WithAttrs(as), h.at}
}

func (h openFailures) WithGroup(name string) slog.Handler {
	return openFailures{h.Handler.WithGroup(name), h.at}
}
