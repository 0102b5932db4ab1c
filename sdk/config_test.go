package sdk_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/sdk"
)

type serverCfg struct {
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

type testCfg struct {
	Command string            `json:"command" default:"bash"`
	Timeout sdk.Duration      `json:"timeout" default:"60s"`
	Retries int               `json:"retries" default:"3"`
	Verbose bool              `json:"verbose"`
	Env     map[string]string `json:"env"`
	Servers []serverCfg       `json:"servers"`
	Nested  *struct {
		Depth int `json:"depth" default:"2"`
	} `json:"nested"`
	APIKey sdk.Secret `json:"api_key"`
	sdk.TokenConfig
}

func decode(t *testing.T, raw string) (testCfg, *sdk.ConfigureRequest, error) {
	t.Helper()
	req := &sdk.ConfigureRequest{Config: json.RawMessage(raw)}
	c, err := sdk.DecodeConfig[testCfg](req)
	return c, req, err
}

func TestDecodeConfig(t *testing.T) {
	t.Setenv("SDK_TEST_TOKEN", "from-the-env-7f3a")
	t.Setenv("SDK_TEST_EMPTY", "")
	for name, tc := range map[string]struct {
		raw string
		// want is checked when err is empty.
		want    func(c testCfg) bool
		secrets []string
		err     sdk.ConfigError
	}{
		"defaults": {raw: `{}`, want: func(c testCfg) bool {
			return c.Command == "bash" && c.Timeout.D() == time.Minute && c.Retries == 3 && c.Nested == nil
		}},
		"absent block": {raw: ``, want: func(c testCfg) bool { return c.Command == "bash" }},
		"null is absent": {raw: `{"command": null, "timeout": null}`, want: func(c testCfg) bool {
			return c.Command == "bash" && c.Timeout.D() == time.Minute
		}},
		"values": {raw: `{"command": "sh -e", "timeout": 1.5, "retries": 0, "nested": {}, "env": {"A": "b"}}`, want: func(c testCfg) bool {
			return c.Command == "sh -e" && c.Timeout.D() == 1500*time.Millisecond && c.Retries == 0 && c.Nested.Depth == 2 && c.Env["A"] == "b"
		}},
		"duration string":     {raw: `{"timeout": "2m"}`, want: func(c testCfg) bool { return c.Timeout.D() == 2*time.Minute }},
		"seconds in a string": {raw: `{"timeout": "30"}`, want: func(c testCfg) bool { return c.Timeout.D() == 30*time.Second }},
		"secrets reported": {raw: `{"api_key": "k-1234567", "token": "t-7654321"}`, secrets: []string{"k-1234567", "t-7654321"},
			want: func(c testCfg) bool { return c.APIKey.Value() == "k-1234567" && c.Token.Value() == "t-7654321" }},
		"token_env": {raw: `{"token_env": "SDK_TEST_TOKEN"}`, secrets: []string{"from-the-env-7f3a"},
			want: func(c testCfg) bool { return c.Token.Value() == "from-the-env-7f3a" }},

		"unknown key, close":  {raw: `{"comand": "x"}`, err: sdk.ConfigError{Key: "comand", Message: `unknown key (did you mean "command"?)`}},
		"unknown key, far":    {raw: `{"zzz": 1}`, err: sdk.ConfigError{Key: "zzz", Message: "unknown key (known keys: command, timeout, retries, verbose, env, servers, nested, api_key, token, token_env)"}},
		"unknown nested key":  {raw: `{"servers": [{"url": "x"}, {"ulr": "y"}]}`, err: sdk.ConfigError{Key: "servers[1].ulr", Message: `unknown key (did you mean "url"?)`}},
		"wrong type":          {raw: `{"retries": "many"}`, err: sdk.ConfigError{Key: "retries", Message: "expected integer, got string"}},
		"wrong type in a map": {raw: `{"servers": [{"headers": {"X-Key": 5}}]}`, err: sdk.ConfigError{Key: "servers[0].headers.X-Key", Message: "expected string, got number"}},
		"not an object":       {raw: `{"env": ["A=b"]}`, err: sdk.ConfigError{Key: "env", Message: "expected an object, got an array"}},
		"not a list":          {raw: `{"servers": {"url": "x"}}`, err: sdk.ConfigError{Key: "servers", Message: "expected a list, got an object"}},
		"block not an object": {raw: `[1]`, err: sdk.ConfigError{Message: "expected an object, got an array"}},
		"bad duration":        {raw: `{"timeout": "soon"}`, err: sdk.ConfigError{Key: "timeout", Message: `expected seconds (a number) or a duration such as "30s", got "soon"`}},
		"negative duration":   {raw: `{"timeout": -1}`, err: sdk.ConfigError{Key: "timeout", Message: "must not be negative, got -1"}},
		"secret not a string": {raw: `{"api_key": 5}`, err: sdk.ConfigError{Key: "api_key", Message: "expected string, got number"}},
		"token and token_env": {raw: `{"token": "x", "token_env": "SDK_TEST_TOKEN"}`, err: sdk.ConfigError{Key: "token_env", Message: "set token or token_env, not both"}},
		"token_env empty": {raw: `{"token_env": "SDK_TEST_EMPTY"}`, err: sdk.ConfigError{Key: "token_env",
			Message: "the environment variable SDK_TEST_EMPTY is empty or not passed to the bridge (list it in the bridge's env = [...])"}},
	} {
		t.Run(name, func(t *testing.T) {
			c, req, err := decode(t, tc.raw)
			if tc.err != (sdk.ConfigError{}) {
				var ce *sdk.ConfigError
				if !errors.As(err, &ce) {
					t.Fatalf("DecodeConfig = %v (%T), want a *sdk.ConfigError", err, err)
				}
				if diff := cmp.Diff(tc.err, *ce); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(c) {
				t.Errorf("decoded %+v", c)
			}
			if got := req.Secrets(); !slices.Equal(got, tc.secrets) {
				t.Errorf("secrets reported = %q, want %q", got, tc.secrets)
			}
		})
	}
}

// A Secret never shows its value: not printed, not logged, not encoded.
func TestSecretNeverShown(t *testing.T) {
	t.Parallel()
	type holder struct {
		Token sdk.Secret
		other sdk.Secret
	}
	s := sdk.NewSecret("hunter2-shhh")
	h := holder{Token: s, other: s}
	j, _ := json.Marshal(h)
	for _, shown := range []string{
		fmt.Sprint(s), fmt.Sprintf("%v %s %q %+v %#v %x", s, s, s, s, s, s),
		fmt.Sprintf("%v %+v %#v", h, h, h), fmt.Sprintf("%v", &h), string(j),
	} {
		if contains(shown, "hunter2") || contains(shown, fmt.Sprintf("%x", "hunter2")) {
			t.Errorf("the secret shows: %s", shown)
		}
	}
	if s.Value() != "hunter2-shhh" || !s.Equal(sdk.NewSecret("hunter2-shhh")) || sdk.NewSecret("").String() != "" {
		t.Errorf("Value/Equal/String of an empty secret")
	}
}

func contains(s, sub string) bool { return len(sub) > 0 && len(s) >= len(sub) && indexOf(s, sub) >= 0 }

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// LookPath takes the first executable regular file of the absolute
// directories of a PATH: not a directory, not a file without an execute
// bit, not a relative entry.
func TestLookPath(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root) // the relative entry "rel" would find rel/tool
	for dir, mode := range map[string]os.FileMode{"rel": 0o755, "plain": 0o644, "exe": 0o755, "later": 0o755} {
		os.MkdirAll(filepath.Join(root, dir), 0o755)
		os.WriteFile(filepath.Join(root, dir, "tool"), nil, mode)
	}
	os.MkdirAll(filepath.Join(root, "isdir", "tool"), 0o755)
	path := strings.Join([]string{"", "rel", filepath.Join(root, "missing"), filepath.Join(root, "isdir"),
		filepath.Join(root, "plain"), filepath.Join(root, "exe"), filepath.Join(root, "later")}, ":")
	if got, want := sdk.LookPath("tool", path), filepath.Join(root, "exe", "tool"); got != want {
		t.Errorf("LookPath(tool) = %q, want %q", got, want)
	}
	if got := sdk.LookPath("tool", "rel:"+filepath.Join(root, "plain")); got != "" {
		t.Errorf("LookPath found %q in a relative or non-executable entry", got)
	}
	if got := sdk.LookPath("sh", sdk.DefaultPath); !filepath.IsAbs(got) {
		t.Errorf("LookPath(sh, DefaultPath) = %q", got)
	}
}
