package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/inproc"
	"github.com/parselbox/parselbox/internal/testenv"
)

// helperEnv makes the test binary serve MCP over stdio (TestMain): the
// subprocess of the stdio tests.
const helperEnv = "PARSELBOX_MCPSERVER_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	os.Exit(m.Run())
}

// helperMain serves a sandbox with the calc namespace over stdio, asking
// for approvals.
func helperMain() int {
	srv, err := New(Options{
		Config: host.Config{
			RuntimeDir: os.Getenv("PARSELBOX_RUNTIME"),
			CacheDir:   os.Getenv("PARSELBOX_TEST_CACHE"),
			Context:    map[string]any{"calc": calc{}, "work": work{}},
		},
		Version:  "test",
		Settings: with(func(s *Settings) { s.Elicit = true }),
	})
	if err != nil {
		return 2
	}
	defer srv.Close()
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// calc is the namespace the sandbox's tool calls reach.
type calc struct{}

func (calc) Add(a, b int) int { return a + b }
func (calc) Sub(a, b int) int { return a - b }
func (calc) Mul(a, b int) int { return a * b }
func (calc) ParamNames() map[string][]string {
	return map[string][]string{"Add": {"a", "b"}, "Sub": {"a", "b"}, "Mul": {"a", "b"}}
}

// work is a namespace whose calls report while they run.
type work struct{}

// Steps logs a line and reports progress n times, 120 ms apart (past the
// progress rate limit), and returns "done".
func (work) Steps(ctx context.Context, n int) string {
	req := inproc.Request(ctx)
	for i := 1; i <= n; i++ {
		req.Log(fmt.Sprintf("line %d", i))
		time.Sleep(120 * time.Millisecond)
		req.Progress(float64(i), float64(n), "steps")
		time.Sleep(120 * time.Millisecond)
	}
	return "done"
}

func (work) ParamNames() map[string][]string { return map[string][]string{"Steps": {"n"}} }

// testOptions are options whose sandboxes use the test runtime and cache.
func testOptions(t *testing.T, o Options) Options {
	t.Helper()
	o.Config.RuntimeDir = testenv.Runtime(t).Dir
	if o.Config.CacheDir == "" {
		o.Config.CacheDir = testenv.CacheDir(t)
	}
	if o.Logger == nil {
		o.Logger = testenv.Logger(t)
	}
	if o.Version == "" {
		o.Version = "test"
	}
	return o
}

// with returns the default settings, changed by set.
func with(set func(s *Settings)) *Settings {
	s := DefaultSettings()
	set(&s)
	return &s
}

func newServer(t *testing.T, o Options) *Server {
	t.Helper()
	srv, err := New(testOptions(t, o))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// client records what a test client receives.
type client struct {
	mu          sync.Mutex
	elicits     []string // messages of the elicitation requests
	listChanged chan struct{}
}

// newClient returns a go-sdk client; answer, if set, answers elicitations.
func newClient(answer func(msg string) *mcp.ElicitResult) (*mcp.Client, *client) {
	rec := &client{listChanged: make(chan struct{}, 16)}
	opts := &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			select {
			case rec.listChanged <- struct{}{}:
			default:
			}
		},
	}
	if answer != nil {
		opts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			rec.mu.Lock()
			rec.elicits = append(rec.elicits, req.Params.Message)
			rec.mu.Unlock()
			return answer(req.Params.Message), nil
		}
	}
	return mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, opts), rec
}

func (c *client) elicited() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.elicits...)
}

// connectInMemory serves one session with srv.Run over in-memory pipes.
// protocol "" is the go-sdk's default (the sessionless 2026-07-28).
func connectInMemory(t *testing.T, srv *Server, c *mcp.Client, protocol string) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, st) }()
	cs, err := c.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		cancel()
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	})
	return cs
}

// startHTTP serves srv on a loopback port and returns the endpoint. The
// listener is open: a request waits in its backlog until RunHTTP serves
// (once the pool's first sandbox booted), or fails if it gave up.
func startHTTP(t *testing.T, srv *Server) string {
	t.Helper()
	return testenv.Serve(t, srv.RunHTTP) + Path
}

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func connectHTTP(t *testing.T, url, token string, c *mcp.Client) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}
	if token != "" {
		tr.HTTPClient = &http.Client{Transport: bearer{token, http.DefaultTransport}}
	}
	cs, err := c.Connect(t.Context(), tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// result is execute_code's answer as a test sees it.
type result struct {
	Result  any      `json:"result"`
	Error   string   `json:"error"`
	Note    string   `json:"note"`
	Files   []string `json:"files"`
	View    string   `json:"view"`
	App     string   `json:"app"`
	IsError bool     `json:"-"`
	Text    string   `json:"-"` // the text block
}

func run(t *testing.T, cs *mcp.ClientSession, code string) result {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"code": code}})
	if err != nil {
		t.Fatalf("execute_code(%q): %v", code, err)
	}
	return decode(t, res)
}

func decode(t *testing.T, res *mcp.CallToolResult) result {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content block, got %d", len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, not text", res.Content[0])
	}
	var r result
	if err := json.Unmarshal([]byte(text.Text), &r); err != nil {
		t.Fatalf("text block is not JSON: %v\n%s", err, text.Text)
	}
	if res.StructuredContent != nil {
		t.Errorf("structured content %v: the result is sent once, as the text block", res.StructuredContent)
	}
	r.IsError, r.Text = res.IsError, text.Text
	return r
}

// value is the result of code that must succeed.
func value(t *testing.T, cs *mcp.ClientSession, code string) any {
	t.Helper()
	r := run(t, cs, code)
	if r.IsError || r.Error != "" {
		t.Fatalf("execute_code(%q) failed: %s", code, r.Error)
	}
	return r.Result
}

// waitFor polls cond for up to d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// resourceNotFound fails t unless reading uri through cs fails with MCP's
// "Resource not found" (any other error would not show that the resource
// is hidden).
func resourceNotFound(t *testing.T, cs *mcp.ClientSession, uri string) {
	t.Helper()
	_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcp.CodeResourceNotFound {
		t.Errorf("reading %s: %v, want the error Resource not found", uri, err)
	}
}
