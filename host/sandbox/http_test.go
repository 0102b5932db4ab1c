package sandbox_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host/sandbox"
)

// echoServer answers every request with what it received; it records the
// requests it served.
type echoServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newEchoServer(t *testing.T) *echoServer {
	t.Helper()
	s := &echoServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.URL.RequestURI())
		s.mu.Unlock()
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/echo?from=redirect", http.StatusFound)
			return
		case "/missing":
			http.Error(w, "no such thing", http.StatusNotFound)
			return
		}
		w.Header().Set("X-Echo-Method", r.Method)
		w.Header().Set("X-Echo-Header", r.Header.Get("X-Test"))
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, r.Method+" "+r.URL.RequestURI()+" "+string(body))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *echoServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// urllib.request and http.client work synchronously through fetch, under
// the sandbox's network rules: an allowed address answers; any other is
// refused with PermissionError (URLError from urllib) and no request
// reaches it.
func TestHTTPClients(t *testing.T) {
	t.Parallel()
	allowed, denied := newEchoServer(t), newEchoServer(t)
	sb := start(t, sandbox.Options{AllowNet: []string{hostPort(allowed.URL)}})
	ok, no := allowed.URL, denied.URL

	for _, c := range []struct{ name, code, want string }{
		{"urllib GET", fmt.Sprintf(`import urllib.request
with urllib.request.urlopen(%q + "/echo?a=1", timeout=10) as r:
    out = [r.status, r.headers["X-Echo-Method"], r.read().decode()]
out`, ok), `[200,"GET","GET /echo?a=1 "]`},
		{"urllib POST with a header", fmt.Sprintf(`import urllib.request
req = urllib.request.Request(%q + "/echo", data=b"hello", headers={"X-Test": "yes"}, method="POST")
r = urllib.request.urlopen(req)
[r.status, r.headers["X-Echo-Header"], r.read().decode()]`, ok), `[200,"yes","POST /echo hello"]`},
		{"urllib follows a redirect", fmt.Sprintf(`import urllib.request
r = urllib.request.urlopen(%q + "/redirect")
[r.status, r.geturl().endswith("/echo?from=redirect"), r.read().decode()]`, ok), `[200,true,"GET /echo?from=redirect "]`},
		{"urllib HTTPError", fmt.Sprintf(`import urllib.request, urllib.error
try:
    urllib.request.urlopen(%q + "/missing")
except urllib.error.HTTPError as e:
    out = [e.code, e.read().decode().strip()]
out`, ok), `[404,"no such thing"]`},
		{"http.client, two requests on one connection", fmt.Sprintf(`import http.client
c = http.client.HTTPConnection(%q)
out = []
for path in ("/echo/1", "/echo/2"):
    c.request("PUT", path, body="x" * 3)
    r = c.getresponse()
    out.append([r.status, r.read().decode()])
c.close()
out`, hostPort(ok)), `[[200,"PUT /echo/1 xxx"],[200,"PUT /echo/2 xxx"]]`},
		{"urllib, a denied address", fmt.Sprintf(`import urllib.request, urllib.error, errno
try:
    urllib.request.urlopen(%q + "/secret")
except urllib.error.URLError as e:
    out = [type(e.reason).__name__, e.reason.errno == errno.EACCES, e.reason.strerror]
out`, no), fmt.Sprintf(`["PermissionError",true,"network access to %s is not allowed in the sandbox (the host's network rules)"]`, hostPort(no))},
		{"http.client, a denied address", fmt.Sprintf(`import http.client
c = http.client.HTTPConnection(%q)
try:
    c.request("GET", "/secret")
    c.getresponse()
except PermissionError as e:
    out = e.strerror
out`, hostPort(no)), fmt.Sprintf(`"network access to %s is not allowed in the sandbox (the host's network rules)"`, hostPort(no))},
	} {
		r := run(t, sb, c.code)
		got, err := json.Marshal(output(t, r))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
	if got := denied.requests(); len(got) != 0 {
		t.Errorf("the denied server was reached: %q", got)
	}
	want := []string{"GET /echo?a=1", "POST /echo", "GET /redirect", "GET /echo?from=redirect", "GET /missing", "PUT /echo/1", "PUT /echo/2"}
	if diff := cmp.Diff(want, allowed.requests()); diff != "" {
		t.Errorf("requests served (-want +got):\n%s", diff)
	}
}

// With the network off, every address is refused the same way.
func TestHTTPClientNetworkOff(t *testing.T) {
	t.Parallel()
	srv := newEchoServer(t)
	sb := start(t, sandbox.Options{})
	r := run(t, sb, fmt.Sprintf(`import urllib.request
urllib.request.urlopen(%q)`, srv.URL))
	wantError(t, r, "URLError", "network access to "+hostPort(srv.URL)+" is not allowed in the sandbox")
	if got := srv.requests(); len(got) != 0 {
		t.Errorf("the server was reached: %q", got)
	}
}

// An interrupt ends a request that waits for its answer.
func TestHTTPClientInterrupted(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	sb := start(t, sandbox.Options{AllowNet: []string{hostPort(srv.URL)}})
	r := runTimeout(t, sb, fmt.Sprintf(`import urllib.request
urllib.request.urlopen(%q)`, srv.URL), 2*time.Second)
	wantError(t, r, "KeyboardInterrupt", "")
	if got := output(t, run(t, sb, "1+1")); got != 2.0 {
		t.Errorf("after the interrupt: %v", got)
	}
}

func hostPort(url string) string { return strings.TrimPrefix(url, "http://") }
