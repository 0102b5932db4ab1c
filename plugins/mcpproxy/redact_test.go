package main

import (
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// echoURLHeader carries the request's URL to the test server's leak tool,
// which sees only headers.
const echoURLHeader = "X-Test-Echo-Url"

// noLeak fails the test if what the sandbox sees holds one of secrets.
func noLeak(t *testing.T, what, seen string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(seen, s) {
			t.Errorf("%s shows %q:\n%s", what, s, seen)
		}
	}
}

func describe(t *testing.T, c sdk.BridgeServer) *sdk.Description {
	t.Helper()
	d, err := c.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// leak calls the leak tool as a task and returns what the sandbox sees of
// it: the result or the error's message, and the task's log lines and
// progress messages.
func leak(t *testing.T, c sdk.BridgeServer, args string) (shown string, events []string) {
	t.Helper()
	rec := &sdktest.Recorder{}
	res, err := c.CallTool(t.Context(), &sdk.CallToolRequest{Name: "leak", Arguments: json.RawMessage(args), TaskID: "t", Events: rec})
	if err != nil {
		t.Fatal(err)
	}
	shown = string(res.Content)
	if res.IsError {
		shown = res.Error.Message
	} else if err := json.Unmarshal(res.Content, &shown); err != nil {
		t.Fatalf("leak's result %s is not a string: %v", res.Content, err)
	}
	events = rec.Lines()
	for _, p := range rec.ProgressReports() {
		events = append(events, p.Message)
	}
	return shown, events
}

// TestSecretsStdio: a stdio server started with a credential in its env
// (API_KEY) and another in its args, which says both back in its results,
// errors, log lines and on stderr. The env's is redacted everywhere; args
// are not secrets (doc.go says to pass credentials in env), so they are
// kept out of the description but not redacted from what the server says.
func TestSecretsStdio(t *testing.T) {
	t.Parallel()
	const envSecret, argSecret = "SECRET-ENV-7d1f", "SECRET-ARG-93ac"
	block := filepath.Join(t.TempDir(), "block")
	cfg := goServer(t, "basic")
	cfg["env"].(map[string]string)["API_KEY"] = envSecret
	cfg["env"].(map[string]string)[blockEnv] = block
	cfg["args"] = []string{"--api-key=" + argSecret}
	c, _ := startProxy(t, cfg)

	d := describe(t, c)
	exe, _ := os.Executable()
	if want := `MCP server "go-basic" (stdio: ` + filepath.Base(exe) + "), gotest v1:"; !strings.HasPrefix(d.Description, want) {
		t.Errorf("description does not start with %q:\n%s", want, d.Description)
	}
	noLeak(t, "the description", d.Description, envSecret, argSecret, "--api-key", exe)

	echo := "env API_KEY=[REDACTED] args=--api-key=" + argSecret
	shown, events := leak(t, c, `{}`)
	diff(t, "result", echo, shown)
	diff(t, "log and progress", []string{"[info] " + echo, echo}, events)
	shown, events = leak(t, c, `{"fail": true}`)
	diff(t, "error", "refused: "+echo, shown)
	noLeak(t, "the error's log", strings.Join(events, "\n"), envSecret)

	// The server's stderr, in the message of a call during which it died,
	// and of a failed handshake when it cannot start again.
	e := callError(t, c, "die", `{}`)
	if !strings.Contains(e.Message, echo) || !strings.Contains(e.Message, "dying on purpose") {
		t.Errorf("die: %s", e.Message)
	}
	noLeak(t, "die's error", e.Message, envSecret)
	if err := os.WriteFile(block, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e = callError(t, c, "leak", `{}`)
	if e.Code != sdk.CodeUnavailable || !strings.Contains(e.Message, "env API_KEY=[REDACTED]") {
		t.Errorf("restart failed: %+v", e)
	}
	noLeak(t, "the failed restart", e.Message, envSecret)
	noLeak(t, "the description while down", describe(t, c).Description, envSecret, argSecret)
}

// TestSecretsStdioHandshake: a stdio server that cannot start says its env
// on stderr; the description shows the reason without the credential.
func TestSecretsStdioHandshake(t *testing.T) {
	t.Parallel()
	const envSecret = "SECRET-ENV-0b5e"
	c, _ := startProxy(t, map[string]any{
		"name": "crash", "command": "/bin/sh",
		"args": []string{"-c", `echo "key $API_KEY" >&2; exit 2`},
		"env":  map[string]string{"API_KEY": envSecret},
	})
	// The stderr of a server that exited may come late: a later Describe
	// tries again.
	waitFor(t, "the server's stderr in the description", func() bool {
		d := describe(t, c).Description
		noLeak(t, "the description", d, envSecret, "-c", "exit 2")
		return strings.Contains(d, "(stderr: key [REDACTED])")
	})
	if d := describe(t, c).Description; !strings.HasPrefix(d, `MCP server "crash" (stdio: sh) is not available`) {
		t.Errorf("description: %s", d)
	}
}

// TestSecretsHTTP: a server reached at a URL with a password and an
// api_key, and with an X-Api-Key header, that says the request's URL and
// headers back: in a failed handshake, in results, errors and log lines.
func TestSecretsHTTP(t *testing.T) {
	t.Parallel()
	const password, query, header = "SECRET-PW-51c2", "SECRET-QUERY-8e0b", "SECRET-HDR-c4d9"
	basic := base64.StdEncoding.EncodeToString([]byte("ada:" + password)) // as Go sends the userinfo
	secrets := []string{password, query, header, basic}

	var refuse atomic.Bool
	refuse.Store(true)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testServer("basic") }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pw, _ := r.BasicAuth()
		if user != "ada" || pw != password || r.URL.Query().Get("api_key") != query || r.Header.Get("X-Api-Key") != header {
			http.Error(w, "the proxy did not send the credentials", http.StatusBadRequest)
			return
		}
		if refuse.Load() && r.Method == http.MethodPost {
			// A JSON-RPC error quoting the request: the MCP client
			// makes it the error of the call (or of the handshake).
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.NewDecoder(r.Body).Decode(&req)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			msg := "refused: url=" + r.URL.String() + " authorization=" + r.Header.Get("Authorization") + " x-api-key=" + r.Header.Get("X-Api-Key")
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32001, "message": msg}})
			return
		}
		r.Header.Set(echoURLHeader, r.URL.String())
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	withUserinfo := strings.Replace(srv.URL, "http://", "http://ada:"+password+"@", 1)
	c, _ := startProxy(t, map[string]any{
		"name":    "remote",
		"url":     withUserinfo + "/mcp?api_key=" + query + "&page=2",
		"headers": map[string]string{"X-Api-Key": header},
	})
	echo := "url=/mcp?api_key=[REDACTED]&page=2 authorization=Basic [REDACTED] x-api-key=[REDACTED]"

	// The handshake fails: the description says why.
	d := describe(t, c).Description
	if want := `MCP server "remote" (http: ` + srv.URL + ") is not available"; !strings.HasPrefix(d, want) || !strings.Contains(d, "refused: "+echo) {
		t.Errorf("description: want %q and the server's message, got\n%s", want, d)
	}
	noLeak(t, "the description", d, append(secrets, "ada@", "page=2)")...)

	// The server comes up: its results, errors and log lines.
	refuse.Store(false)
	waitFor(t, "the tools", func() bool { return len(describe(t, c).Tools) > 0 })
	noLeak(t, "the description", describe(t, c).Description, append(secrets, "ada@", "page=2")...)
	shown, events := leak(t, c, `{}`)
	diff(t, "result", echo, shown)
	diff(t, "log and progress", []string{"[info] " + echo, echo}, events)
	shown, events = leak(t, c, `{"fail": true}`)
	diff(t, "error", "refused: "+echo, shown)
	noLeak(t, "the error's log", strings.Join(events, "\n"), secrets...)

	// The server refuses a call, quoting the request.
	refuse.Store(true)
	shown, _ = leak(t, c, `{}`)
	if !strings.Contains(shown, "refused: "+echo) {
		t.Errorf("refused call: %s", shown)
	}
	noLeak(t, "the refused call", shown, secrets...)
}

