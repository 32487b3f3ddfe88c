package round

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// testSchedule reads `stakes=a:1,b:2`, `coverage=c` (default 1) and
// `host=q` (host share, default 0) over a host grid of `host_slots=n`
// slots (default 1).
func testSchedule(t *testing.T, d *datadriven.TestData) Schedule {
	s := Schedule{Slot: 10 * time.Second, Coverage: 1}
	var stakes, cov, host string
	hostSlots := 1
	d.ScanArgs(t, "stakes", &stakes)
	if d.MaybeScanArgs(t, "coverage", &cov); cov != "" {
		s.Coverage, _ = strconv.ParseFloat(cov, 64)
	}
	if d.MaybeScanArgs(t, "host", &host); host != "" {
		s.HostShare, _ = strconv.ParseFloat(host, 64)
	}
	d.MaybeScanArgs(t, "host_slots", &hostSlots)
	s.HostSlot = time.Duration(hostSlots) * s.Slot
	for _, kv := range strings.Split(stakes, ",") {
		name, st, _ := strings.Cut(kv, ":")
		f, _ := strconv.ParseFloat(st, 64)
		s.Validators, s.Stakes = append(s.Validators, []byte(name)), append(s.Stakes, f)
	}
	return s
}

func TestSchedule(t *testing.T) {
	datadriven.RunTest(t, "testdata/schedule.txt", func(t *testing.T, d *datadriven.TestData) string {
		s := testSchedule(t, d)
		if err := s.Validate(); err != nil {
			return err.Error()
		}
		var miner string
		var from, count int
		d.ScanArgs(t, "miner", &miner)
		d.MaybeScanArgs(t, "from", &from)
		d.ScanArgs(t, "count", &count)
		switch d.Cmd {
		case "owners":
			var out []string
			for j := from; j < from+count; j++ {
				if o := s.Owner([]byte(miner), uint64(j)); s.hostOf(uint64(j)) >= 0 {
					out = append(out, "H")
				} else if o < 0 {
					out = append(out, "-")
				} else {
					out = append(out, string(s.Validators[o]))
				}
			}
			return strings.Join(out, " ")
		case "shares":
			n := make([]int, len(s.Validators)+1)
			for j := from; j < from+count; j++ {
				n[s.Owner([]byte(miner), uint64(j))+1]++
			}
			var out []string
			for i, c := range n {
				name := "idle"
				if i > 0 {
					name = string(s.Validators[i-1])
				}
				out = append(out, fmt.Sprintf("%s %.2f", name, float64(c)/float64(count)))
			}
			return strings.Join(out, ", ")
		case "hosts":
			// Host-grid slots from..from+count: each host slot's owner, "-"
			// for none.
			var out []string
			for k := from; k < from+count; k++ {
				if o := s.HostOwner(uint64(k)); o < 0 {
					out = append(out, "-")
				} else {
					out = append(out, string(s.Validators[o]))
				}
			}
			return strings.Join(out, " ")
		case "next":
			var self int
			d.ScanArgs(t, "self", &self)
			j, ok := s.Next([]byte(miner), self, uint64(from), count)
			if !ok {
				return "none"
			}
			return strconv.FormatUint(j, 10)
		case "opens":
			// Which validator may open a round at each time (seconds,
			// slots of 10 s): "-" none.
			var at, early, late string
			d.ScanArgs(t, "at", &at)
			d.ScanArgs(t, "early", &early)
			d.ScanArgs(t, "late", &late)
			e, _ := time.ParseDuration(early)
			l, _ := time.ParseDuration(late)
			var out []string
			for _, f := range strings.Split(at, ",") {
				sec, _ := strconv.ParseFloat(f, 64)
				tm := time.Unix(0, int64(sec*float64(time.Second)))
				who := "-"
				for i, v := range s.Validators {
					if s.Opens([]byte(miner), i, tm, e, l) {
						who = string(v)
					}
					if s.HostOpens(i, tm, e, l) {
						who = "host:" + string(v)
					}
				}
				out = append(out, f+":"+who)
			}
			return strings.Join(out, " ")
		}
		t.Fatalf("unknown command %s", d.Cmd)
		return ""
	})
}

// Slots are aligned for every miner, and Next never returns a slot another
// validator owns.
func TestScheduleNextOwned(t *testing.T) {
	s := Schedule{Slot: 1250 * time.Millisecond, Coverage: 0.9, Validators: [][]byte{[]byte("a"), []byte("b"), []byte("c")}, Stakes: []float64{1, 2, 0.01}}
	if s.SlotAt(s.Start(1_000_000)) != 1_000_000 || s.SlotAt(s.Start(1_000_001).Add(-time.Nanosecond)) != 1_000_000 {
		t.Fatal("SlotAt and Start disagree")
	}
	for self := range s.Validators {
		for from := uint64(0); from < 200; from += 7 {
			j, ok := s.Next([]byte("m"), self, from, 1<<16)
			if !ok || j < from || s.Owner([]byte("m"), j) != self {
				t.Fatalf("validator %d from %d: slot %d %v", self, from, j, ok)
			}
			for k := from; k < j; k++ {
				if s.Owner([]byte("m"), k) == self {
					t.Fatalf("validator %d from %d: skipped its slot %d for %d", self, from, k, j)
				}
			}
		}
	}
}
