package mcpserver

import (
	"context"
	"crypto/sha256"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
)

// Two HTTP sessions never see each other's variables or files.
func TestHTTPIsolation(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	// What a server killed before it could clean up left: the empty
	// directory goes, the one with files stays.
	os.Mkdir(filepath.Join(out, "session-EMPTY"), 0o755)
	os.MkdirAll(filepath.Join(out, "session-KEPT"), 0o755)
	os.WriteFile(filepath.Join(out, "session-KEPT", "k.txt"), []byte("k"), 0o644)
	srv := newServer(t, Options{Settings: with(func(s *Settings) { s.PoolSize = 1 }), Config: host.Config{OutputDir: out}})
	url := startHTTP(t, srv)
	ca, recA := newClient(nil)
	a, err := connectHTTP(t, url, "", ca)
	if err != nil {
		t.Fatal(err)
	}
	// (Served: the start is over.)
	if _, err := os.Stat(filepath.Join(out, "session-EMPTY")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an empty session directory left behind survived the start: %v", err)
	}
	if err := os.Remove(filepath.Join(out, "session-KEPT", "k.txt")); err != nil {
		t.Errorf("a session directory with files was touched: %v", err)
	}
	os.Remove(filepath.Join(out, "session-KEPT"))
	cb, _ := newClient(nil)
	b, err := connectHTTP(t, url, "", cb)
	if err != nil {
		t.Fatal(err)
	}
	if a.InitializeResult().Instructions == "" || a.InitializeResult().ServerInfo.Name != "Parselbox" {
		t.Errorf("initialize result: %+v", a.InitializeResult())
	}
	value(t, a, "secret = 'from a'\nopen('a.txt', 'w').write('a')")
	<-recA.listChanged
	r := run(t, b, "secret")
	if !r.IsError || !strings.Contains(r.Error, "NameError") {
		t.Errorf("session b sees a's variable: %+v", r)
	}
	if got := value(t, b, "import os\nos.listdir('/workspace')"); len(got.([]any)) != 0 {
		t.Errorf("session b sees a's files: %v", got)
	}
	list, err := b.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.Resources {
		if !strings.HasPrefix(r.URI, "ui://") { // the renderer is everyone's
			t.Errorf("session b lists a's resource %s", r.URI)
		}
	}
	resourceNotFound(t, b, "file:///workspace/a.txt") // a's file, from session b
	if _, err := a.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///workspace/a.txt"}); err != nil {
		t.Errorf("session a reads its file: %v", err)
	}
	// With an output directory, each session writes to its own.
	if m, _ := filepath.Glob(filepath.Join(out, "session-*", "a.txt")); len(m) != 1 {
		t.Errorf("a's file under %s: %v", out, m)
	}
	if n := srv.SessionCount(); n != 2 {
		t.Errorf("%d sessions, want 2", n)
	}
	// A session that ends gives its sandbox back.
	pid := sessionOf(t, srv, b).Sandbox().PID()
	b.Close()
	waitFor(t, 2*time.Minute, "the session's end", func() bool { return srv.SessionCount() == 1 })
	waitFor(t, 2*time.Minute, "the sandbox's end", func() bool { return syscall.Kill(pid, 0) != nil })
	// b wrote nothing: its directory is gone; and once the server closes,
	// so are those of the pooled sandboxes no session took.
	srv.Close()
	dirs, _ := filepath.Glob(filepath.Join(out, "session-*"))
	if len(dirs) != 1 || filepath.Dir(filepath.Dir(must(filepath.Glob(filepath.Join(out, "session-*", "a.txt")))[0])) != out {
		t.Errorf("session directories left under %s: %v, want a's only", out, dirs)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// sessionOf finds the server side of an HTTP client session.
func sessionOf(t *testing.T, srv *Server, cs *mcp.ClientSession) *session {
	t.Helper()
	for _, s := range sessionsOf(srv) {
		s.mu.Lock()
		ss := s.ss
		s.mu.Unlock()
		if ss != nil && ss.ID() == cs.ID() {
			return s
		}
	}
	t.Fatalf("no session %s", cs.ID())
	return nil
}

// The HTTP front door: bearer token, Origin, body size, and no listening
// beyond loopback without a token.
func TestHTTPSecurity(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token-0123456789"
	srv := newServer(t, Options{Settings: with(func(s *Settings) { s.AuthToken, s.PoolSize = token, 0 })})
	url := startHTTP(t, srv)

	post := func(header map[string]string, body string) int {
		t.Helper()
		return testenv.PostStatus(t, url, header, body)
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for name, tc := range map[string]struct {
		header map[string]string
		body   string
		want   int
	}{
		"no token":         {nil, ping, http.StatusUnauthorized},
		"wrong token":      {map[string]string{"Authorization": "Bearer nope"}, ping, http.StatusUnauthorized},
		"token prefix":     {map[string]string{"Authorization": "Bearer s3cret"}, ping, http.StatusUnauthorized},
		"basic auth":       {map[string]string{"Authorization": "Basic " + token}, ping, http.StatusUnauthorized},
		"foreign origin":   {map[string]string{"Authorization": "Bearer " + token, "Origin": "https://evil.example"}, ping, http.StatusForbidden},
		"null origin":      {map[string]string{"Authorization": "Bearer " + token, "Origin": "null"}, ping, http.StatusForbidden},
		"too big":          {map[string]string{"Authorization": "Bearer " + token}, `{"x":"` + strings.Repeat("a", MaxRequestBytes) + `"}`, http.StatusRequestEntityTooLarge},
		"loopback origin":  {map[string]string{"Authorization": "bearer " + token, "Origin": "http://localhost:6274"}, ping, http.StatusOK},
		"no origin":        {map[string]string{"Authorization": "Bearer " + token}, ping, http.StatusOK},
		"127.0.0.1 origin": {map[string]string{"Authorization": "Bearer " + token, "Origin": "http://127.0.0.1"}, ping, http.StatusOK},
	} {
		if got := post(tc.header, tc.body); got != tc.want {
			t.Errorf("%s: status %d, want %d", name, got, tc.want)
		}
	}

	// A body over the limit sent in chunks, without a Content-Length.
	req, _ := http.NewRequest(http.MethodPost, url, io.MultiReader(
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`),
		io.LimitReader(zeros{}, MaxRequestBytes), strings.NewReader(`"}}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.ContentLength = -1 // unknown: sent with Transfer-Encoding: chunked
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Errorf("chunked body: %v", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("chunked body over the limit: status %d, want %d", resp.StatusCode, http.StatusRequestEntityTooLarge)
		}
	}

	// The go-sdk client with and without the token.
	c, _ := newClient(nil)
	if _, err := connectHTTP(t, url, "", c); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("connecting without the token: %v", err)
	}
	cs, err := connectHTTP(t, url, token, c)
	if err != nil {
		t.Fatal(err)
	}
	if got := value(t, cs, "6 * 7"); got != 42.0 {
		t.Errorf("6 * 7 = %v", got)
	}

	// Beyond loopback, a token is required.
	open := newServer(t, Options{Settings: with(func(s *Settings) { s.PoolSize = 0 })})
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := open.RunHTTP(t.Context(), ln); !errors.Is(err, ErrNeedToken) {
		t.Errorf("RunHTTP on %s without a token: %v", ln.Addr(), err)
	}
}

// zeros reads as "0" forever.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// The bearer token is compared in constant time: authorized hashes both
// tokens and compares the digests with crypto/subtle, and compares them no
// other way. (A timing test would be a wall clock; this checks the code
// path, so that replacing the comparison fails it.)
func TestTokenComparedInConstantTime(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "http.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var fn *ast.FuncDecl
	for _, d := range file.Decls {
		if f, ok := d.(*ast.FuncDecl); ok && f.Name.Name == "authorized" {
			fn = f
		}
	}
	if fn == nil {
		t.Fatal("no func authorized in http.go")
	}
	var subtleCalls, hashes int
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
				pkg, _ := sel.X.(*ast.Ident)
				switch {
				case pkg != nil && pkg.Name == "subtle" && sel.Sel.Name == "ConstantTimeCompare":
					subtleCalls++
				case pkg != nil && pkg.Name == "sha256" && sel.Sel.Name == "Sum256":
					hashes++
				case pkg != nil && (pkg.Name == "bytes" || pkg.Name == "strings") && (sel.Sel.Name == "Equal" || sel.Sel.Name == "Compare"):
					t.Errorf("%s: the token is compared with %s.%s", fset.Position(n.Pos()), pkg.Name, sel.Sel.Name)
				}
			}
		case *ast.BinaryExpr:
			if lit, ok := n.Y.(*ast.BasicLit); ok && lit.Value == `""` {
				break // whether a token is set at all
			}
			if call, ok := n.X.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "ConstantTimeCompare" {
					break // its result, 1 for equal
				}
			}
			if n.Op == token.EQL || n.Op == token.NEQ {
				for _, side := range []ast.Expr{n.X, n.Y} {
					if mentionsToken(side) {
						t.Errorf("%s: the token is compared with %s", fset.Position(n.Pos()), n.Op)
					}
				}
			}
		}
		return true
	})
	if subtleCalls != 1 || hashes != 1 {
		t.Errorf("authorized: %d calls of subtle.ConstantTimeCompare and %d of sha256.Sum256, want 1 each", subtleCalls, hashes)
	}
	// And it decides: a wrong token of the right length is refused.
	s := &Server{opts: Options{Settings: with(func(s *Settings) { s.AuthToken = "0123456789abcdef" })}}
	s.token = sha256.Sum256([]byte("0123456789abcdef"))
	for tok, want := range map[string]bool{"0123456789abcdef": true, "0123456789abcdeg": false, "": false} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		if got := s.authorized(r); got != want {
			t.Errorf("authorized(%q) = %v", tok, got)
		}
	}
}

