package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// TestSubprocess runs the bridge as a real plugin process (this test
// binary, re-executed).
func TestSubprocess(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b := sdktest.Start(t, exec.Command(exe))
	cfg := must(json.Marshal(map[string]any{"spec": api.srv.URL + "/openapi.json", "token_env": tokenEnv}))
	if err := b.Configure(t.Context(), &sdk.ConfigureRequest{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	d, err := b.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.Description, "HTTP API: Swagger Petstore ("+api.Base+") — 10 endpoints.") {
		t.Errorf("description: %s", d.Description)
	}
	got, _ := ok(t, b, "getPetById", `{"petId": 3}`)
	if got.Status != 200 || got.Data.(map[string]any)["name"] != "rex" {
		t.Errorf("getPetById: %+v", got)
	}
	e := failure(t, b, "findPetsByStatus", `{"status": "lost"}`)
	if want := "findPetsByStatus: invalid arguments: status: value must be one of 'available', 'pending', 'sold'"; e.Code != sdk.CodeInvalidArgument || e.Message != want {
		t.Errorf("validation: %+v", e)
	}
	// A configuration error comes back as an error of Configure, naming
	// the key.
	err = sdktest.Start(t, exec.Command(exe)).Configure(t.Context(), &sdk.ConfigureRequest{Config: json.RawMessage(`{"base_url": "x", "oops": 1}`)})
	var ce *sdk.ConfigError
	if !errors.As(err, &ce) || ce.Key != "oops" || !strings.HasPrefix(ce.Message, "unknown key") {
		t.Errorf("bad config: %v", err)
	}
}

// lockedBuffer collects the host's logs (plugins' logs included).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestFromPython drives the bridge from real Python through host.New, with
// this test binary as the plugin, and checks that the token reaches the
// server and nothing that Python (or the host's logs) sees.
func TestFromPython(t *testing.T) {
	t.Parallel()
	rt := testenv.Runtime(t)
	api := newTestAPI(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	var logs lockedBuffer
	out := t.TempDir()
	sb, err := host.New(t.Context(), host.Config{
		RuntimeDir: rt.Dir,
		CacheDir:   testenv.CacheDir(t),
		OutputDir:  out,
		Logger:     hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Trace}),
		Bridges: map[string]host.BridgeConfig{
			"api": {Plugin: exe, Env: []string{tokenEnv}, Config: map[string]any{
				"base_url": api.Base, "spec": specFile(t, "petstore-3.0.yaml"), "token_env": tokenEnv,
			}},
			"down": {Plugin: exe, Config: map[string]any{"base_url": "http://" + closed, "token": testToken}},
			"slow": {Plugin: exe, Config: map[string]any{"base_url": api.Base, "token": testToken, "timeout": "100ms"}},
		},
	})
	if err != nil {
		t.Fatalf("host.New: %v", err)
	}
	t.Cleanup(func() { sb.Close() })

	code := `
out = {}
out["by id"] = api.getPetById(1)["data"]["name"]
out["positional"] = [p["name"] for p in api.findPetsByStatus("sold")["data"]]
out["not an identifier"] = api.health_check()["data"]
out["missing"] = api.getPetById(petId=99)
del out["missing"]["headers"]
out["raw"] = api.get("/pet/findByStatus", {"status": "pending"})["data"][0]["name"]
out["echo"] = api.post("/echo", {"a": 1})["data"]["headers"]["Authorization"]
out["bytes"] = api.get("/health", headers={"Accept": "text/plain"})["data"]
errors = {}
for name, f in {
    "invalid": lambda: api.getPetById(petId="abc"),
    "unknown": lambda: api.getPetById(1, color="red"),
    "elsewhere": lambda: api.get("http://elsewhere.invalid/x"),
    "down": lambda: down.get("/x"),
    "slow": lambda: slow.get("/slow"),
}.items():
    try:
        f()
        errors[name] = "no error"
    except Exception as e:
        errors[name] = [type(e).__name__, str(e)]
out["errors"] = errors
out["help"] = help(api)
out["help op"] = help(api.getPetById)
out["inspect"] = sbx.inspect("api", "api.getPetById", "api.get")
out["search"] = api.search("pets by status")
out["sbx search"] = sbx.search("Finds Pets")
t = api.getPetById.task(petId=2)
await t
out["task"] = t.tail(5)
out["info"] = sbx.info()
out
`
	r, err := sb.Execute(t.Context(), code)
	if err != nil {
		t.Fatal(err)
	}
	if r.Error != nil {
		t.Fatalf("%s: %s\n%s", r.Error.Type, r.Error.Message, r.Error.Traceback)
	}
	var got map[string]any
	if err := json.Unmarshal(r.Output, &got); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"by id":             "doggie",
		"positional":        []any{"rex"},
		"not an identifier": "ok",
		"missing":           map[string]any{"ok": false, "status": float64(404), "data": map[string]any{"code": float64(404), "message": "Pet not found"}},
		"raw":               "kitty",
		"echo":              "Bearer [REDACTED]",
		"bytes":             "ok",
		"task":              "GET " + api.Base + "/pet/2 → 200 OK",
		"search":            []any{map[string]any{"method": "GET", "path": "/pet/findByStatus", "summary": "Finds Pets by status", "tool": "findPetsByStatus", "params": map[string]any{"status": "string (required)", "limit": "integer"}}},
		"errors": map[string]any{
			"invalid":   []any{"ValueError", `getPetById: invalid arguments: petId: "abc" is an invalid integer`},
			"unknown":   []any{"ValueError", "getPetById: invalid arguments: color: unknown argument (the arguments are petId)"},
			"elsewhere": []any{"PermissionError", `"http://elsewhere.invalid/x" is not on this API's origin ` + api.srv.URL + `: the bridge sends requests (and its credentials) only there; give a path such as "/items/1"`},
			"down":      []any{"ConnectionError", "GET http://" + closed + "/x: cannot reach " + closed + ": dial tcp " + closed + ": connect: connection refused"},
			"slow":      []any{"TimeoutError", "GET " + api.Base + "/slow: no response within 100ms"},
		},
	} {
		if diff := cmp.Diff(want, got[key]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", key, diff)
		}
	}
	help, _ := got["help"].(string)
	for _, want := range []string{"Description: HTTP API: Swagger Petstore (" + api.Base + ") — 10 endpoints.", "Use search(pattern)", "├── getPetById(petId: int) -> dict  # Find pet by ID", "├── health_check() -> dict"} {
		if !strings.Contains(help, want) {
			t.Errorf("help(api) lacks %q:\n%s", want, help)
		}
	}
	helpOp, _ := got["help op"].(string)
	if !strings.HasPrefix(helpOp, "api.getPetById(petId: int) -> dict\n\nFind pet by ID\n\nReturns a single pet.\n\nGET /pet/{petId}\n") {
		t.Errorf("help(api.getPetById):\n%s", helpOp)
	}
	if found, _ := got["sbx search"].(map[string]any); !strings.Contains(string(must(json.Marshal(found))), "api.findPetsByStatus") {
		t.Errorf("sbx.search: %v", found)
	}

	// The token reached the server with every request to it...
	reqs := api.requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the server")
	}
	for _, req := range reqs {
		if req.Header.Get("Authorization") != "Bearer "+testToken {
			t.Errorf("%s %s: Authorization %q", req.Method, req.URL, req.Header.Get("Authorization"))
		}
	}
	// ...and nothing that Python sees: results, errors, help, inspect,
	// info, output, the task logs and every file of the workspace; nor the
	// host's logs.
	seen := map[string]string{"output": string(r.Output), "stdout": r.Stdout, "stderr": r.Stderr, "host logs": logs.String()}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			seen[p] = string(b)
		}
		return nil
	})
	if !strings.Contains(strings.Join(keys(seen), " "), "tasks") {
		t.Errorf("no task log among the workspace's files: %v", keys(seen))
	}
	for where, text := range seen {
		if strings.Contains(text, testToken) {
			t.Errorf("the token is in %s", where)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestFromPythonRedaction: a server that echoes the bridge's token in a
// binary body, in its HTTP reason phrase (which the task's log shows) and
// URL-encoded, base64, base64url (inside longer payloads at each
// alignment) and hex gets none of it to Python. The bridge runs without its
// own redaction: the host's router, which knows the token because the
// bridge reported it from Configure, is what removes it.
func TestFromPythonRedaction(t *testing.T) {
	t.Parallel()
	rt := testenv.Runtime(t)
	api := newTestAPI(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	sb, err := host.New(t.Context(), host.Config{
		RuntimeDir: rt.Dir,
		CacheDir:   testenv.CacheDir(t),
		OutputDir:  out,
		Bridges: map[string]host.BridgeConfig{
			"leaky": {Plugin: exe, Env: []string{noOwnRedactionEnv}, Config: map[string]any{"base_url": api.Base, "token": testToken}},
		},
	})
	if err != nil {
		t.Fatalf("host.New: %v", err)
	}
	t.Cleanup(func() { sb.Close() })
	r, err := sb.Execute(t.Context(), `
import base64
out = {}
body = leaky.get("/echo-binary")["data"]
out["binary"] = [type(body).__name__, base64.b64encode(body).decode()]
t = leaky.get.task("/reason")
res = await t
out["reason"] = [res["status"], t.tail(5)]
out["encodings"] = leaky.get("/encodings")["data"]
out`)
	if err != nil {
		t.Fatal(err)
	}
	if r.Error != nil {
		t.Fatalf("%s: %s\n%s", r.Error.Type, r.Error.Message, r.Error.Traceback)
	}
	var got struct {
		Binary    []string          `json:"binary"`
		Reason    []any             `json:"reason"`
		Encodings map[string]string `json:"encodings"`
	}
	if err := json.Unmarshal(r.Output, &got); err != nil {
		t.Fatal(err)
	}
	body, err := base64.StdEncoding.DecodeString(got.Binary[1])
	if err != nil || got.Binary[0] != "bytes" {
		t.Fatalf("binary body: %v %v", got.Binary, err)
	}
	if !bytes.HasPrefix(body, []byte{0xff, 0xfe, 0x00}) || !bytes.Contains(body, []byte("Authorization: Bearer "+sdk.Redacted)) {
		t.Errorf("binary body, as Python has it: %q", body)
	}
	if want := "GET " + api.Base + "/reason → 418 Teapot says Bearer " + sdk.Redacted; len(got.Reason) != 2 || got.Reason[1] != want {
		t.Errorf("task log: %v, want %q", got.Reason, want)
	}
	if len(got.Encodings) != 8 {
		t.Errorf("encodings: %v", got.Encodings)
	}
	for k, v := range got.Encodings {
		if !strings.Contains(v, sdk.Redacted) {
			t.Errorf("encodings[%s] = %q, not redacted", k, v)
		}
	}
	seen := string(r.Output) + "\n" + string(body)
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			seen += "\n" + string(b)
		}
		return nil
	})
	tok := []byte(testToken)
	forms := []string{testToken, url.QueryEscape(testToken), hex.EncodeToString(tok), strings.ToUpper(hex.EncodeToString(tok))}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for d := range 3 {
			forms = append(forms, enc.EncodeToString(tok[d:d+(len(tok)-d)/3*3]))
		}
	}
	for _, f := range forms {
		if strings.Contains(seen, f) {
			t.Errorf("Python sees %q, a form of the token", f)
		}
	}
}

