package config

import (
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/agext/levenshtein"
)

// A walker checks one layer's map (the file's, the flags') against the Go
// type it will be unmarshalled into, the way a file is read: it reports
// unknown keys (with the closest known one), values of the wrong type and
// the keys a file repeats, leaves such values out, turns durations (seconds
// or "90s") into time.Duration, and resolves the file's relative paths.
// It also notes where each key it meets came from, so that a later problem
// with a key (from Validate) is placed there.
//
// Keys are written as in Error.Key: fields with ".", entries named by the
// user (a map's keys) quoted, list elements with [i]: `bridge "x".env[1]`.
type walker struct {
	origin func(raw []string) origin // where the value at a raw path was set
	dups   map[string][]dup          // the file's repeated keys, by raw path of their object
	dir    string                    // the file's directory: relative paths resolve there; "" leaves them
	errs   errorList
	set    map[string]origin // every key the layer set, even with a bad value
}

// value checks v, found at key (raw path raw), against t, and returns it
// converted for koanf; ok is false when it must be left out. tag is the
// struct tag of the field holding it, if any.
func (w *walker) value(v any, t reflect.Type, tag reflect.StructTag, key string, raw []string) (any, bool) {
	if t == reflect.TypeFor[any]() { // any JSON: globals, a bridge's config
		return w.json(v, key, raw)
	}
	if t.Kind() == reflect.Pointer { // an optional block: as its struct
		return w.value(v, t.Elem(), tag, key, raw)
	}
	o := w.origin(raw)
	w.set[key] = o
	if tag.Get("file") == "object" { // a bridge's own config: any JSON object
		if _, ok := v.(map[string]any); ok {
			return w.json(v, key, raw)
		}
		w.errorf(o, key, "must be an object, got %s", describeValue(v))
		return nil, false
	}
	w.duplicates(o, key, raw)
	bad := func() (any, bool) {
		want := tag.Get("want")
		if want == "" {
			want = describeType(t)
		}
		w.errorf(o, key, "must be %s, got %s", want, describeValue(v))
		return nil, false
	}
	if t == reflect.TypeFor[time.Duration]() {
		d, ok := duration(v)
		if !ok {
			return bad()
		}
		return d, true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		if t.Kind() == reflect.Struct {
			return w.fields(m, t, key, raw), true
		}
		out := make(map[string]any, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if x, ok := w.value(m[k], t.Elem(), "", entry(key, k), append(raw, k)); ok {
				out[k] = x
			}
		}
		return out, true
	case reflect.Slice:
		items, ok := v.([]any)
		if !ok {
			return bad()
		}
		out := make([]any, 0, len(items))
		for i, item := range items {
			if x, ok := w.value(item, t.Elem(), tag, index(key, i), append(raw, rawIndex(i))); ok {
				out = append(out, x)
			}
		}
		return out, true
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		return w.path(s, tag, o, key)
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return bad()
		}
		return v, true
	case reflect.Int:
		if i, ok := whole(v); ok {
			return i, true
		}
		return bad()
	case reflect.Float64:
		if i, ok := whole(v); ok {
			return float64(i), true
		}
		if f, ok := v.(float64); ok && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, true
		}
		return bad()
	}
	panic(fmt.Sprintf("config: no rule for a %s field (%s)", t, key))
}

// fields checks an object against the fields of struct t, by koanf tag.
// Embedded fields tagged ",squash" add their fields. A null value is the
// same as leaving the key out.
func (w *walker) fields(m map[string]any, t reflect.Type, key string, raw []string) map[string]any {
	known := structFields(t)
	out := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		f, ok := known[k]
		if !ok {
			hint := suggest(k, slices.Sorted(maps.Keys(known)))
			if key == "" && k == "mcpServers" {
				// An mcp.json given as the configuration file.
				hint = " (an mcp.json: name it with mcp = \"FILE\" in the configuration, or pass it with --mcp)"
			}
			w.errorf(w.origin(append(raw, k)), key, "unknown key %q%s", k, hint)
			continue
		}
		if m[k] == nil {
			continue
		}
		if x, ok := w.value(m[k], f.Type, f.Tag, sub(key, k), append(raw, k)); ok {
			out[k] = x
		}
	}
	return out
}

// A structField is a field with the struct type that declares it (an
// embedded one, for a field of a ",squash" field).
type structField struct {
	reflect.StructField
	owner reflect.Type
}