// mentionsToken reports whether an expression refers to a token: the
// request's (token) or the server's (s.token, AuthToken).
func mentionsToken(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && (id.Name == "token" || id.Name == "got" || id.Name == "AuthToken") {
			found = true
		}
		return true
	})
	return found
}

// A session beyond MaxSessions is refused with a clear error; an idle
// session closes after IdleTimeout, closing its sandbox.
func TestHTTPLimitAndIdle(t *testing.T) {
	t.Parallel()
	srv := newServer(t, Options{Settings: with(func(s *Settings) { s.MaxSessions, s.IdleTimeout, s.PoolSize = 1, 1500*time.Millisecond, 1 })})
	url := startHTTP(t, srv)
	c, _ := newClient(nil)
	first, err := connectHTTP(t, url, "", c)
	if err != nil {
		t.Fatal(err)
	}
	value(t, first, "1")
	if _, err := connectHTTP(t, url, "", c); err == nil || !strings.Contains(err.Error(), "too many sessions") ||
		!strings.Contains(err.Error(), "--max-sessions") {
		t.Errorf("second session: %v", err)
	}
	pid := onlySession(t, srv).Sandbox().PID()

	// Idle: closed, with its sandbox; then a new session fits.
	waitFor(t, 2*time.Minute, "the idle session to close", func() bool { return srv.SessionCount() == 0 })
	waitFor(t, 2*time.Minute, "the sandbox to stop", func() bool { return syscall.Kill(pid, 0) != nil })
	if _, err := first.CallTool(t.Context(), &mcp.CallToolParams{Name: ToolName, Arguments: map[string]any{"code": "1"}}); err == nil {
		t.Error("a call on the closed session worked")
	}
	again, err := connectHTTP(t, url, "", c)
	if err != nil {
		t.Fatalf("after the idle session closed: %v", err)
	}
	if got := value(t, again, "2 + 2"); got != 4.0 {
		t.Errorf("2 + 2 = %v", got)
	}
}

