package scoring

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestDefaultConfigValid(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidateRejects(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string // substring of the error
	}{
		{"version 0", func(c *Config) { c.Version = 0 }, "version"},
		{"negative weight", func(c *Config) { c.CPUWeight, c.GPUWeight = -0.1, 0.85 }, "cpu_weight: -0.1"},
		// 0.55 + 0.2 + 0.15 + 0.1 + 1e-8 misses 1 by more than 1e-9.
		{"parts off by 1e-8", func(c *Config) { c.GPUWeight += 1e-8 }, "gpu_weight+cpu_weight+ram_weight+storage_weight: sum"},
		{"sustained+peak 0.9", func(c *Config) { c.PeakWeight = 0.2 }, "sustained_weight+peak_weight"},
		{"fp16+fp32 1.1", func(c *Config) { c.FP32Weight = 0.5 }, "fp16_weight+fp32_weight"},
		{"throughput+memory", func(c *Config) { c.MemoryWeight = 0.2 }, "throughput_weight+memory_weight"},
		{"ram pair", func(c *Config) { c.RAMBandwidthWeight = 0.6 }, "ram_capacity_weight+ram_bandwidth_weight"},
		{"storage pair", func(c *Config) { c.StorageSpeedWeight = 0.4 }, "storage_speed_weight+storage_capacity_weight"},
		{"NaN weight", func(c *Config) { c.FP16Weight = math.NaN() }, "fp16_weight: NaN"},
		{"zero reference GPUs", func(c *Config) { c.Reference.GPUs = 0 }, "reference.gpus"},
		{"zero reference fp16", func(c *Config) { c.Reference.GPUFP16TFLOPS = 0 }, "reference.gpu_fp16_tflops"},
		{"negative reference fp32", func(c *Config) { c.Reference.GPUFP32TFLOPS = -1 }, "reference.gpu_fp32_tflops"},
		{"zero reference memory", func(c *Config) { c.Reference.GPUMemoryBytes = 0 }, "reference.gpu_memory_bytes"},
		{"zero reference cores", func(c *Config) { c.Reference.CPUCores = 0 }, "reference.cpu_cores"},
		{"infinite reference GHz", func(c *Config) { c.Reference.CPUGHz = math.Inf(1) }, "reference.cpu_ghz"},
		{"zero reference RAM", func(c *Config) { c.Reference.RAMBytes = 0 }, "reference.ram_bytes"},
		{"zero reference RAM bandwidth", func(c *Config) { c.Reference.RAMGBps = 0 }, "reference.ram_gbps"},
		{"zero reference storage", func(c *Config) { c.Reference.StorageBytes = 0 }, "reference.storage_bytes"},
		{"zero reference storage speed", func(c *Config) { c.Reference.StorageMBps = 0 }, "reference.storage_mbps"},
		{"cap below 1", func(c *Config) { c.Cap = 0.99 }, "cap: 0.99"},
		{"cap NaN", func(c *Config) { c.Cap = math.NaN() }, "cap: NaN"},
		{"empty class name", func(c *Config) { c.Classes[0].Name = " " }, "classes[0].name: empty"},
		{"duplicate class", func(c *Config) { c.Classes[1].Name = "NVIDIA h200" }, "classes[1].name"},
		{"class fp16 zero", func(c *Config) { c.Classes[2].FP16TFLOPS = 0 }, "classes[2].fp16_tflops"},
		{"class fp32 NaN", func(c *Config) { c.Classes[2].FP32TFLOPS = math.NaN() }, "classes[2].fp32_tflops"},
		{"class memory zero", func(c *Config) { c.Classes[4].MemoryBytes = 0 }, "classes[4].memory_bytes"},
		{"claim floor above 1", func(c *Config) { c.ClaimFloor = 1.5 }, "claim_floor"},
		{"claim floor negative", func(c *Config) { c.ClaimFloor = -0.1 }, "claim_floor"},
		{"decay 1 never forgives", func(c *Config) { c.PenaltyDecay = 1 }, "penalty_decay"},
		{"decay negative", func(c *Config) { c.PenaltyDecay = -0.5 }, "penalty_decay"},
		{"penalty floor 1", func(c *Config) { c.PenaltyFloor = 1 }, "penalty_floor"},
		{"negative base rate", func(c *Config) { c.BaseRateUSD = -3.5 }, "base_rate_usd"},
		{"zero demand target", func(c *Config) { c.DemandTarget = 0 }, "demand_target"},
		{"negative demand min", func(c *Config) { c.DemandMin = -1 }, "demand_min"},
		{"demand max below min", func(c *Config) { c.DemandMax = 0.4 }, "demand_max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestValidateReportsAll(t *testing.T) {
	c := DefaultConfig()
	c.Cap, c.Reference.GPUs, c.PenaltyDecay = 0, 0, 2
	err := c.Validate()
	for _, f := range []string{"cap", "reference.gpus", "penalty_decay"} {
		if err == nil || !strings.Contains(err.Error(), f) {
			t.Errorf("%v does not name %s", err, f)
		}
	}
}

func TestValidateAccepts(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"cap above 1":         func(c *Config) { c.Cap = 1.5 },
		"weights within 1e-9": func(c *Config) { c.GPUWeight += 5e-10 },
		"a zero weight":       func(c *Config) { c.MemoryWeight, c.ThroughputWeight = 0, 1 },
		"no classes":          func(c *Config) { c.Classes = nil },
		"floor 0 disables":    func(c *Config) { c.ClaimFloor = 0 },
		"no decay floor":      func(c *Config) { c.PenaltyFloor = 0 },
		"fixed demand":        func(c *Config) { c.DemandMin, c.DemandMax = 1, 1 },
	} {
		c := DefaultConfig()
		mutate(&c)
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestHashStable(t *testing.T) {
	a, b := DefaultConfig().Hash(), DefaultConfig().Hash()
	if a != b {
		t.Fatal("hash differs across calls")
	}
	c := DefaultConfig()
	c.Hash()
	if !reflect.DeepEqual(c, DefaultConfig()) {
		t.Fatal("Hash modified its config")
	}
	// Class order never changes a score, so it never changes the hash.
	slices.Reverse(c.Classes)
	if c.Hash() != a {
		t.Error("class order changed the hash")
	}
	// A config Validate rejects still hashes, and differently.
	c = DefaultConfig()
	c.Cap = math.NaN()
	if h := c.Hash(); h == a || h != c.Hash() {
		t.Error("NaN config hash not distinct and stable")
	}
}

// TestHashCoversEveryField changes each field of Config, including each
// field of each class, by reflection, so a field added later is covered
// without editing this test.
func TestHashCoversEveryField(t *testing.T) {
	base := DefaultConfig().Hash()
	n := 0
	var walk func(path string, get func(*Config) reflect.Value)
	walk = func(path string, get func(*Config) reflect.Value) {
		c := DefaultConfig()
		v := get(&c)
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				walk(path+"."+v.Type().Field(i).Name, func(c *Config) reflect.Value { return get(c).Field(i) })
			}
			return
		case reflect.Slice:
			for i := range v.Len() {
				walk(fmt.Sprintf("%s[%d]", path, i), func(c *Config) reflect.Value { return get(c).Index(i) })
			}
			// Dropping an element changes the hash too.
			v.Set(v.Slice(0, v.Len()-1))
		case reflect.Float64:
			v.SetFloat(v.Float() + 0.001)
		case reflect.Int:
			v.SetInt(v.Int() + 1)
		case reflect.Uint64:
			v.SetUint(v.Uint() + 1)
		case reflect.Bool:
			v.SetBool(!v.Bool())
		case reflect.String:
			v.SetString(v.String() + "x")
		default:
			t.Fatalf("%s: kind %s not covered; extend this test", path, v.Kind())
		}
		n++
		if c.Hash() == base {
			t.Errorf("changing %s leaves the hash unchanged", path)
		}
	}
	walk("Config", func(c *Config) reflect.Value { return reflect.ValueOf(c).Elem() })
	if n < 40 {
		t.Errorf("only %d fields mutated", n)
	}
}
