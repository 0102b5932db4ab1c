package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultPath is the PATH of a process that a bridge starts when its
// configuration gives none: the host passes a bridge none of its own
// environment, so neither does the bridge to its children.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// LookPath finds the executable name (without a slash) in path, the PATH
// of the process that the bridge starts (DefaultPath unless its
// configuration sets one), not in the bridge's own. It returns the first
// executable regular file; "" when there is none. Empty and relative
// entries of path are skipped: they would depend on the working directory.
func LookPath(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// DecodeConfig decodes a bridge's configuration block (req.Config) into a
// C, strictly, and reports the secrets it holds to the host:
//
//   - every key must be a field of C (named by its `json` tag, matched
//     exactly), at any depth: an unknown key is an error that suggests the
//     key that was meant;
//   - a value must fit its field's type; a Duration takes seconds or "30s";
//   - a key that is absent or null leaves its field at its default: the
//     field's `default:"..."` tag (JSON, or the text itself for a string
//     field: `default:"60s"`, `default:"bash"`), else the zero value;
//   - an embedded TokenConfig reads token_env from the environment;
//   - every non-empty Secret is reported with req.AddSecrets, so that the
//     host keeps it out of everything the sandbox sees.
//
// Its errors are *ConfigError naming the offending key by its dotted path
// ("timeout", "headers.X-Api-Key", "servers[1].url"), so that the host can
// point at the line of the configuration file. A nil req decodes "{}" (the
// defaults). Checks that the types cannot express are the bridge's: it
// returns a *ConfigError itself.
func DecodeConfig[C any](req *ConfigureRequest) (C, error) {
	var c C
	var raw json.RawMessage
	if req != nil {
		raw = req.Config
	}
	v := reflect.ValueOf(&c).Elem()
	if err := decodeConfigValue(v, raw, ""); err != nil {
		return c, err
	}
	var secrets []string
	if err := finishConfig(v, "", &secrets); err != nil {
		return c, err
	}
	if req != nil {
		req.AddSecrets(secrets...)
	}
	return c, nil
}

// decodeConfigValue decodes raw into v, the value at key path.
func decodeConfigValue(v reflect.Value, raw json.RawMessage, path string) error {
	raw = bytes.TrimSpace(raw)
	absent := len(raw) == 0 || bytes.Equal(raw, []byte("null"))
	t := v.Type()
	if absent && (t.Kind() != reflect.Struct || opaque(t)) {
		return nil
	}
	if absent {
		raw = json.RawMessage(`{}`)
	}
	switch kind := t.Kind(); {
	case opaque(t):
		// It decodes itself, below.
	case kind == reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		return decodeConfigValue(v.Elem(), raw, path)
	case kind == reflect.Struct:
		var obj map[string]json.RawMessage
		if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
			return &ConfigError{Key: path, Message: "expected an object, got " + kindOfJSON(raw)}
		}
		fs, err := fieldsOf(t)
		if err != nil {
			return &ConfigError{Key: path, Message: err.Error()}
		}
		names := fieldNames(fs)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if !slices.Contains(names, k) {
				return &ConfigError{Key: joinKey(path, k), Message: unknownKey(k, names)}
			}
		}
		for _, f := range fs {
			fv, err := fieldByIndex(v, f.index)
			if err != nil {
				return &ConfigError{Key: joinKey(path, f.name), Message: err.Error()}
			}
			val, ok := obj[f.name]
			if !ok || bytes.Equal(bytes.TrimSpace(val), []byte("null")) {
				val = f.def
			}
			if err := decodeConfigValue(fv, val, joinKey(path, f.name)); err != nil {
				return err
			}
		}
		return nil
	case kind == reflect.Map:
		var obj map[string]json.RawMessage
		if t.Key().Kind() != reflect.String || raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
			return &ConfigError{Key: path, Message: "expected an object, got " + kindOfJSON(raw)}
		}
		m := reflect.MakeMapWithSize(t, len(obj))
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			ev := reflect.New(t.Elem()).Elem()
			if err := decodeConfigValue(ev, obj[k], joinKey(path, k)); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), ev)
		}
		v.Set(m)
		return nil
	case kind == reflect.Slice && t.Elem().Kind() != reflect.Uint8: // []byte is a base64 string, below
		var list []json.RawMessage
		if raw[0] != '[' || json.Unmarshal(raw, &list) != nil {
			return &ConfigError{Key: path, Message: "expected a list, got " + kindOfJSON(raw)}
		}
		s := reflect.MakeSlice(t, len(list), len(list))
		for i, e := range list {
			if err := decodeConfigValue(s.Index(i), e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	}
	if err := json.Unmarshal(raw, v.Addr().Interface()); err != nil {
		return &ConfigError{Key: path, Message: jsonMessage(err)}
	}
	return nil
}

// finishConfig resolves the TokenConfigs in v and collects its Secrets.
func finishConfig(v reflect.Value, path string, secrets *[]string) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return finishConfig(v.Elem(), path, secrets)
		}
	case reflect.Struct:
		switch v.Type() {
		case reflect.TypeFor[Secret]():
			if s := v.Interface().(Secret); !s.IsZero() {
				*secrets = append(*secrets, s.Value())
			}
			return nil
		case reflect.TypeFor[TokenConfig]():
			if v.CanAddr() {
				if err := v.Addr().Interface().(*TokenConfig).resolve(path); err != nil {
					return err
				}
			}
		}
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			p := path
			if !f.Anonymous {
				name, _, ok := jsonName(f)
				if !ok {
					continue
				}
				p = joinKey(path, name)
			}
			if err := finishConfig(v.Field(i), p, secrets); err != nil {
				return err
			}
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			if err := finishConfig(v.MapIndex(k), joinKey(path, fmt.Sprint(k.Interface())), secrets); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := finishConfig(v.Index(i), fmt.Sprintf("%s[%d]", path, i), secrets); err != nil {
				return err
			}
		}
	}
	return nil
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonMessage rewrites an encoding/json error about one value in the
// words of JSON Schema ("expected integer, got string").
func jsonMessage(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("expected %s, got %s", jsonType(te.Type), gotValue(te.Value))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// kindOfJSON names the JSON type of raw ("a string", "a number").
func kindOfJSON(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "something that is not JSON"
	}
	return jsonKind(v)
}

