package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// TestMain serves the bridge when a test below starts this test binary as a
// plugin (sdktest.Start sets the handshake's cookie in its environment).
func TestMain(m *testing.M) {
	if os.Getenv(sdk.Handshake.MagicCookieKey) != "" {
		main()
		return
	}
	os.Exit(m.Run())
}

// start runs this test binary as the bridge's plugin process.
func start(t *testing.T) *sdktest.Client {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return sdktest.Start(t, exec.Command(exe))
}

func TestGreet(t *testing.T) {
	t.Parallel()
	for name, b := range map[string]sdk.BridgeServer{
		"subprocess": start(t),
		"in-process": sdktest.NewHarness(t, newBridge()),
	} {
		t.Run(name, func(t *testing.T) {
			res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "greet", Arguments: []byte(`{"name":"ada"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || string(res.Content) != `"hello, ada"` {
				t.Fatalf("greet = %s (error %+v), want \"hello, ada\"", res.Content, res.Error)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	d, err := start(t).Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range d.Tools {
		names = append(names, tool.Name)
		if tool.Name == "slow" && !slices.Equal(tool.Params, []string{"seconds"}) {
			t.Errorf("params of slow = %v", tool.Params)
		}
	}
	if d.Name != "greeter" || !slices.Equal(names, []string{"greet", "slow"}) {
		t.Errorf("Describe = %s %v", d.Name, names)
	}
}

func TestSlowLogsTicksAndMessages(t *testing.T) {
	t.Parallel()
	b := start(t)
	inbox := make(chan json.RawMessage, 2)
	inbox <- json.RawMessage(`"first"`)
	inbox <- json.RawMessage(`{"n":2}`)
	rec := &sdktest.Recorder{}
	res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{
		Name: "slow", Arguments: []byte(`{"seconds":2}`), Events: rec, Inbox: inbox,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || string(res.Content) != `{"ticks":2}` {
		t.Fatalf("slow = %s (error %+v)", res.Content, res.Error)
	}
	// Messages arrive in order; both are in before the first tick.
	want := []string{"got: first", `got: {"n":2}`, "tick 1", "tick 2"}
	if got := rec.Lines(); !slices.Equal(got, want) {
		t.Errorf("log = %q, want %q", got, want)
	}
	if p := rec.ProgressReports(); len(p) != 2 || p[1].Progress != 2 || p[1].Total != 2 {
		t.Errorf("progress = %v", p)
	}
}

func TestSlowStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	b := start(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rec := &sdktest.Recorder{}
	done := make(chan struct{})
	var res *sdk.CallToolResult
	var err error
	go func() {
		defer close(done)
		res, err = b.CallTool(ctx, &sdk.CallToolRequest{Name: "slow", Arguments: []byte(`{"seconds":3600}`), Events: rec})
	}()
	if !rec.WaitFor("tick 1", done) {
		t.Fatalf("the call ended before its first tick: %+v, %v", res, err)
	}
	cancel()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	// The message is the tool's own: the cancel reached it.
	if !res.IsError || res.Error.Code != sdk.CodeCancelled || res.Error.Message != "slow: cancelled after 1 ticks" {
		t.Fatalf("cancelled slow = %+v", res.Error)
	}
}

// The configuration's greeting, and its default; an unknown key is an
// error naming it.
func TestConfigure(t *testing.T) {
	t.Parallel()
	b := start(t)
	if err := b.Configure(t.Context(), &sdk.ConfigureRequest{Config: []byte(`{"greeting": "hi"}`)}); err != nil {
		t.Fatal(err)
	}
	res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "greet", Arguments: []byte(`{"name":"ada"}`)})
	if err != nil || string(res.Content) != `"hi, ada"` {
		t.Errorf("greet = %s, %v", res.Content, err)
	}
	err = b.Configure(t.Context(), &sdk.ConfigureRequest{Config: []byte(`{"greetings": "hi"}`)})
	var ce *sdk.ConfigError
	if !errors.As(err, &ce) || ce.Key != "greetings" || ce.Message != `unknown key (did you mean "greeting"?)` {
		t.Errorf("Configure with a misspelt key = %v", err)
	}
}

// slow's seconds has a default: it is in the schema.
func TestSlowDefault(t *testing.T) {
	t.Parallel()
	d, err := sdktest.NewHarness(t, newBridge()).Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range d.Tools {
		if tool.Name == "slow" && !strings.Contains(string(tool.InputSchema), `"default":10`) {
			t.Errorf("schema of slow = %s", tool.InputSchema)
		}
	}
}
