package breakin

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/mcpserver"
	"github.com/parselbox/parselbox/internal/testenv"
)

const serverToken = "breakin-token-5b8e1f0a9c"

// startServer serves MCP over HTTP on loopback with a token.
func startServer(t *testing.T) string {
	t.Helper()
	s := mcpserver.DefaultSettings()
	s.AuthToken, s.PoolSize = serverToken, 0
	srv, err := mcpserver.New(mcpserver.Options{
		Config:   host.Config{RuntimeDir: testenv.Runtime(t).Dir, CacheDir: testenv.CacheDir(t)},
		Settings: &s,
		Version:  "breakin",
		Logger:   hclog.NewNullLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return testenv.Serve(t, srv.RunHTTP) + mcpserver.Path
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connect(t *testing.T, endpoint string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "breakin", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{
		Endpoint: endpoint, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearerTransport{serverToken}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// execute runs code and returns the text of the tool's answer.
func execute(t *testing.T, cs *mcp.ClientSession, code string) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolName, Arguments: map[string]any{"code": code}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Content)
	return string(b)
}

// TestHTTPServer attacks the MCP server over HTTP: requests without the
// token or with a wrong one, from a foreign origin, too big; one session
// reaching another's state or files; resources outside the workspace;
// weak tokens in the settings.
func TestHTTPServer(t *testing.T) {
	t.Parallel()
	endpoint := startServer(t)
	post := func(header map[string]string, body string) int {
		t.Helper()
		return testenv.PostStatus(t, endpoint, header, body)
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	auth := "Bearer " + serverToken
	for _, c := range []struct {
		name   string
		header map[string]string
		body   string
		want   int
	}{
		{"no token", nil, ping, 401},
		{"wrong token", map[string]string{"Authorization": "Bearer " + strings.Repeat("x", len(serverToken))}, ping, 401},
		{"token prefix", map[string]string{"Authorization": "Bearer " + serverToken[:len(serverToken)-1]}, ping, 401},
		{"token with suffix", map[string]string{"Authorization": auth + "x"}, ping, 401},
		{"token as basic", map[string]string{"Authorization": "Basic " + serverToken}, ping, 401},
		{"token in a cookie", map[string]string{"Cookie": "token=" + serverToken}, ping, 401},
		{"token in another header", map[string]string{"X-Auth-Token": serverToken}, ping, 401},
		{"empty bearer", map[string]string{"Authorization": "Bearer "}, ping, 401},
		{"foreign origin", map[string]string{"Authorization": auth, "Origin": "https://evil.example"}, ping, 403},
		{"null origin", map[string]string{"Authorization": auth, "Origin": "null"}, ping, 403},
		{"lookalike origin", map[string]string{"Authorization": auth, "Origin": "http://localhost.evil.example"}, ping, 403},
		{"loopback ip lookalike origin", map[string]string{"Authorization": auth, "Origin": "http://127.0.0.1.evil.example"}, ping, 403},
		{"userinfo origin", map[string]string{"Authorization": auth, "Origin": "http://localhost@evil.example"}, ping, 403},
		{"body too big", map[string]string{"Authorization": auth}, `{"x":"` + strings.Repeat("a", mcpserver.MaxRequestBytes) + `"}`, 413},
		{"control: the right token", map[string]string{"Authorization": auth}, ping, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := post(c.header, c.body); got != c.want {
				t.Errorf("status %d, want %d", got, c.want)
			}
		})
	}
	for _, c := range []struct{ name, token string }{{"blank token", "   "}, {"short token", "abc123"}, {"padded short token", "  short-token  "}} {
		t.Run("settings refuse a "+c.name, func(t *testing.T) {
			s := mcpserver.DefaultSettings()
			s.AuthToken = c.token
			if err := s.Validate(); err == nil {
				t.Errorf("token %q accepted", c.token)
			}
		})
	}

	a, b := connect(t, endpoint), connect(t, endpoint)
	execute(t, a, "secret_of_a = 'A-ONLY-51c2'\nopen('/workspace/a.txt', 'w').write('A-FILE-7e3d')\n1")
	t.Run("session isolation: variables", func(t *testing.T) {
		if got := execute(t, b, "globals().get('secret_of_a', 'absent')"); strings.Contains(got, "A-ONLY") {
			t.Errorf("session b sees a's variable: %s", got)
		}
	})
	t.Run("session isolation: files", func(t *testing.T) {
		got := execute(t, b, "import os\n[os.listdir('/workspace'), open('/workspace/a.txt').read() if os.path.exists('/workspace/a.txt') else None]")
		if strings.Contains(got, "A-FILE") || strings.Contains(got, "a.txt'") && !strings.Contains(got, "[]") {
			t.Errorf("session b sees a's files: %s", got)
		}
	})
	t.Run("session isolation: resources", func(t *testing.T) {
		res, err := b.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///workspace/a.txt"})
		if err == nil && res != nil && len(res.Contents) > 0 && strings.Contains(res.Contents[0].Text, "A-FILE") {
			t.Errorf("session b reads a's file as a resource")
		}
	})
	t.Run("control: a reads its own resource", func(t *testing.T) {
		res, err := a.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///workspace/a.txt"})
		if err != nil || len(res.Contents) == 0 || res.Contents[0].Text != "A-FILE-7e3d" {
			t.Errorf("a's resource: %v, %v", res, err)
		}
	})
	for _, uri := range []string{
		"file:///etc/passwd", "file:///workspace/../etc/passwd", "file:///workspace/%2e%2e/%2e%2e/etc/passwd",
		"file:///workspace/..%2f..%2fetc/passwd", "file://localhost/etc/passwd", "file:///proc/self/environ",
		"file:///workspace/./../../../../etc/passwd", "file:etc/passwd", "http://127.0.0.1/", "file:///mnt/../etc/passwd",
	} {
		t.Run("resource traversal "+uri, func(t *testing.T) {
			res, err := a.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
			if err == nil {
				b, _ := json.Marshal(res)
				t.Errorf("read %s: %.200s", uri, b)
			}
		})
	}
}
