package testenv

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
)

// Serve runs serve (an MCP server's RunHTTP, say) on a fresh loopback
// listener until the test's cleanup, and returns the listener's address as
// http://host:port. The cleanup cancels serve's context, waits for it to
// return and fails the test if it ended with an error other than that.
// The listener is open when Serve returns: a request waits in its backlog
// until serve accepts it.
func Serve(t testing.TB, serve func(context.Context, net.Listener) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("serving %s: %v", ln.Addr(), err)
		}
	})
	return "http://" + ln.Addr().String()
}

// PostStatus POSTs body to url as a streamable-HTTP MCP client does
// (JSON, accepting JSON or an event stream), with header added, and
// returns the status code.
func PostStatus(t testing.TB, url string, header map[string]string, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
