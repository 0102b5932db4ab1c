package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parselbox/parselbox/plugins/http/internal/petstore"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// testToken is the API's credential in the tests: it must reach the test
// server and nothing that Python sees.
const testToken = "tok-3f9c2a71e8b4d6"

// tokenEnv holds testToken in the environment (set by TestMain), for
// token_env.
const tokenEnv = "PARSELBOX_TEST_HTTP_TOKEN"

// noOwnRedactionEnv, passed to the plugin, turns its own redaction off
// (plugins started by sdktest.Start inherit it too: they check no
// redaction).
const noOwnRedactionEnv = "PARSELBOX_TEST_NO_OWN_REDACTION"

// The test binary doubles as the bridge plugin: started by a host (or by
// sdktest.Start), it serves the bridge.
func TestMain(m *testing.M) {
	if os.Getenv(sdk.Handshake.MagicCookieKey) != "" {
		// A bridge that does not redact, to prove that the host does.
		ownRedaction = os.Getenv(noOwnRedactionEnv) == ""
		main()
		return
	}
	os.Setenv(tokenEnv, testToken)
	os.Setenv(noOwnRedactionEnv, "1") // for the plugins that are passed it
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

// testAPI is the pet store on a loopback server, with endpoints for the
// edge cases, recording what it receives.
type testAPI struct {
	srv  *httptest.Server
	Base string // srv.URL + petstore.Prefix

	mu   sync.Mutex
	reqs []*http.Request // every request received (bodies not kept)
}

func newTestAPI(t testing.TB) *testAPI {
	t.Helper()
	a := &testAPI{}
	mux := http.NewServeMux()
	p := petstore.Prefix
	mux.HandleFunc("GET "+p+"/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // answers only when the client gives up
	})
	mux.HandleFunc("GET "+p+"/redirect/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://elsewhere.invalid/collect", http.StatusFound)
	})
	mux.HandleFunc("GET "+p+"/redirect/home", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, p+"/version", http.StatusFound)
	})
	mux.HandleFunc("GET "+p+"/bytes", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte{0x89, 'P', 'N', 'G', 0xff, 0xfe})
	})
	mux.HandleFunc("DELETE "+p+"/nothing", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	// Servers that echo the credentials they get, in every way.
	mux.HandleFunc("GET "+p+"/echo-binary", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write([]byte{0xff, 0xfe, 0x00})
		r.Header.Write(w) // Authorization: Bearer ...
	})
	mux.HandleFunc("GET "+p+"/reason", func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 418 Teapot says %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", r.Header.Get("Authorization"))
		buf.Flush()
	})
	mux.HandleFunc("GET "+p+"/encodings", func(w http.ResponseWriter, r *http.Request) {
		tok := []byte(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		b64 := base64.StdEncoding.EncodeToString
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{
			"url":       "https://x.example/cb?token=" + url.QueryEscape(string(tok)) + "&state=1",
			"base64":    b64(tok),
			"base64url": base64.RawURLEncoding.EncodeToString(tok),
			"in_b64_0":  b64([]byte("Authorization: Bearer " + string(tok))),
			"in_b64_1":  b64([]byte("Authorization:  Bearer " + string(tok))),
			"in_b64_2":  b64([]byte("Authorization:   Bearer " + string(tok))),
			"hex":       hex.EncodeToString(tok),
			"HEX":       strings.ToUpper(hex.EncodeToString(tok)),
		})
	})
	mux.Handle("/", petstore.New(testToken))
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.reqs = append(a.reqs, r.Clone(r.Context()))
		a.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(a.srv.Close)
	a.Base = a.srv.URL + p
	return a
}

// requests returns the requests received so far.
func (a *testAPI) requests() []*http.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.reqs)
}

// specFile is the path of a document of the pet store.
func specFile(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("internal", "petstore", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeFile writes a file in a temporary directory and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// configured returns the bridge configured with cfg, served in-process over
// gRPC.
func configured(t *testing.T, cfg map[string]any) *sdktest.Client {
	t.Helper()
	c := sdktest.NewHarness(t, newBridge())
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Configure(t.Context(), &sdk.ConfigureRequest{Config: raw}); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	return c
}

// call calls a tool with JSON arguments; a failed call is a result.
func call(t *testing.T, b sdk.BridgeServer, tool, args string) *sdk.CallToolResult {
	t.Helper()
	res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s(%s): %v", tool, args, err)
	}
	if strings.Contains(string(res.Content), testToken) || res.Error != nil && strings.Contains(res.Error.Message, testToken) {
		t.Errorf("%s(%s): the token is in the result: %s %+v", tool, args, res.Content, res.Error)
	}
	return res
}

// reply is a request's result without its headers (they hold dates).
type reply struct {
	OK     bool `json:"ok"`
	Status int  `json:"status"`
	Data   any  `json:"data"`
}

// ok calls a tool that must succeed and returns its result.
func ok(t *testing.T, b sdk.BridgeServer, tool, args string) (reply, map[string]string) {
	t.Helper()
	res := call(t, b, tool, args)
	if res.IsError {
		t.Fatalf("%s(%s) failed: %+v", tool, args, res.Error)
	}
	var r reply
	var h struct {
		Headers map[string]string `json:"headers"`
	}
	if err := json.Unmarshal(res.Content, &r); err != nil {
		t.Fatalf("%s(%s): %v in %s", tool, args, err, res.Content)
	}
	json.Unmarshal(res.Content, &h)
	return r, h.Headers
}

// failure calls a tool that must fail and returns its error.
func failure(t *testing.T, b sdk.BridgeServer, tool, args string) *sdk.ToolError {
	t.Helper()
	res := call(t, b, tool, args)
	if !res.IsError || res.Error == nil {
		t.Fatalf("%s(%s) succeeded: %s", tool, args, res.Content)
	}
	return res.Error
}

// jsonValue decodes JSON text, as a result's data is decoded.
func jsonValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