// structFields are the fields of t by koanf tag, those of its ",squash"
// fields included.
func structFields(t reflect.Type) map[string]structField {
	out := map[string]structField{}
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("koanf"), ",")
		switch {
		case opts == "squash":
			maps.Copy(out, structFields(f.Type))
		case name != "" && name != "-":
			out[name] = structField{f, t}
		}
	}
	return out
}

// json checks a value that may hold any JSON: numbers must be finite.
func (w *walker) json(v any, key string, raw []string) (any, bool) {
	o := w.origin(raw)
	w.set[key] = o
	switch v := v.(type) {
	case map[string]any:
		out, ok := make(map[string]any, len(v)), true
		for _, k := range slices.Sorted(maps.Keys(v)) {
			var itemOK bool
			out[k], itemOK = w.json(v[k], sub(key, k), append(raw, k))
			ok = ok && itemOK
		}
		w.duplicates(o, key, raw)
		return out, ok
	case []any:
		out, ok := make([]any, len(v)), true
		for i, item := range v {
			var itemOK bool
			out[i], itemOK = w.json(item, index(key, i), append(raw, rawIndex(i)))
			ok = ok && itemOK
		}
		return out, ok
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			w.errorf(o, key, "must be a finite number, got %v", v)
			return nil, false
		}
	case int:
		return int64(v), true
	}
	return v, true
}

// path resolves a relative path of the file against its directory, for the
// fields tagged file:"path" (and file:"command": only with a slash, since
// without one it is a name looked up in PATH or the plugin directories).
func (w *walker) path(s string, tag reflect.StructTag, o origin, key string) (any, bool) {
	kind := tag.Get("file")
	if kind == "" || w.dir == "" || s == "" || kind == "command" && !strings.Contains(s, "/") {
		return s, true
	}
	if strings.HasPrefix(s, "~") {
		w.errorf(o, key, "%q: ~ is not expanded, write the full path", s)
		return nil, false
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(w.dir, s)
	}
	return s, true
}

// duplicates reports the keys the file repeats in the object at raw.
func (w *walker) duplicates(o origin, key string, raw []string) {
	for _, d := range w.dups[rawKey(raw)] {
		w.errs = append(w.errs, &Error{File: o.file, Line: d.line, Key: key,
			Msg: fmt.Sprintf("duplicate key %q (first on line %d)", d.key, d.first)})
	}
}

func (w *walker) errorf(o origin, key, format string, args ...any) {
	w.errs = append(w.errs, o.error(key, fmt.Sprintf(format, args...)))
}

// suggest is ` (did you mean "x"?)` for the known key closest to k, when
// one is at most 2 edits away.
func suggest(k string, known []string) string {
	best, dist := "", 3
	for _, c := range known {
		if n := levenshtein.Distance(k, c, nil); n < dist {
			best, dist = c, n
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// whole reads a whole number: int64 from a file, any int from a flag.
func whole(v any) (int, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i := rv.Int()
		return int(i), i >= math.MinInt && i <= math.MaxInt
	}
	return 0, false
}

// duration reads seconds (a number) or a Go duration string, 0 or more. A
// tiny positive number of seconds is at least 1ns: only 0 is zero.
func duration(v any) (time.Duration, bool) {
	const maxSeconds = math.MaxInt64 / int64(time.Second)
	switch v := v.(type) {
	case time.Duration:
		return v, v >= 0
	case float64:
		if v == 0 {
			return 0, true
		}
		if v > 0 && v <= float64(maxSeconds) { // false for NaN
			return max(time.Duration(math.Round(v*float64(time.Second))), 1), true
		}
	case string:
		if t, err := time.ParseDuration(v); err == nil && t >= 0 {
			return t, true
		}
	default:
		if s, ok := whole(v); ok && s >= 0 && int64(s) <= maxSeconds {
			return time.Duration(s) * time.Second, true
		}
	}
	return 0, false
}

// describeType says what a value of type t must be, for an error.
func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int:
		return "a whole number"
	case reflect.Slice:
		return "a list"
	}
	return "an object"
}

// describeValue names a value for an error: `"lots"`, `12`, `a list`; a
// value as parsed, or as a node holds it.
func describeValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", v)
	case []any, []*node:
		return "a list"
	case map[string]any, []field:
		return "an object"
	default:
		return fmt.Sprint(v)
	}
}