// TestFromPythonCookieRedaction: a bridge configured with a session cookie
// (headers = {Cookie = "sid=..."}) talks to a server that answers with the
// cookie's value on its own, as a "who am I" endpoint does. The value is
// the credential, whatever the cookie's name: Python sees none of it. The
// bridge's own redaction is off: the host's, from the secrets the bridge
// reports, is what removes it.
func TestFromPythonCookieRedaction(t *testing.T) {
	t.Parallel()
	rt := testenv.Runtime(t)
	const session = "c00kie-9e1d4b7a2f"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		got := map[string]string{}
		for _, c := range r.Cookies() {
			got[c.Name] = c.Value
		}
		json.NewEncoder(w).Encode(got)
	}))
	t.Cleanup(srv.Close)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := host.New(t.Context(), host.Config{
		RuntimeDir: rt.Dir,
		CacheDir:   testenv.CacheDir(t),
		Bridges: map[string]host.BridgeConfig{
			"api": {Plugin: exe, Env: []string{noOwnRedactionEnv}, Config: map[string]any{
				"base_url": srv.URL,
				"headers":  map[string]any{"Cookie": "theme=dark-mode-7; sid=" + session},
			}},
		},
	})
	if err != nil {
		t.Fatalf("host.New: %v", err)
	}
	t.Cleanup(func() { sb.Close() })
	r, err := sb.Execute(t.Context(), `api.get("/whoami")["data"]`)
	if err != nil {
		t.Fatal(err)
	}
	if r.Error != nil {
		t.Fatalf("%s: %s", r.Error.Type, r.Error.Message)
	}
	var got map[string]string
	if err := json.Unmarshal(r.Output, &got); err != nil {
		t.Fatalf("%s: %v", r.Output, err)
	}
	if got["sid"] != sdk.Redacted {
		t.Errorf("Python sees the session cookie's value: %v", got)
	}
	if strings.Contains(string(r.Output), session) {
		t.Errorf("Python sees the session cookie: %s", r.Output)
	}
}

