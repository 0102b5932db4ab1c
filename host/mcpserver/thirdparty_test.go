package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
)

// tsClient returns the command that runs the third-party client of
// tests/fixtures/mcpclient (the MCP TypeScript SDK, pinned there; `npm ci`
// installs it). Without node or the installed fixture the test is skipped,
// or fails under $PARSELBOX_REQUIRE_RUNTIME (make test).
func tsClient(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	dir := filepath.Join(testenv.ModuleRoot(t), "tests", "fixtures", "mcpclient")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	}
	if err != nil {
		if os.Getenv(testenv.RequireEnv) != "" {
			t.Fatalf("the third-party MCP client is required (cd %s && npm ci): %v", dir, err)
		}
		t.Skipf("no third-party MCP client (cd %s && npm ci): %v", dir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "client.mjs")}, args...)...)
	cmd.Dir = dir
	return cmd
}

// tsResult is what client.mjs prints.
type tsResult struct {
	Server struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"server"`
	Instructions string `json:"instructions"`
	Tools        []struct {
		Name     string   `json:"name"`
		Required []string `json:"required"`
	} `json:"tools"`
	First, State, Raised, File, Approved, Declined tsCall
	ListChanged                                    int `json:"listChanged"`
	Resources                                      []struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
	} `json:"resources"`
	Read struct {
		Text     string `json:"text"`
		MIMEType string `json:"mimeType"`
	} `json:"read"`
	Elicitations   []string     `json:"elicitations"`
	Progress       []liveReport `json:"progress"`
	ProgressResult string       `json:"progressResult"`
}

type tsCall struct {
	IsError    bool           `json:"isError"`
	Text       string         `json:"text"`
	Structured map[string]any `json:"structured"`
}

func runTS(t *testing.T, cmd *exec.Cmd) tsResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	var r tsResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("client.mjs printed no JSON: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	return r
}

// checkTS checks the scenario of client.mjs.
func checkTS(t *testing.T, r tsResult, calc bool) {
	t.Helper()
	if r.Server.Name != "Parselbox" || !strings.Contains(r.Instructions, "sbx.info()") {
		t.Errorf("server %+v, instructions %q", r.Server, r.Instructions)
	}
	if len(r.Tools) != 1 || r.Tools[0].Name != "execute_code" || !cmp.Equal(r.Tools[0].Required, []string{"code"}) {
		t.Errorf("tools: %+v", r.Tools)
	}
	if r.First.IsError || r.First.Text != `{"result":42}` || r.First.Structured != nil {
		t.Errorf("first call: %+v", r.First)
	}
	if r.State.Text != `{"result":41}` {
		t.Errorf("state: %+v", r.State)
	}
	if !r.Raised.IsError || !strings.Contains(r.Raised.Text, "ZeroDivisionError") {
		t.Errorf("raised: %+v", r.Raised)
	}
	if !strings.Contains(r.File.Text, `"files":["/workspace/hello.txt"]`) {
		t.Errorf("file: %+v", r.File)
	}
	if r.ListChanged == 0 {
		t.Error("no resources/list_changed notification")
	}
	// The written file, and the MCP Apps renderer that every session lists.
	if len(r.Resources) != 2 || r.Resources[0].URI != "file:///workspace/hello.txt" || r.Resources[0].MIMEType != "text/plain" ||
		!strings.HasPrefix(r.Resources[1].URI, "ui://parselbox/renderer-") || r.Resources[1].MIMEType != "text/html;profile=mcp-app" {
		t.Errorf("resources: %+v", r.Resources)
	}
	if r.Read.Text != "hi from ts" {
		t.Errorf("read: %+v", r.Read)
	}
	// The result arrived after the progress (every notification was on
	// the wire before it; client.mjs records them off the transport).
	if r.ProgressResult != `{"result":"done"}` {
		t.Errorf("result of the progress call: %q", r.ProgressResult)
	}
	checkLive(t, r.Progress)
	if !calc {
		return
	}
	if r.Approved.Text != `{"result":3}` {
		t.Errorf("approved call: %+v", r.Approved)
	}
	if !r.Declined.IsError || !strings.Contains(r.Declined.Text, "PermissionError: Denied") {
		t.Errorf("declined call: %+v", r.Declined)
	}
	if len(r.Elicitations) != 3 || !strings.Contains(r.Elicitations[0], "calc.add") || !strings.Contains(r.Elicitations[2], "work.steps") {
		t.Errorf("elicitations: %q", r.Elicitations)
	}
}

// The MCP TypeScript SDK's client against the server over stdio (the
// test binary as a subprocess) and over streamable HTTP with a token.
func TestThirdPartyClient(t *testing.T) {
	t.Parallel()
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		cmd := tsClient(t, "stdio", exe)
		cmd.Env = append(os.Environ(), helperEnv+"=1", "MCP_CALC=1",
			"PARSELBOX_RUNTIME="+testenv.Runtime(t).Dir, "PARSELBOX_TEST_CACHE="+testenv.CacheDir(t))
		checkTS(t, runTS(t, cmd), true)
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		cmd := tsClient(t) // skips before a server starts
		srv := newServer(t, Options{
			Settings: with(func(s *Settings) { s.AuthToken, s.Elicit = "ts-token-0123456789", true }),
			Config:   host.Config{Context: map[string]any{"calc": calc{}, "work": work{}}},
		})
		url := startHTTP(t, srv)
		cmd.Args = append(cmd.Args, "http", url)
		cmd.Env = append(os.Environ(), "MCP_TOKEN=ts-token-0123456789", "MCP_CALC=1")
		checkTS(t, runTS(t, cmd), true)
	})
}
