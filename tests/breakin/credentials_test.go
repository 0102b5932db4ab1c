package breakin

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parselbox/parselbox/host"
)

// bridgeToken is the http bridge's credential. It has characters that
// URL and base64 encodings change.
const bridgeToken = "Zq7+Wm/3x=Rk&Vp9_sEcReT~42"

// tokenForms are the token and its common encodings: none may reach the
// sandbox.
func tokenForms() map[string]string {
	return map[string]string{
		"raw":        bridgeToken,
		"url":        url.QueryEscape(bridgeToken),
		"path":       url.PathEscape(bridgeToken),
		"base64":     base64.StdEncoding.EncodeToString([]byte(bridgeToken)),
		"base64 raw": base64.RawStdEncoding.EncodeToString([]byte(bridgeToken)),
		"base64url":  base64.RawURLEncoding.EncodeToString([]byte(bridgeToken)),
		"hex":        hex.EncodeToString([]byte(bridgeToken)),
		"HEX":        strings.ToUpper(hex.EncodeToString([]byte(bridgeToken))),
	}
}

// echoAPI answers with the request's Authorization header (the token)
// in every place a response has.
func echoAPI(t *testing.T, seen *atomic.Value) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		tok := strings.TrimPrefix(auth, "Bearer ")
		seen.Store(tok)
		switch r.URL.Path {
		case "/json":
			json.NewEncoder(w).Encode(map[string]any{"headers": r.Header, "nested": []any{map[string]string{"t": tok}}})
		case "/text":
			fmt.Fprintf(w, "you sent %s", auth)
		case "/binary":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(append([]byte{0xff, 0xfe, 0x00}, []byte(auth)...))
		case "/header":
			w.Header().Set("X-Echo", tok)
			w.Header().Set("Set-Cookie", "s="+tok)
			fmt.Fprint(w, "ok")
		case "/error":
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "bad token %s", tok)
		case "/encoded":
			fmt.Fprintf(w, "u=%s b=%s bu=%s h=%s", url.QueryEscape(tok), base64.StdEncoding.EncodeToString([]byte(tok)),
				base64.RawURLEncoding.EncodeToString([]byte(tok)), hex.EncodeToString([]byte(tok)))
		case "/encoded-binary":
			w.Header().Set("Content-Type", "application/octet-stream")
			fmt.Fprintf(w, "\xff%s\xfe%s", base64.StdEncoding.EncodeToString([]byte(tok)), hex.EncodeToString([]byte(tok)))
		case "/redirect":
			http.Redirect(w, r, "/text?t="+url.QueryEscape(tok), http.StatusFound)
		case "/slow":
			time.Sleep(3 * time.Second)
			fmt.Fprint(w, tok)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// reasonServer answers every request with the token as the HTTP reason
// phrase.
func reasonServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				tok := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
				fmt.Fprintf(c, "HTTP/1.1 599 %s\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno", tok)
			}(c)
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestCredentialEcho has servers echo the bridge's credential in every
// field of a response (JSON, text, binary bodies, headers, errors, the
// reason phrase, redirects, encoded forms), and looks for it and its
// encodings in everything the sandbox gets: results, exceptions, task
// logs and tails, and the host's log.
func TestCredentialEcho(t *testing.T) {
	t.Parallel()
	var seen atomic.Value
	api := echoAPI(t, &seen)
	reason := reasonServer(t)
	sb, logs := newSandbox(t, host.Config{
		PluginDirs: []string{plugins(t)},
		Bridges: map[string]host.BridgeConfig{
			"api":    {Plugin: "http", Config: map[string]any{"base_url": api.URL, "token": bridgeToken, "timeout": "10s"}},
			"reason": {Plugin: "http", Config: map[string]any{"base_url": reason, "token": bridgeToken}},
		},
	})
	// flatten turns bytes into text, so that a credential hidden in a
	// base64 form of bytes shows in the result.
	const flatten = `
import base64
def flat(v):
    if isinstance(v, (bytes, bytearray)):
        return "BYTES:" + bytes(v).decode("latin-1")
    if isinstance(v, dict):
        return {str(k): flat(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [flat(x) for x in v]
    if hasattr(v, "__dict__") and not isinstance(v, type):
        return flat(vars(v))
    return v if isinstance(v, (str, int, float, bool, type(None))) else repr(v)
`
	check := func(t *testing.T, what, s string) {
		t.Helper()
		for form, v := range tokenForms() {
			if strings.Contains(s, v) {
				t.Errorf("%s shows the token (%s): %.500s", what, form, s)
			}
		}
	}
	for _, c := range []struct{ name, code string }{
		{"json body", `flat(api.get("/json"))`},
		{"text body", `flat(api.get("/text"))`},
		{"binary body", `flat(api.get("/binary"))`},
		{"response headers", `flat(api.get("/header"))`},
		{"error status body", `attempt(lambda: flat(api.get("/error")))`},
		{"encoded forms", `flat(api.get("/encoded"))`},
		{"encoded forms in binary", `flat(api.get("/encoded-binary"))`},
		{"redirect", `flat(api.get("/redirect"))`},
		{"reason phrase", `attempt(lambda: flat(reason.get("/x")))`},
		{"post echo", `flat(api.post("/json", json={"x": 1}))`},
		{"exception text", `attempt(lambda: api.get("/nope", params={"q": 1}))`},
		{"task result", `t = api.get.task("/binary")
await t
flat(t.result())`},
		{"task of reason phrase", `t = reason.get.task("/x")
try:
    await t
except BaseException as e:
    pass
[t.tail(20), flat(t.status()), t.error()]`},
		{"task tail of an error", `t = api.get.task("/error")
try:
    await t
except BaseException as e:
    pass
[t.tail(20), flat(t.status()), t.error(), flat(t.result())]`},
		{"help and search", `[sbx.help() if hasattr(sbx, "help") else "", flat(api.search("json"))]`},
		{"sbx.info", `flat(sbx.info())`},
		{"environment", `dict(__import__("os").environ)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, sb, attempt+flatten+c.code)
			if r.Error != nil && strings.Contains(r.Error.Type, "Sandbox") {
				t.Fatalf("the sandbox failed: %s", resultText(r))
			}
			check(t, "the result", resultText(r))
		})
	}
	t.Run("the tool really sent the token", func(t *testing.T) {
		// A control: the server got the token, so the echoes above held it.
		seen.Store("")
		run(t, sb, `api.get("/text")`)
		if got, _ := seen.Load().(string); got != bridgeToken {
			t.Errorf("the server got %q: the token was not sent, the test proves nothing", got)
		}
	})
	t.Run("task logs on disk", func(t *testing.T) {
		r := run(t, sb, `import os
out = []
d = "/workspace/.parselbox/tasks"
for n in (os.listdir(d) if os.path.isdir(d) else []):
    out.append(open(d + "/" + n, encoding="latin-1").read())
"\n".join(out)`)
		check(t, "a task log", resultText(r))
	})
	check(t, "the host's log", logs.String())
}
