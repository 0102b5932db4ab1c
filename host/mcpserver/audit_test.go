package mcpserver

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/audit"
)

// Over HTTP, every session has a sandbox of its own, and they append to
// one audit log: each execution and tool call is recorded with its MCP
// session's id, whole lines only.
func TestAuditSessions(t *testing.T) {
	t.Parallel()
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	srv := newServer(t, Options{
		Settings: with(func(s *Settings) { s.PoolSize = 2 }),
		Config:   host.Config{Context: map[string]any{"calc": calc{}}, AuditLog: logPath},
	})
	url := startHTTP(t, srv)
	ids := map[string]bool{}
	for range 2 {
		c, _ := newClient(nil)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		if cs.ID() == "" {
			t.Fatal("no MCP session id")
		}
		ids[cs.ID()] = true
		if got := value(t, cs, "calc.add(a=1, b=2) + calc.mul(a=2, b=3)"); got != 9.0 {
			t.Errorf("result %v", got)
		}
		cs.Close()
	}

	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	calls, execs := map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var line struct {
			audit.ToolCall
			ToolCalls int `json:"tool_calls"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("not a JSON line: %s", sc.Text())
		}
		if !ids[line.Session] || line.ExecutionID == "" {
			t.Errorf("a line without its MCP session or execution: %s", sc.Text())
		}
		switch line.Type {
		case "tool_call":
			if line.Bridge != "calc" || line.Outcome != "ok" {
				t.Errorf("tool call: %s", sc.Text())
			}
			calls[line.Session]++
		case "execution":
			if line.ToolCalls == 2 {
				execs[line.Session]++
			}
		}
	}
	for id := range ids {
		if calls[id] != 2 || execs[id] != 1 {
			t.Errorf("session %s: %d tool calls, %d executions with 2 calls; want 2 and 1", id, calls[id], execs[id])
		}
	}
}