// TestSecretsHTTPDown: the handshake with a server that cannot be reached
// fails with net/http's message, which quotes the URL; the description
// shows its scheme and host only: no userinfo, query or path (a path may
// hold the key, as Zapier's MCP URLs do).
func TestSecretsHTTPDown(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, _ := startProxy(t, map[string]any{"name": "gone", "type": "sse", "url": "http://ada:SECRET-PW-77@" + addr + "/s/SECRET-PATH-77/sse?api_key=SECRET-Q-77&page=2"})
	d := describe(t, c).Description
	if want := `MCP server "gone" (sse: http://` + addr + ") is not available"; !strings.HasPrefix(d, want) {
		t.Errorf("description does not start with %q:\n%s", want, d)
	}
	noLeak(t, "the description", d, "SECRET", "ada", "page=2", "?")
}

func TestSafeURLs(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`Post "http://ada:***@127.0.0.1:8080/mcp?api_key=x&page=2": dial tcp: refused`: `Post "http://127.0.0.1:8080": dial tcp: refused`,
		"see https://example.com/a/KEY-1#frag, then HTTPS://h/?q=1.":                   "see https://example.com, then https://h.",
		"no URL here: ftp://h/x?y": "no URL here: ftp://h/x?y",
		"http://[::1":              "(an unparsable URL)",
	} {
		if got := safeURLs(in); got != want {
			t.Errorf("safeURLs(%q)\n got  %q\n want %q", in, got, want)
		}
	}
}

// TestSecretsHTTPRedirect: the server's URL redirects (307, which keeps the
// POST) to another origin, a real MCP server that records what it gets:
// the configured headers go to the configured server's origin only.
func TestSecretsHTTPRedirect(t *testing.T) {
	t.Parallel()
	const header = "SECRET-HDR-7f3a"
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testServer("basic") }, nil)
	var got atomic.Value
	got.Store("")
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get("Authorization") + r.Header.Get("X-Api-Key"); h != "" {
			got.Store(h)
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(elsewhere.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Another port, by another name: Go itself keeps every header on
		// a redirect to another port of the same host.
		_, port, _ := net.SplitHostPort(elsewhere.Listener.Addr().String())
		http.Redirect(w, r, "http://localhost:"+port+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	c, _ := startProxy(t, map[string]any{
		"name":    "remote",
		"url":     srv.URL + "/mcp",
		"headers": map[string]string{"X-Api-Key": header, "Authorization": "Bearer " + header},
	})
	describe(t, c) // the handshake, through the redirect
	if h := got.Load().(string); h != "" {
		t.Errorf("the server redirected to got the credentials: %q", h)
	}
}
