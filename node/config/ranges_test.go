package config

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	// The default profile names the cpu backend, which a binary registers
	// by linking it.
	_ "github.com/pog-network/pog/kernels/cpu"
)

// TestConfigRefused loads each refused setting of testdata/config_refused.txt
// over the local profile and expects the error it names.
func TestConfigRefused(t *testing.T) {
	f, err := os.Open("testdata/config_refused.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		setting, want, ok := strings.Cut(line, "->")
		section, kv, ok2 := strings.Cut(strings.TrimSpace(setting), " ")
		if !ok || !ok2 {
			t.Fatalf("bad line %q", line)
		}
		n++
		err := loadWith(t, fmt.Sprintf("[%s]\n%s\n", section, kv))
		if want = strings.TrimSpace(want); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("[%s] %s: got %v, want an error containing %q", section, kv, err, want)
		}
	}
	if n == 0 {
		t.Fatal("no cases")
	}
}

// loadWith writes body as a home's config.toml (every other setting the
// default) and loads it.
func loadWith(t *testing.T, body string) error {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ConfigFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(home)
	return err
}

// TestConfigRangeBounds sets each ranged setting to its bounds (accepted)
// and just past them (refused, naming the key).
func TestConfigRangeBounds(t *testing.T) {
	for _, r := range configRanges {
		section, key, _ := strings.Cut(r.key, ".")
		step := 1.0
		switch r.kind {
		case duration:
			step = float64(time.Millisecond)
		case fraction:
			step = r.min / 2
		}
		for _, c := range []struct {
			v  float64
			ok bool
		}{{r.min, true}, {r.max, true}, {r.min - step, false}, {r.max + step, false}} {
			val := fmt.Sprintf("%.0f", c.v)
			if r.kind == fraction {
				val = fmt.Sprintf("%g", c.v)
			}
			if r.kind == duration {
				val = fmt.Sprintf("%q", time.Duration(c.v).String())
			}
			body := fmt.Sprintf("[%s]\n%s = %s\n", section, key, val)
			if r.key == "node.conn_low_water" && c.ok {
				body += "conn_high_water = 100000\n" // low <= high
			}
			if r.key == "node.conn_high_water" && c.ok {
				body += "conn_low_water = 1\n"
			}
			if r.key == "validator.min_steps" && c.ok {
				body += "max_steps = 256\n" // min <= max
			}
			if r.key == "validator.max_steps" && c.ok {
				body += "min_steps = 2\n"
			}
			err := loadWith(t, body)
			switch {
			case c.ok && err != nil:
				t.Errorf("%s = %s refused: %v", r.key, val, err)
			case !c.ok && (err == nil || !strings.Contains(err.Error(), r.key)):
				t.Errorf("%s = %s: got %v, want an error naming the key", r.key, val, err)
			}
		}
	}
}

// checkedElsewhere are the numeric settings Validate checks by other
// means than a range: tile sizes are powers of two, fractions open
// intervals.
var checkedElsewhere = map[string]bool{
	"validator.tile_bytes":         true,
	"validator.detect_fraction":    true,
	"validator.detect_probability": true,
}

// TestEveryNumericSettingHasARange: each duration, count and size in
// Config has a row in configRanges, so a new setting cannot skip one.
func TestEveryNumericSettingHasARange(t *testing.T) {
	ranged := map[string]bool{}
	for _, r := range configRanges {
		ranged[r.key] = true
	}
	sections := reflect.TypeOf(Config{})
	for i := range sections.NumField() {
		sec := sections.Field(i)
		for j := range sec.Type.NumField() {
			f := sec.Type.Field(j)
			key := sec.Tag.Get("toml") + "." + f.Tag.Get("toml")
			switch f.Type.Kind() {
			case reflect.Int, reflect.Int64, reflect.Uint32, reflect.Uint64, reflect.Float64, reflect.Struct:
				if !ranged[key] && !checkedElsewhere[key] {
					t.Errorf("%s (%v) has no range in configRanges", key, f.Type)
				}
			}
		}
	}
}

// TestConfigDocumentsRanges: config.toml states each setting's range
// beside it.
func TestConfigDocumentsRanges(t *testing.T) {
	home := t.TempDir()
	if err := WriteConfig(home, LocalConfig(), "local"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(home, ConfigFile))
	if !strings.Contains(string(b), "(range: 100ms to 24h0m0s)\nround_interval") {
		t.Fatalf("config.toml does not document round_interval's range:\n%s", b)
	}
}