// unknownKey is the message for a key that is none of names: the key that
// was meant, when one is close, else the keys there are.
func unknownKey(key string, names []string) string {
	if best := closest(key, names); best != "" {
		return fmt.Sprintf("unknown key (did you mean %q?)", best)
	}
	if len(names) == 0 {
		return "unknown key (this block takes no keys)"
	}
	return fmt.Sprintf("unknown key (known keys: %s)", strings.Join(names, ", "))
}

// closest returns the name that s is most likely a misspelling of: the one
// at the smallest edit distance (case aside), if that is small for its
// length; "" if none is.
func closest(s string, names []string) string {
	best, bestD := "", 0
	for _, n := range names {
		d := editDistance(strings.ToLower(s), strings.ToLower(n))
		limit := max(1, min(len(s), len(n))/3)
		if d <= limit && (best == "" || d < bestD) {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the edit distance between a and b, in bytes, counting a
// swap of two neighbours as one edit ("ulr" for "url"): the optimal string
// alignment distance.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// Duration is a length of time in a configuration or in a tool's
// arguments: a number of seconds (30, 1.5) or a Go duration string ("30s",
// "2m"). It must not be negative. It is encoded as a duration string.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON encodes d as a duration string ("1m30s").
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON decodes seconds or a duration string; null leaves d as it
// is.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var secs float64
	switch v := v.(type) {
	case nil:
		return nil
	case float64:
		secs = v
	case string:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			secs = f
			break
		}
		p, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf(`expected seconds (a number) or a duration such as "30s", got %q`, v)
		}
		secs = p.Seconds()
	default:
		return fmt.Errorf(`expected seconds (a number) or a duration such as "30s", got %s`, jsonKind(v))
	}
	if secs < 0 {
		return fmt.Errorf("must not be negative, got %s", bytes.TrimSpace(b))
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// Secret is a credential: in a bridge's configuration (a token, an API
// key), or anywhere a bridge holds one. It never shows its value: it
// prints, logs and encodes as "[REDACTED]" (or "" when empty), also inside
// a struct printed with %+v. DecodeConfig reports every Secret it decodes to
// the host, which removes its value, in its common encodings too, from
// everything the bridge sends to the sandbox. Value returns it, for the
// request that needs it.
type Secret struct {
	v *string // a pointer, so that fmt prints an address, not the value, inside structs
}

// NewSecret returns a Secret holding value.
func NewSecret(value string) Secret {
	if value == "" {
		return Secret{}
	}
	return Secret{v: &value}
}

// Value returns the secret's value.
func (s Secret) Value() string {
	if s.v == nil {
		return ""
	}
	return *s.v
}

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.v == nil || *s.v == "" }

// Equal reports whether two secrets hold the same value.
func (s Secret) Equal(o Secret) bool { return s.Value() == o.Value() }

// String returns Redacted, or "" for an empty secret.
func (s Secret) String() string {
	if s.IsZero() {
		return ""
	}
	return Redacted
}

// GoString is String, for %#v.
func (s Secret) GoString() string { return "sdk.Secret(" + strconv.Quote(s.String()) + ")" }

// Format prints String whatever the verb.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = f.Write([]byte(s.GoString()))
		return
	}
	_, _ = f.Write([]byte(s.String()))
}

// MarshalJSON encodes the secret as "[REDACTED]" (or "" when empty), never
// its value.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON decodes a JSON string; null leaves the secret empty.
func (s *Secret) UnmarshalJSON(b []byte) error {
	var v string // null leaves it ""
	if err := json.Unmarshal(b, &v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("expected string, got %s", gotValue(te.Value))
		}
		return err
	}
	*s = NewSecret(v)
	return nil
}

// TokenConfig is the pair of configuration keys that give a bridge its
// credential: "token", the value itself, or "token_env", the name of an
// environment variable that holds it (the variable must be one that the
// host passes to the bridge: the bridge's `env = [...]`). Embed it in a
// configuration struct that DecodeConfig decodes:
//
//	type config struct {
//		BaseURL string `json:"base_url"`
//		sdk.TokenConfig
//	}
//
// After DecodeConfig, Token holds the credential from either key, and has
// been reported to the host as a secret. Giving both keys, or a variable
// that is empty, is a *ConfigError.
type TokenConfig struct {
	Token    Secret `json:"token"`
	TokenEnv string `json:"token_env"`
}

// resolve reads token_env; path is where the keys are.
func (tc *TokenConfig) resolve(path string) error {
	if tc.TokenEnv == "" {
		return nil
	}
	if !tc.Token.IsZero() {
		return &ConfigError{Key: joinKey(path, "token_env"), Message: "set token or token_env, not both"}
	}
	v := os.Getenv(tc.TokenEnv)
	if v == "" {
		return &ConfigError{Key: joinKey(path, "token_env"), Message: fmt.Sprintf(
			"the environment variable %s is empty or not passed to the bridge (list it in the bridge's env = [...])", tc.TokenEnv)}
	}
	tc.Token = NewSecret(v)
	return nil
}
