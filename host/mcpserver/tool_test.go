package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
)

func newSandbox(t *testing.T) *host.Sandbox {
	t.Helper()
	o := testOptions(t, Options{})
	o.Config.Logger = o.Logger
	sb, err := host.New(t.Context(), o.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// Tool and ServeMCP over one existing sandbox: the two share its state.
func TestToolAndServeMCP(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	tool := NewTool(sb, &Options{Settings: with(func(s *Settings) { s.MaxOutputTokens = 50 })})
	if tool.Name != "execute_code" || !json.Valid(tool.InputSchema) || !strings.Contains(tool.Description, "sbx.help()") {
		t.Errorf("tool: %+v", tool)
	}
	resp, err := tool.Call(t.Context(), json.RawMessage(`{"code": "shared = 20\nshared * 2"}`))
	if err != nil || string(resp.Result) != "40" || resp.IsError() {
		t.Fatalf("Call: %+v, %v", resp, err)
	}
	resp, _ = tool.Call(t.Context(), json.RawMessage(`{"code": "list(range(1000))"}`))
	if !strings.Contains(resp.Note, "sbx.preview()") {
		t.Errorf("truncation: %+v", resp)
	}
	resp, _ = tool.Call(t.Context(), json.RawMessage(`{"code": "1/0"}`))
	if !resp.IsError() || !strings.Contains(resp.Error, "ZeroDivisionError") {
		t.Errorf("raised: %+v", resp)
	}
	if _, err := tool.Call(t.Context(), json.RawMessage(`{"source": "1"}`)); err == nil {
		t.Error("bad arguments accepted")
	}

	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeMCP(ctx, sb, st, &Options{Version: "embedded"}) }()
	c, _ := newClient(nil)
	cs, err := c.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cs.InitializeResult().Instructions != sb.Prompt() || cs.InitializeResult().ServerInfo.Version != "embedded" {
		t.Errorf("initialize: %+v", cs.InitializeResult())
	}
	if got := value(t, cs, "shared"); got != 20.0 {
		t.Errorf("state shared with the tool: %v", got)
	}
	cs.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeMCP after the client left: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("ServeMCP did not return when the client left")
	}
	cancel()
	// The sandbox stays open.
	if r, err := sb.Execute(t.Context(), "shared"); err != nil || string(r.Output) != "20" {
		t.Errorf("sandbox after ServeMCP: %v", err)
	}
}

// A real subprocess over stdio (the test binary, serving as TestMain says),
// through the go-sdk's CommandTransport: protocol on stdout only, state,
// approvals, and a clean exit when the client closes stdin.
func TestStdioSubprocess(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testenv.SyncBuffer
	for _, protocol := range []string{"", "2025-11-25"} {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), helperEnv+"=1",
			"PARSELBOX_RUNTIME="+testenv.Runtime(t).Dir, "PARSELBOX_TEST_CACHE="+testenv.CacheDir(t))
		cmd.Stderr = &stderr
		c, rec := newClient(answer)
		// Closing waits for the process to exit on its own; a deadline, not
		// a measure (its default, 5 s, is too short for a loaded machine).
		cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Minute},
			&mcp.ClientSessionOptions{ProtocolVersion: protocol})
		if err != nil {
			t.Fatalf("protocol %q: %v\nstderr: %s", protocol, err, stderr.String())
		}
		if !strings.Contains(cs.InitializeResult().Instructions, "sbx.info()") {
			t.Errorf("instructions: %q", cs.InitializeResult().Instructions)
		}
		value(t, cs, "n = 1")
		if got := value(t, cs, "n + calc.add(a=1, b=1)"); got != 3.0 {
			t.Errorf("protocol %q: %v", protocol, got)
		}
		if r := run(t, cs, "calc.sub(a=1, b=1)"); !strings.Contains(r.Error, "PermissionError") {
			t.Errorf("protocol %q: declined call: %+v", protocol, r)
		}
		if len(rec.elicited()) != 2 {
			t.Errorf("protocol %q: elicitations %q", protocol, rec.elicited())
		}
		if err := cs.Close(); err != nil {
			t.Errorf("protocol %q: closing: %v", protocol, err)
		}
		// Closing waited for the process.
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
			t.Errorf("protocol %q: exit status %v\nstderr: %s", protocol, cmd.ProcessState, stderr.String())
		}
	}
}
