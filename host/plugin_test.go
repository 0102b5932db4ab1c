package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
	"github.com/parselbox/parselbox/sdk"
)

// The test binary doubles as a bridge plugin: started by the host's plugin
// manager (which sets go-plugin's magic cookie), it serves pluginBridge.
func TestMain(m *testing.M) {
	if os.Getenv(sdk.Handshake.MagicCookieKey) != "" {
		sdk.Serve(pluginBridge())
		return
	}
	os.Setenv("PARSELBOX_TEST_PLUGIN_SECRET", "s3cret")
	os.Setenv("PARSELBOX_TEST_ALLOWED", "fine")
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

type pluginConfig struct {
	// Marker is a file the bridge writes when a call sees its cancellation.
	Marker string `json:"marker"`
	Label  string `json:"label"`
}

func pluginBridge() *sdk.Bridge {
	var cfg pluginConfig
	b := sdk.NewBridge(&sdk.Info{Name: "testplugin", Version: "v0", Description: "A bridge in a test binary."}, &sdk.Options{
		Configure: func(_ context.Context, req *sdk.ConfigureRequest) error {
			return json.Unmarshal(req.Config, &cfg)
		},
	})
	type textIn struct {
		Text  string `json:"text"`
		Times int    `json:"times,omitempty"`
	}
	sdk.AddTool(b, &sdk.Tool{Name: "echo", Description: "Repeats text."}, func(_ context.Context, _ *sdk.CallToolRequest, in textIn) (string, error) {
		return strings.Repeat(in.Text, max(in.Times, 1)), nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "files.label", Description: "The configured label."}, func(context.Context, *sdk.CallToolRequest, struct{}) (string, error) {
		return cfg.Label, nil
	})
	type envIn struct {
		Name string `json:"name"`
	}
	sdk.AddTool(b, &sdk.Tool{Name: "getenv"}, func(_ context.Context, _ *sdk.CallToolRequest, in envIn) (string, error) {
		return os.Getenv(in.Name), nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "crash", Description: "Dies mid-call."}, func(context.Context, *sdk.CallToolRequest, struct{}) (string, error) {
		os.Exit(3)
		return "", nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "pid"}, func(context.Context, *sdk.CallToolRequest, struct{}) (int, error) {
		return os.Getpid(), nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "wait", Description: "Logs, then waits to be cancelled."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (string, error) {
		req.Log("waiting")
		<-ctx.Done()
		os.WriteFile(cfg.Marker, []byte("cancelled"), 0o644)
		return "", sdk.Errorf(sdk.CodeCancelled, "wait: cancelled")
	})
	return b
}

func newPluginSandbox(t *testing.T, hooks ...host.Hook) (*host.Sandbox, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "cancelled")
	sb := newSandbox(t, host.Config{
		Bridges: map[string]host.BridgeConfig{
			"tp": {Plugin: exe, Env: []string{"PARSELBOX_TEST_ALLOWED"}, Config: map[string]any{"marker": marker, "label": "from config"}},
		},
		Hooks: hooks,
	})
	return sb, marker
}

func TestPluginBridge(t *testing.T) {
	t.Parallel()
	sb, marker := newPluginSandbox(t)
	for _, tc := range []struct {
		code string
		want any
	}{
		{"tp.echo(text='hi')", "hi"},
		{"tp.echo('ab', 3)", "ababab"},
		{"tp.files.label()", "from config"},
		{"tp.getenv('PARSELBOX_TEST_ALLOWED')", "fine"},
		{"tp.getenv('PARSELBOX_TEST_PLUGIN_SECRET')", ""},
		{"tp.getenv('HOME')", ""},
	} {
		if diff := cmp.Diff(tc.want, value(t, exec(t, sb, tc.code))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.code, diff)
		}
	}
	e := raised(t, exec(t, sb, "tp.echo(text=5)"), "ValueError")
	if !strings.Contains(e.Message, "text") {
		t.Errorf("bad argument message: %s", e.Message)
	}
	raised(t, exec(t, sb, "tp.nope()"), "AttributeError")

	// Cancellation reaches the plugin.
	r := exec(t, sb, "t = tp.wait.task()\nawait asyncio.sleep(0.5)\nlog = t.tail(1)\nt.cancel()\nawait asyncio.sleep(0.3)\n[log, t.status().state]")
	if diff := cmp.Diff([]any{"waiting", "cancelled"}, value(t, r)); diff != "" {
		t.Errorf("task (-want +got):\n%s", diff)
	}
	waitUntil(t, "the plugin to see the cancellation", func() bool {
		b, _ := os.ReadFile(marker)
		return string(b) == "cancelled"
	})

	// A crash mid-call fails that call, naming the bridge; the next call
	// restarts the plugin.
	pid := value(t, exec(t, sb, "tp.pid()"))
	e = raised(t, exec(t, sb, "tp.crash()"), "ConnectionError")
	if !strings.Contains(e.Message, `bridge "tp"`) {
		t.Errorf("crash message does not name the bridge: %s", e.Message)
	}
	if got := value(t, exec(t, sb, "tp.echo('back')")); got != "back" {
		t.Errorf("after the crash: %v", got)
	}
	if got := value(t, exec(t, sb, "tp.pid()")); got == pid {
		t.Errorf("plugin not restarted (pid %v)", got)
	}
	// Discovery covers plugins like any namespace.
	found := value(t, exec(t, sb, "sbx.search('repeats')")).(map[string]any)
	if hits := found["tp (testplugin)"].([]any); len(hits) != 1 || hits[0].(map[string]any)["path"] != "tp.echo" {
		t.Errorf("search: %v", found)
	}
}

func TestPluginHookRefusal(t *testing.T) {
	t.Parallel()
	h := &recorder{refuse: "tp.echo"}
	sb, _ := newPluginSandbox(t, h)
	e := raised(t, exec(t, sb, "tp.echo('x')"), "PermissionError")
	if e.Message != "calls to tp.echo need approval" {
		t.Errorf("refusal: %q", e.Message)
	}
	if got := value(t, exec(t, sb, "tp.files.label()")); got != "from config" {
		t.Errorf("other tools still work: %v", got)
	}
}

func TestPluginConfigErrors(t *testing.T) {
	t.Parallel()
	exe, _ := os.Executable()
	for name, b := range map[string]host.BridgeConfig{
		"missing plugin": {Plugin: "no-such-plugin"},
		"bad sha256":     {Plugin: exe, SHA256: strings.Repeat("0", 64)},
	} {
		sb, err := host.New(t.Context(), host.Config{
			RuntimeDir: testenv.Runtime(t).Dir, Bridges: map[string]host.BridgeConfig{"b": b},
		})
		var ce *host.ConfigError
		if !errors.As(err, &ce) {
			t.Errorf("%s: want a ConfigError, got %v", name, err)
		}
		if sb != nil {
			sb.Close()
		}
	}
}
