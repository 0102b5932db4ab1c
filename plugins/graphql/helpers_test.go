package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/parselbox/parselbox/plugins/graphql/internal/countries"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// The test binary doubles as the bridge plugin: started by sdktest.Start or
// by a host (which set go-plugin's magic cookie), it serves the bridge.
func TestMain(m *testing.M) {
	if os.Getenv(sdk.Handshake.MagicCookieKey) != "" {
		main()
		return
	}
	os.Setenv(tokenEnv, testToken)
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

// testToken is the bearer token of the test servers. It contains a "/" so
// that a server escaping it as "\/" is tried too.
const testToken = "tok-9f3/Zq7w-secret"

// tokenEnv holds testToken in the tests' environment.
const tokenEnv = "PARSELBOX_TEST_GRAPHQL_TOKEN"

// server is a real GraphQL server (package countries) on loopback, with
// routes that misbehave in the ways the bridge must handle.
type server struct {
	*httptest.Server

	mu            sync.Mutex
	authorization []string // Authorization headers seen on /graphql
	introspected  int      // introspection requests on /graphql
}

// newServer starts a server whose /graphql requires testToken.
func newServer(t *testing.T) *server {
	t.Helper()
	s := &server{}
	api := countries.New(testToken)
	mux := http.NewServeMux()
	mux.HandleFunc("/graphql", func(w http.ResponseWriter, r *http.Request) {
		body := readBody(r)
		s.mu.Lock()
		s.authorization = append(s.authorization, r.Header.Get("Authorization"))
		if strings.Contains(body, "__schema") {
			s.introspected++
		}
		s.mu.Unlock()
		api.ServeHTTP(w, r)
	})
	mux.HandleFunc("/open", countries.New("").ServeHTTP)
	mux.HandleFunc("/bad-gateway", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html>\n<head><title>502 Bad Gateway</title></head>\n<body><h1>502 Bad Gateway</h1></body></html>")
	})
	mux.HandleFunc("/not-graphql", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status": "ok"}`)
	})
	mux.HandleFunc("/leaky", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "request refused; headers were: Authorization: "+r.Header.Get("Authorization")+", X-Api-Key: "+r.Header.Get("X-Api-Key"), http.StatusForbidden)
	})
	// A long error page quoting the Authorization header where the bridge
	// cuts it short.
	mux.HandleFunc("/long-leak", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, strings.Repeat("x", 180)+" "+r.Header.Get("Authorization"), http.StatusForbidden)
	})
	mux.HandleFunc("/escaped", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		escaped := strings.ReplaceAll(r.Header.Get("Authorization"), "/", `\/`)
		fmt.Fprintf(w, `{"data": {"authorization": "%s", "big": 12345678901234567890, "note": "line\nbreak"}}`, escaped)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/graphql?session=abcdef123", http.StatusFound)
	})
	mux.HandleFunc("/no-introspection", func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(readBody(r), "__schema") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"errors": [{"message": "GraphQL introspection is not allowed"}]}`)
			return
		}
		countries.New("").ServeHTTP(w, r)
	})
	mux.HandleFunc("/cut", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		fmt.Fprint(w, `{"data": {`) // and the connection ends
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server notices the client going away
		<-r.Context().Done()
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *server) seen() (authorization []string, introspected int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.authorization...), s.introspected
}

// readBody reads r's body and puts it back for the next handler.
func readBody(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return string(b)
}

// downURL is the URL of a loopback port on which nothing listens.
func downURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/graphql"
}

// configured returns the bridge served in-process over gRPC, configured
// with cfg.
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

// call calls a tool; it returns the decoded result, or the tool's error.
func call(t *testing.T, c sdk.BridgeServer, tool string, args any) (any, *sdk.ToolError) {
	t.Helper()
	return callCtx(t.Context(), t, c, &sdk.CallToolRequest{Name: tool}, args)
}

func callCtx(ctx context.Context, t *testing.T, c sdk.BridgeServer, req *sdk.CallToolRequest, args any) (any, *sdk.ToolError) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	req.Arguments = raw
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("CallTool %s: %v", req.Name, err)
	}
	if res.IsError {
		return nil, res.Error
	}
	var v any
	if err := json.Unmarshal(res.Content, &v); err != nil {
		t.Fatalf("result of %s: %v", req.Name, err)
	}
	return v, nil
}

// mustCall is call for calls that must succeed.
func mustCall(t *testing.T, c sdk.BridgeServer, tool string, args any) any {
	t.Helper()
	v, te := call(t, c, tool, args)
	if te != nil {
		t.Fatalf("%s(%v): %s: %s", tool, args, te.Code, te.Message)
	}
	return v
}

// jsonValue decodes a JSON literal, for expected values.
func jsonValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad expected JSON %s: %v", s, err)
	}
	return v
}