// A timeout and a crash of the sandbox in the middle of a session: the
// session goes on.
func TestTimeoutAndCrash(t *testing.T) {
	t.Parallel()
	srv := newServer(t, Options{Settings: with(func(s *Settings) { s.PoolSize = 1 }), Config: host.Config{Timeout: 2 * time.Second}})
	url := startHTTP(t, srv)
	c, _ := newClient(nil)
	cs, err := connectHTTP(t, url, "", c)
	if err != nil {
		t.Fatal(err)
	}
	value(t, cs, "kept = 'yes'")
	r := run(t, cs, "while True:\n    pass")
	if !r.IsError || !strings.Contains(r.Error, "timed out") {
		t.Errorf("timeout: %+v", r)
	}
	if got := value(t, cs, "kept"); got != "yes" {
		t.Errorf("state after a timeout: %v", got)
	}

	// kill -9 of the Deno process while code runs: once the code has
	// written its marker, so that the kill cannot land before the call.
	sb := onlySession(t, srv).Sandbox()
	pid := sb.PID()
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() { // reports through done: the test goroutine decides
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolName,
			Arguments: map[string]any{"code": "import asyncio\nopen('running', 'w').close()\nawait asyncio.sleep(30)"}})
		done <- answer{res, err}
	}()
	waitFor(t, 2*time.Minute, "the code to run", func() bool {
		_, err := sb.ReadFile("/workspace/running")
		return err == nil
	})
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil {
		t.Fatalf("call during the crash: %v", a.err)
	}
	r = decode(t, a.res)
	if !r.IsError || !strings.Contains(r.Error, "state was lost") {
		t.Errorf("crash: %+v", r)
	}
	if got := value(t, cs, "1 + 1"); got != 2.0 {
		t.Errorf("after the crash: %v", got)
	}
	if sb.PID() == pid {
		t.Error("the sandbox was not restarted")
	}
	r = run(t, cs, "kept")
	if !strings.Contains(r.Error, "NameError") {
		t.Errorf("state after a crash: %+v", r)
	}
}

