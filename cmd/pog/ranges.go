package main

import (
	"flag"
	"fmt"
	"math"
	"strings"
	"time"
)

// flagRange bounds one numeric flag, inclusive; durations in nanoseconds.
type flagRange struct{ min, max float64 }

// flagRanges bounds the numeric flags of each command ("pog NAME"), so that
// `bench --workers -1` or `rounds --epoch -5` is a usage error, not a
// silent default. parseFlags checks them; commands that parse their flags
// otherwise call checkFlagRanges.
var flagRanges = map[string]map[string]flagRange{
	"bench":   {"workers": {0, 4096}, "batch": {1, math.MaxUint32}},
	"rounds":  {"epoch": {-1, math.MaxInt64}},
	"weights": {"epoch": {-1, math.MaxInt64}},
	"explain": {"epoch": {-1, math.MaxInt64}},
	"audit":   {"epoch": {-1, math.MaxInt64}},
	"testnet": {"validators": {1, 64}, "miners": {0, 1000}, "epochs": {1, 10_000},
		"epoch-length": {float64(time.Second), float64(24 * time.Hour)},
		"netem-delay":  {0, float64(10 * time.Second)}, "netem-loss": {0, 100}, "duty-cycle": {0, 1}},
}

// checkFlagRanges returns an error naming the first numeric flag of fs
// outside its range.
func checkFlagRanges(fs *flag.FlagSet) error {
	ranges := flagRanges[strings.TrimPrefix(fs.Name(), "pog ")]
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		r, ok := ranges[f.Name]
		if !ok || err != nil {
			return
		}
		var v float64
		switch x := f.Value.(flag.Getter).Get().(type) {
		case int:
			v = float64(x)
		case int64:
			v = float64(x)
		case uint:
			v = float64(x)
		case float64:
			v = x
		case time.Duration:
			v = float64(x)
		default:
			return
		}
		if !(v >= r.min && v <= r.max) {
			err = fmt.Errorf("--%s %s: want %s to %s", f.Name, f.Value, show(f, r.min), show(f, r.max))
		}
	})
	return err
}

func show(f *flag.Flag, v float64) string {
	if _, ok := f.Value.(flag.Getter).Get().(time.Duration); ok {
		return time.Duration(v).String()
	}
	return fmt.Sprintf("%.0f", v)
}
