package breakin

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/parselbox/parselbox/host"
)

// listener is a loopback HTTP server that counts the requests it gets:
// a forbidden one must never be reached, whatever the guest sees.
type listener struct {
	srv  *httptest.Server
	hits atomic.Int64
	port string
}

func newListener(t *testing.T, h http.HandlerFunc) *listener {
	l := &listener{}
	l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.hits.Add(1)
		if h != nil {
			h(w, r)
			return
		}
		fmt.Fprint(w, "reached "+r.URL.Path)
	}))
	t.Cleanup(l.srv.Close)
	_, l.port, _ = net.SplitHostPort(l.srv.Listener.Addr().String())
	return l
}

// netAttacks are the ways to reach a URL from the sandbox: JS fetch,
// pyodide.http, urllib, http.client, raw sockets, a WebSocket.
func netAttacks(host, port string) map[string]string {
	url := "http://" + host + ":" + port + "/x"
	p, _ := strconv.Atoi(port)
	return map[string]string{
		"js fetch": `await attempt_async(lambda: __import__("js").fetch(` + pyq(url) + `))`,
		"pyfetch":  `await attempt_async(lambda: __import__("pyodide.http").http.pyfetch(` + pyq(url) + `))`,
		"urllib":   `attempt(lambda: __import__("urllib.request").request.urlopen(` + pyq(url) + `, timeout=5).read())`,
		"http.client": `attempt(lambda: (lambda c: (c.request("GET", "/x"), c.getresponse().read()))(__import__("http.client").client.HTTPConnection(` +
			pyq(host) + `, ` + port + `, timeout=5)))`,
		"raw socket": `attempt(lambda: __import__("socket").create_connection((` + pyq(strings.Trim(host, "[]")) + `, ` + strconv.Itoa(p) + `), timeout=5).recv(10))`,
		"websocket":  `await attempt_async(lambda: __import__("asyncio").sleep(0.5, __import__("js").WebSocket.new(` + pyq("ws://"+host+":"+port+"/") + `).readyState))`,
		"sync XHR":   `attempt(lambda: __import__("pyodide.http").http.open_url(` + pyq(url) + `).read())`,
	}
}

// TestNetwork: with the network off nothing is reached; with an allowlist
// only the allowed host:port is, not another port, not another spelling of
// the same host, and not through a redirect.
func TestNetwork(t *testing.T) {
	t.Parallel()
	allowed := newListener(t, nil)
	forbidden := newListener(t, nil)
	redirect := newListener(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+forbidden.port+"/via-redirect", http.StatusFound)
	})
	_ = redirect

	off, _ := newSandbox(t, host.Config{})
	t.Run("off", func(t *testing.T) {
		for name, code := range netAttacks("127.0.0.1", allowed.port) {
			got := str(t, run(t, off, attempt+asyncAttempt+code))
			if strings.Contains(got, "reached") {
				t.Errorf("%s: %s", name, got)
			}
		}
		if n := allowed.hits.Load(); n != 0 {
			t.Errorf("with the network off, the server got %d requests", n)
		}
	})

	list, _ := newSandbox(t, host.Config{AllowNet: []string{"127.0.0.1:" + allowed.port, "127.0.0.1:" + redirect.port}})
	t.Run("allowlist lets the allowed port through", func(t *testing.T) {
		got := str(t, run(t, list, attempt+asyncAttempt+netAttacks("127.0.0.1", allowed.port)["js fetch"]))
		if !strings.Contains(got, "reached /x") {
			t.Errorf("the allowed port: %s", got)
		}
	})
	for _, h := range []string{"127.0.0.1", "localhost", "[::1]", "0.0.0.0", "127.1", "2130706433", "0x7f000001", "127.0.0.2", "[::ffff:127.0.0.1]"} {
		for name, code := range netAttacks(h, forbidden.port) {
			if h != "127.0.0.1" && name != "js fetch" && name != "raw socket" {
				continue // every way once; the other spellings with two
			}
			t.Run("allowlist other port "+h+" "+name, func(t *testing.T) {
				got := str(t, run(t, list, attempt+asyncAttempt+code))
				if strings.Contains(got, "reached") {
					t.Errorf("reached a forbidden port: %s", got)
				}
			})
		}
	}
	t.Run("allowlist redirect to a forbidden port", func(t *testing.T) {
		for name, code := range map[string]string{
			"js fetch": netAttacks("127.0.0.1", redirect.port)["js fetch"],
			"pyfetch":  netAttacks("127.0.0.1", redirect.port)["pyfetch"],
			"urllib":   netAttacks("127.0.0.1", redirect.port)["urllib"],
		} {
			got := str(t, run(t, list, attempt+asyncAttempt+code))
			if strings.Contains(got, "reached") {
				t.Errorf("%s followed a redirect to a forbidden port: %s", name, got)
			}
		}
	})
	if n := forbidden.hits.Load(); n != 0 {
		t.Errorf("the forbidden server got %d requests", n)
	}
}
