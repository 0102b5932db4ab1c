package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/sdk"
)

// bridgeConfigError stands for the SDK's *sdk.ConfigError: a bridge's own
// finding in its config block, Key a dotted path inside the block.
type bridgeConfigError struct{ Key, Message string }

func (e *bridgeConfigError) Error() string     { return e.Key + ": " + e.Message }
func (e *bridgeConfigError) ConfigKey() string { return e.Key }

// namedBridgeError stands for a plugin manager's error that names its
// bridge with a method rather than in its text.
type namedBridgeError struct {
	name string
	err  error
}

func (e *namedBridgeError) Error() string      { return "invalid configuration: " + e.err.Error() }
func (e *namedBridgeError) Unwrap() error      { return e.err }
func (e *namedBridgeError) BridgeName() string { return e.name }

// TestLocate checks that problems found after loading (by host.New: the
// host's Validate, a bridge's own check of its config block) are placed in
// the file, and that other errors pass unchanged.
func TestLocate(t *testing.T) {
	t.Parallel()
	f, err := ParseFile("p.hcl", []byte(`memory = 512
bridge "api" {
  plugin = "http"
  config = {
    base_url = "https://example.com"
    retry = { delays = [1, -2] }
  }
}
`))
	if err != nil {
		t.Fatal(err)
	}
	other := errors.New("starting sandbox: deno died")
	tests := map[string]struct {
		err  error
		want string
	}{
		"manager's text": {
			fmt.Errorf("starting bridges: %w", fmt.Errorf("bridge %q: %w: %w", "api", errors.New("invalid configuration"),
				&bridgeConfigError{Key: "retry.delays.1", Message: "must be positive"})),
			`bridge "api": p.hcl:6: config.retry.delays[1]: must be positive`,
		},
		"named by a method": {
			&host.ConfigError{Err: &namedBridgeError{"api", &bridgeConfigError{Key: "base_url", Message: "must use https"}}},
			`bridge "api": p.hcl:5: config.base_url: must use https`,
		},
		"the SDK's error, as the plugin manager wraps it": {
			fmt.Errorf("starting bridges: %w", fmt.Errorf("bridge %q: invalid configuration: %w", "api",
				&sdk.ConfigError{Key: "retry.delays[1]", Message: "must be positive"})),
			`bridge "api": p.hcl:6: config.retry.delays[1]: must be positive`,
		},
		"a key the file does not set": {
			fmt.Errorf("bridge %q: %w", "api", &bridgeConfigError{Key: "token", Message: "missing"}),
			`bridge "api": config.token: missing`,
		},
		"host's own check": {
			&host.ConfigError{Err: errors.Join(&host.KeyError{Key: "memory", Message: "too small"})},
			`p.hcl:1: memory: too small`,
		},
		"other": {other, other.Error()},
		"nil":   {nil, ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := f.Locate(tt.err)
			if tt.err == nil {
				if got != nil {
					t.Fatalf("Locate(nil) = %v", got)
				}
				return
			}
			if got.Error() != tt.want {
				t.Errorf("Locate:\n got %s\nwant %s", got, tt.want)
			}
			var ce *Error
			if strings.Contains(tt.want, "p.hcl:") && (!errors.As(got, &ce) || ce.File != "p.hcl" || ce.Line == 0) {
				t.Errorf("Locate: %#v is not a *config.Error in p.hcl", got)
			}
		})
	}
}
