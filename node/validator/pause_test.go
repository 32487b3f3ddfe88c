package validator

import (
	"testing"
	"time"

	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/protocol/pb"
)

// TestPauseKeepsDutyCycle: after a round lengthened to min_rtt_multiple
// round trips the validator pauses in proportion, so the miner stays under
// its rounds the duty cycle's share of the time; a stalled round (longer
// than its nominal length) does not space the next ones out further.
func TestPauseKeepsDutyCycle(t *testing.T) {
	c := config.LocalConfig()
	c.Validator.DutyCycle, c.Validator.RoundTarget, c.Validator.MinRTTMultiple = 0.2, config.Duration{Duration: time.Second}, 20
	v := &Validator{env: Env{Config: c, ChallengeEvery: time.Second}}
	ann := &pb.MinerAnnounce{Gpus: []*pb.GPU{{Name: "NVIDIA H100 80GB HBM3"}}}
	for _, tt := range []struct {
		name    string
		took    time.Duration
		rtt     time.Duration
		meanGap time.Duration // 2·d·(1−u)/u ÷ 2, d = min(took, nominal)
	}{
		{"at its target", time.Second, 0, 4 * time.Second},
		{"lengthened by a 200 ms round trip", 4 * time.Second, 200 * time.Millisecond, 16 * time.Second},
		{"stalled", 30 * time.Second, 200 * time.Millisecond, 16 * time.Second},
	} {
		const n = 4000
		var sum time.Duration
		e := &minerEntry{} // one miner: its draws are one stream
		for range n {
			now := time.Now()
			v.pause(e, "", ann, now.Add(-tt.took), tt.rtt)
			sum += e.next.Sub(now)
		}
		if mean := sum / n; mean < tt.meanGap*95/100 || mean > tt.meanGap*105/100 {
			t.Errorf("%s: mean pause %v, want about %v", tt.name, mean, tt.meanGap)
		}
	}
}
