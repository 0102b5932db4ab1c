package main

import (
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/internal/testenv"
)

// startHTTPServer runs `parselbox --transport http` as a subprocess and
// returns it with the URL of /mcp it logged.
func startHTTPServer(t *testing.T, args ...string) (*exec.Cmd, string, *testenv.SyncBuffer, chan error) {
	t.Helper()
	cmd := parselbox(t, append(append(sandboxArgs(t), "--transport", "http", "--port", "0"), args...)...)
	stderr := &testenv.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
	})
	urlRE := regexp.MustCompile(`url=(http://\S+/mcp)`)
	deadline := time.Now().Add(120 * time.Second)
	for {
		if m := urlRE.FindStringSubmatch(stderr.String()); m != nil {
			return cmd, m[1], stderr, exited
		}
		select {
		case err := <-exited:
			t.Fatalf("exited (%v) before serving:\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no URL logged:\n%s", stderr.String())
		}
	}
}

func status(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// waitExit waits for the process to exit, within d.
func waitExit(t *testing.T, exited chan error, d time.Duration, stderr *testenv.SyncBuffer) error {
	t.Helper()
	select {
	case err := <-exited:
		return err
	case <-time.After(d):
		t.Fatalf("still running %v later:\n%s", d, stderr.String())
		return nil
	}
}

// SIGTERM drains: /readyz turns 503, new sessions are refused with a clear
// error, the open session goes on until it closes, then parselbox exits 0.
func TestDrainOnSIGTERM(t *testing.T) {
	t.Parallel()
	cmd, url, stderr, exited := startHTTPServer(t, "--pool-size", "1", "--drain-timeout", "5m")
	base := strings.TrimSuffix(url, "/mcp")
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	callCode(t, cs, "kept = 41")
	if got := status(t, base+"/readyz"); got != 200 {
		t.Errorf("/readyz before SIGTERM: %d", got)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for status(t, base+"/readyz") != http.StatusServiceUnavailable {
		if time.Now().After(deadline) {
			t.Fatalf("/readyz still ready after SIGTERM:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := status(t, base+"/healthz"); got != 200 {
		t.Errorf("/healthz while draining: %d", got)
	}
	if _, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil); err == nil {
		t.Error("a new session opened while draining")
	}
	// What the client was told (the go-sdk keeps only the status).
	resp, err := http.Post(url, "application/json", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "draining") ||
		!strings.Contains(string(body), "another host") {
		t.Errorf("a new session while draining: %d %q", resp.StatusCode, body)
	}
	if got := text(callCode(t, cs, "kept + 1")); got != `{"result":42}` {
		t.Errorf("the open session while draining: %s", got)
	}
	select {
	case err := <-exited:
		t.Fatalf("exited (%v) with a session open:\n%s", err, stderr.String())
	case <-time.After(300 * time.Millisecond):
	}
	cs.Close()
	if err := waitExit(t, exited, 30*time.Second, stderr); err != nil {
		t.Errorf("exit after the drain: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "drained") {
		t.Errorf("stderr does not say it drained:\n%s", stderr.String())
	}
}

// A second SIGTERM stops at once, without waiting for the open sessions;
// the drain timeout closes them too.
func TestSecondSIGTERM(t *testing.T) {
	t.Parallel()
	cmd, url, stderr, exited := startHTTPServer(t, "--pool-size", "0", "--drain-timeout", "10m")
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callCode(t, cs, "1")
	cmd.Process.Signal(syscall.SIGTERM)
	waitFor := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "draining") {
		if time.Now().After(waitFor) {
			t.Fatalf("no drain after SIGTERM:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	began := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	if err := waitExit(t, exited, 30*time.Second, stderr); err != nil {
		t.Errorf("exit after a second SIGTERM: %v\n%s", err, stderr.String())
	}
	t.Logf("exited %v after the second SIGTERM", time.Since(began))
	if !strings.Contains(stderr.String(), "second signal") {
		t.Errorf("stderr does not say why it stopped:\n%s", stderr.String())
	}
}
