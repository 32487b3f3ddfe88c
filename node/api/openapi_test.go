package api

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type spec struct {
	Paths      map[string]map[string]operation `yaml:"paths"`
	Components struct {
		Schemas   map[string]*schema `yaml:"schemas"`
		Responses map[string]struct {
			Content map[string]struct {
				Schema *schema `yaml:"schema"`
			} `yaml:"content"`
		} `yaml:"responses"`
	} `yaml:"components"`
}

type operation struct {
	Responses map[string]struct {
		Ref     string `yaml:"$ref"`
		Content map[string]struct {
			Schema *schema `yaml:"schema"`
		} `yaml:"content"`
	} `yaml:"responses"`
}

type schema struct {
	Ref                  string             `yaml:"$ref"`
	Type                 string             `yaml:"type"`
	Nullable             bool               `yaml:"nullable"`
	Required             []string           `yaml:"required"`
	Properties           map[string]*schema `yaml:"properties"`
	AdditionalProperties *schema            `yaml:"additionalProperties"`
	Items                *schema            `yaml:"items"`
	Enum                 []string           `yaml:"enum"`
}

func loadSpec(t *testing.T) *spec {
	t.Helper()
	var s spec
	if err := yaml.Unmarshal(OpenAPI(), &s); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	return &s
}

// check validates v against sc: required fields present, no undocumented
// field, types and enums as documented. seen collects the documented
// property paths that appeared, so the test can insist the fixture
// exercised them all.
func (s *spec) check(sc *schema, v any, at string, seen map[string]bool) error {
	if sc.Ref != "" {
		name := strings.TrimPrefix(sc.Ref, "#/components/schemas/")
		if s.Components.Schemas[name] == nil {
			return fmt.Errorf("%s: unknown $ref %s", at, sc.Ref)
		}
		sc = s.Components.Schemas[name]
	}
	if v == nil {
		if sc.Nullable {
			return nil
		}
		return fmt.Errorf("%s: null, not nullable", at)
	}
	switch sc.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %T, want an object", at, v)
		}
		for _, r := range sc.Required {
			if _, ok := m[r]; !ok {
				return fmt.Errorf("%s: required field %q missing", at, r)
			}
		}
		for k, fv := range m {
			sub := sc.Properties[k]
			if sub == nil {
				sub = sc.AdditionalProperties
				if sub == nil {
					return fmt.Errorf("%s: field %q is not documented", at, k)
				}
			} else {
				seen[at+"."+k] = true
			}
			if err := s.check(sub, fv, at+"."+k, seen); err != nil {
				return err
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %T, want an array", at, v)
		}
		for i, x := range a {
			if err := s.check(sc.Items, x, at+"[]", seen); err != nil {
				return fmt.Errorf("%w (item %d)", err, i)
			}
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s: %T, want a string", at, v)
		}
		if len(sc.Enum) > 0 && !slices.Contains(sc.Enum, str) {
			return fmt.Errorf("%s: %q not in %v", at, str, sc.Enum)
		}
	case "integer":
		if f, ok := v.(float64); !ok || f != math.Trunc(f) {
			return fmt.Errorf("%s: %v, want an integer", at, v)
		}
	case "number":
		if _, ok := v.(float64); !ok {
			return fmt.Errorf("%s: %T, want a number", at, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %T, want a boolean", at, v)
		}
	default:
		return fmt.Errorf("%s: schema type %q unsupported by this check", at, sc.Type)
	}
	return nil
}

// documented lists every property path the schema defines below at.
func (s *spec) documented(sc *schema, at string, out map[string]bool) {
	if sc.Ref != "" {
		sc = s.Components.Schemas[strings.TrimPrefix(sc.Ref, "#/components/schemas/")]
	}
	for k, p := range sc.Properties {
		out[at+"."+k] = true
		s.documented(p, at+"."+k, out)
	}
	if sc.Items != nil {
		s.documented(sc.Items, at+"[]", out)
	}
}

// TestOpenAPIMatchesHandlers: every documented path answers 200 with its
// documented fields and no others, the fixture exercises every documented
// field, and every handler is documented.
func TestOpenAPIMatchesHandlers(t *testing.T) {
	s := loadSpec(t)
	f := newFixture(t)
	h := New(Options{Live: f, Store: f.st, Version: "test"})
	var documented []string
	for path, ops := range s.Paths {
		documented = append(documented, path)
		op, ok := ops["get"]
		if !ok {
			t.Errorf("%s: no get operation", path)
			continue
		}
		resp := op.Responses["200"].Content["application/json"].Schema
		if resp == nil {
			t.Errorf("%s: no application/json schema for 200", path)
			continue
		}
		// A path parameter is the fixture's failing miner, whose score
		// shows every documented field.
		code, body := get(t, h, strings.ReplaceAll(path, "{id}", f.miners[1].String()))
		if code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, code, body)
			continue
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Errorf("GET %s: %v", path, err)
			continue
		}
		seen, want := map[string]bool{}, map[string]bool{}
		if err := s.check(resp, v, "", seen); err != nil {
			t.Errorf("GET %s: %v", path, err)
		}
		s.documented(resp, "", want)
		for p := range want {
			if !seen[p] {
				t.Errorf("GET %s: documented field %s never appeared (extend the fixture)", path, p)
			}
		}
	}
	handlers := Paths()
	sort.Strings(documented)
	sort.Strings(handlers)
	if !slices.Equal(documented, handlers) {
		t.Errorf("documented paths %v, handler paths %v", documented, handlers)
	}
	// Error answers have the documented shape.
	errSchema := s.Components.Responses["Error"].Content["application/json"].Schema
	code, body := get(t, h, "/api/v1/weights?epoch=99")
	var v any
	json.Unmarshal(body, &v)
	if err := s.check(errSchema, v, "", map[string]bool{}); code != http.StatusNotFound || err != nil {
		t.Errorf("error answer %d: %v", code, err)
	}
}