// TestMessagesIntoABusyCall sends messages into a running call whose tool
// (a GET that waits on a slow server) reads none: the plugin's process
// must not keep them all, whatever the guest sends, since it runs outside
// the sandbox's memory limit. The sends wait (here until the execution
// times out), and the call can still be cancelled.
func TestMessagesIntoABusyCall(t *testing.T) {
	t.Parallel()
	rt := testenv.Runtime(t)
	gaveUp := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // answers only when the client gives up
		gaveUp <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := host.New(t.Context(), host.Config{
		RuntimeDir: rt.Dir,
		CacheDir:   testenv.CacheDir(t),
		Timeout:    8 * time.Second,
		Bridges:    map[string]host.BridgeConfig{"api": {Plugin: exe, Config: map[string]any{"base_url": srv.URL}}},
	})
	if err != nil {
		t.Fatalf("host.New: %v", err)
	}
	t.Cleanup(func() { sb.Close() })
	pid, ok := sb.BridgePid("api")
	if !ok {
		t.Fatal("no plugin process")
	}
	before := residentMB(t, pid)
	r, err := sb.Execute(t.Context(), `
t = api.get.task("/slow")
big = "x" * 900_000
sent, err = 0, None
try:
    for i in range(300):
        t.send(big)
        sent += 1
except Exception as e:
    err = type(e).__name__ + ": " + str(e)
t.cancel()
[sent, err]`)
	if err != nil {
		t.Fatal(err)
	}
	grown := residentMB(t, pid) - before
	t.Logf("result %s %v; the plugin's memory grew by %d MB", r.Output, r.Error, grown)
	// 300 messages of 900 KB are 270 MB.
	if grown > 100 {
		t.Errorf("the plugin keeps %d MB of messages that its call does not read", grown)
	}
	// The sends that wait do not keep the call from being cancelled: the
	// bridge's request ends.
	if r, err = sb.Execute(t.Context(), "t.cancel()"); err != nil || r.Error != nil {
		t.Errorf("cancel: %v %v", r.Error, err)
	}
	select {
	case <-gaveUp:
	case <-time.After(20 * time.Second): // the bridge's own timeout is 60 s
		t.Error("the cancelled call's request still runs")
	}
}

// residentMB is a process's resident memory, in MB.
func residentMB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(rest, "kB")))
			return kb >> 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
