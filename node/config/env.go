package config

import (
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// EnvPrefix starts every environment variable pog reads.
const EnvPrefix = "POG_"

// EnvHome names the default node home when --home is not given.
const EnvHome = EnvPrefix + "HOME"

// EnvVar is one environment override of a config key. The rule, applied to
// the Config struct's toml tags so keys added later get one too: the dotted
// key upper-cased, dots replaced by underscores, prefixed with POG_
// (miner.queue_length is POG_MINER_QUEUE_LENGTH).
type EnvVar struct {
	Name    string // POG_MINER_QUEUE_LENGTH
	Key     string // miner.queue_length
	Type    string // the value's syntax: string, bool, int, number, duration, list
	Comment string // the key's comment in config.toml
	field   []int  // index path into Config
}

// EnvName maps a dotted config key to its environment variable.
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// EnvVars lists every config key's environment variable in config.toml order.
func EnvVars() []EnvVar {
	var vars []EnvVar
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := strings.Split(f.Tag.Get("toml"), ",")[0]
			if !f.IsExported() || tag == "" || tag == "-" {
				continue
			}
			path := append(append([]int(nil), index...), i)
			if f.Type.Kind() == reflect.Struct && !isTextValue(f.Type) {
				walk(f.Type, prefix+tag+".", path)
				continue
			}
			key := prefix + tag
			vars = append(vars, EnvVar{Name: EnvName(key), Key: key, Type: envType(f.Type), Comment: f.Tag.Get("comment"), field: path})
		}
	}
	walk(reflect.TypeOf(Config{}), "", nil)
	return vars
}

var textUnmarshaler = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()

func isTextValue(t reflect.Type) bool { return reflect.PointerTo(t).Implements(textUnmarshaler) }

func envType(t reflect.Type) string {
	switch {
	case t == reflect.TypeOf(Duration{}):
		return "duration"
	case isTextValue(t):
		return "text"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		return "list"
	}
	return "string"
}

// ApplyEnv sets every config key whose variable is in environ (KEY=VALUE
// pairs, as os.Environ returns) and records the variable as its origin in
// o. Lists are comma-separated; an empty value sets an empty list. A
// variable that starts like a config section (POG_MINER_…) but names no
// key is an error, so a typo does not pass silently; other POG_ variables
// (POG_HOME) are not config keys. Its errors are *Error values.
func ApplyEnv(c *Config, environ []string, o Origins) error {
	byName := map[string]EnvVar{}
	for _, v := range EnvVars() {
		byName[v.Name] = v
	}
	sections := envSections()
	root := reflect.ValueOf(c).Elem()
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		v, ok := byName[name]
		if !ok {
			for _, s := range sections {
				if strings.HasPrefix(name, s) {
					return &Error{fmt.Errorf("environment %s: no such config key (the %s keys are listed by `pog env`)", name, strings.ToLower(strings.TrimPrefix(strings.TrimSuffix(s, "_"), EnvPrefix)))}
				}
			}
			continue
		}
		if err := setEnvValue(root.FieldByIndex(v.field), val); err != nil {
			return &Error{fmt.Errorf("environment %s (%s): %w", name, v.Key, err)}
		}
		o[v.Key] = "environment " + name
	}
	return nil
}

// envSections are the variable prefixes of Config's sections (POG_NODE_, …).
func envSections() []string {
	var s []string
	t := reflect.TypeOf(Config{})
	for i := 0; i < t.NumField(); i++ {
		s = append(s, EnvName(t.Field(i).Tag.Get("toml"))+"_")
	}
	return s
}

func setEnvValue(f reflect.Value, s string) error {
	if u, ok := f.Addr().Interface().(encoding.TextUnmarshaler); ok {
		return u.UnmarshalText([]byte(s))
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("want true or false, got %q", s)
		}
		f.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 0, f.Type().Bits())
		if err != nil {
			return fmt.Errorf("want an integer, got %q", s)
		}
		f.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 0, f.Type().Bits())
		if err != nil {
			return fmt.Errorf("want a non-negative integer, got %q", s)
		}
		f.SetUint(n)
	case reflect.Float32, reflect.Float64:
		x, err := strconv.ParseFloat(s, f.Type().Bits())
		if err != nil {
			return fmt.Errorf("want a number, got %q", s)
		}
		f.SetFloat(x)
	case reflect.Slice:
		if f.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("lists of %s cannot be set from the environment", f.Type().Elem())
		}
		list := []string{}
		for _, item := range strings.Split(s, ",") {
			if item = strings.TrimSpace(item); item != "" {
				list = append(list, item)
			}
		}
		f.Set(reflect.ValueOf(list))
	default:
		return fmt.Errorf("a %s cannot be set from the environment", f.Type())
	}
	return nil
}
