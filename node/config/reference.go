package config

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"
)

// Reference is the operator's reference of every config.toml key as
// markdown, one table per section: the key, its environment variable, the
// value's syntax, the default profile's value, the range checked at load
// and the comment pog init writes above it. It is built from the same
// sources the node reads (the Config struct's tags, DefaultConfig and
// configRanges), so the published reference cannot drift from them.
func Reference() string {
	def := reflect.ValueOf(DefaultConfig())
	var b strings.Builder
	section := ""
	for _, v := range EnvVars() {
		sec, name, _ := strings.Cut(v.Key, ".")
		if sec != section {
			if section != "" {
				b.WriteString("\n")
			}
			section = sec
			fmt.Fprintf(&b, "### `[%s]`\n\n| key | variable | type | default | range | meaning |\n|---|---|---|---|---|---|\n", sec)
		}
		r, ranged := rangeOf(v.Key)
		rng := "—"
		if ranged {
			rng = r.doc()
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s | %s |\n",
			name, v.Name, v.Type, defaultDoc(def.FieldByIndex(v.field).Interface(), r, ranged), rng, markdownCell(v.Comment))
	}
	return b.String()
}

// rangeOf is key's row of configRanges, if it has one.
func rangeOf(key string) (configRange, bool) {
	for _, r := range configRanges {
		if r.key == key {
			return r, true
		}
	}
	return configRange{}, false
}

// defaultDoc is v as config.toml spells it, in a code span, with the size
// in binary units beside a byte count (512 MiB beside 536870912).
func defaultDoc(v any, r configRange, ranged bool) string {
	if s, ok := v.([]string); ok && s == nil {
		v = []string{}
	}
	line, err := toml.Marshal(map[string]any{"v": v})
	if err != nil {
		panic(fmt.Sprintf("config default %v: %v", v, err))
	}
	val := strings.TrimSpace(strings.TrimPrefix(string(line), "v = "))
	doc := "`" + val + "`"
	if ranged && r.kind == bytesKind && number(v) != 0 {
		if unit := r.format(number(v)); unit != val {
			doc += " (" + unit + ")"
		}
	}
	return doc
}

// markdownCell escapes what would end a table cell early or read as HTML.
func markdownCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;").Replace(s)
}