// The pool hands a booted sandbox to a new session and boots the next.
func TestPool(t *testing.T) {
	t.Parallel()
	srv := newServer(t, Options{Settings: with(func(s *Settings) { s.PoolSize = 1 })})
	url := startHTTP(t, srv)
	waitFor(t, 2*time.Minute, "the pool to fill", func() bool { return srv.pool.idle() == 1 })
	c, _ := newClient(nil)
	began := time.Now()
	cs, err := connectHTTP(t, url, "", c)
	if err != nil {
		t.Fatal(err)
	}
	if got := value(t, cs, "1 + 1"); got != 2.0 {
		t.Errorf("1 + 1 = %v", got)
	}
	t.Logf("connect + first execute_code with a warm pool: %v", time.Since(began))
	waitFor(t, 2*time.Minute, "the pool to refill", func() bool { return srv.pool.idle() == 1 })
	if diff := cmp.Diff(1, srv.SessionCount()); diff != "" {
		t.Errorf("sessions (-want +got):\n%s", diff)
	}
}

// A pooled sandbox has done, before a session takes it, the setup the
// sandbox defers past boot (just-bash's import, on a timer about when a
// pooled sandbox meets its session), which the session's first executions
// would otherwise wait behind; Info().Warm says it is done.
func TestPoolHandsOverWarm(t *testing.T) {
	t.Parallel()
	srv := newServer(t, Options{Settings: with(func(s *Settings) { s.PoolSize = 1 })})
	url := startHTTP(t, srv)
	var pooled *host.Sandbox
	waitFor(t, 2*time.Minute, "the pool to fill", func() bool {
		srv.pool.mu.Lock()
		defer srv.pool.mu.Unlock()
		if len(srv.pool.ready) > 0 {
			pooled = srv.pool.ready[0].sb
		}
		return pooled != nil
	})
	info, err := pooled.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !info.Warm {
		t.Fatal("the pool holds a sandbox whose deferred setup has not run: a session's first execution would wait for it")
	}
	c, _ := newClient(nil)
	cs, err := connectHTTP(t, url, "", c)
	if err != nil {
		t.Fatal(err)
	}
	if got := value(t, cs, `bash("echo hi")`); got != "hi\n" {
		t.Errorf(`bash("echo hi") = %q`, got)
	}
}
