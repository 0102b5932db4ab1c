package mcpserver

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parselbox/parselbox/host"
)

// get fetches a URL without the token, returning the status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sample is the value of the series `name{labels}` in a Prometheus text
// exposition, -1 when absent. labels is as written there: `outcome="ok"`.
func sample(body, name, labels string) float64 {
	series := name
	if labels != "" {
		series += "{" + labels + "}"
	}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// /healthz, /readyz and /metrics: no token needed, readiness follows the
// session limit, and the metrics count sessions, executions by outcome,
// tool calls by bridge, refusals and restarts, without a session's id.
func TestOpsEndpoints(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef-ops"
	srv := newServer(t, Options{
		Config:   host.Config{Context: map[string]any{"calc": calc{}}},
		Settings: with(func(s *Settings) { s.MaxSessions, s.PoolSize, s.AuthToken = 1, 1, token }),
	})
	mcpURL := startHTTP(t, srv)
	base := strings.TrimSuffix(mcpURL, Path)

	if code, body := get(t, base+HealthPath); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get(t, base+ReadyPath); code != 200 {
		t.Errorf("/readyz with no session: %d %q", code, body)
	}
	if code, _ := get(t, mcpURL); code != http.StatusUnauthorized {
		t.Errorf("/mcp without the token: %d, want 401", code)
	}
	_, m := get(t, base+MetricsPath)
	if got := sample(m, "parselbox_sessions_open", ""); got != 0 {
		t.Errorf("sessions_open before any session: %v\n%s", got, m)
	}

	c, _ := newClient(nil)
	cs, err := connectHTTP(t, mcpURL, token, c)
	if err != nil {
		t.Fatal(err)
	}
	if got := value(t, cs, "calc.add(a=2, b=3)"); got != 5.0 {
		t.Errorf("calc.add = %v", got)
	}
	if r := run(t, cs, "1/0"); !strings.Contains(r.Error, "ZeroDivisionError") {
		t.Errorf("1/0: %+v", r)
	}
	if code, body := get(t, base+ReadyPath); code != http.StatusServiceUnavailable || !strings.Contains(body, "max_sessions") {
		t.Errorf("/readyz at the session limit: %d %q", code, body)
	}
	if _, err := connectHTTP(t, mcpURL, token, c); err == nil {
		t.Error("a second session beyond max_sessions opened")
	}

	// A crash of the sandbox between executions is a restart, by cause.
	sb := onlySession(t, srv).Sandbox()
	pid := sb.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 120*time.Second, "the restart", func() bool { p := sb.PID(); return p != pid && p > 0 })

	_, m = get(t, base+MetricsPath)
	for _, c := range []struct {
		name, labels string
		want         float64
	}{
		{"parselbox_sessions_open", "", 1},
		{"parselbox_sessions_created_total", "", 1},
		{"parselbox_sessions_refused_total", `reason="limit"`, 1},
		{"parselbox_executions_total", `outcome="raised"`, 1},
		{"parselbox_tool_calls_total", `bridge="calc",outcome="ok"`, 1},
		{"parselbox_sandbox_restarts_total", `cause="crash"`, 1},
		{"parselbox_ready", "", 0},
		{"parselbox_draining", "", 0},
	} {
		if got := sample(m, c.name, c.labels); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// ok: the add, and the pool's warm-up is not counted as the session's
	// (it ran before the session took the sandbox).
	if got := sample(m, "parselbox_executions_total", `outcome="ok"`); got < 1 {
		t.Errorf("executions ok = %v", got)
	}
	if got := sample(m, "parselbox_execution_duration_seconds_count", ""); got < 2 {
		t.Errorf("execution_duration_seconds_count = %v", got)
	}
	if got := sample(m, "parselbox_sandbox_resident_memory_bytes", ""); got < 10<<20 {
		t.Errorf("sandbox_resident_memory_bytes = %v", got)
	}
	if got := sample(m, "process_resident_memory_bytes", ""); got <= 0 {
		t.Errorf("process_resident_memory_bytes = %v", got)
	}
	if id := cs.ID(); id == "" || strings.Contains(m, id) {
		t.Errorf("the metrics name the session %q", id)
	}

	// The agent is told, in the next result, that the crash lost the
	// sandbox's state; and only once.
	if r := run(t, cs, "6 * 7"); r.Result != 42.0 || !strings.Contains(r.Note, "state was lost") {
		t.Errorf("the execution after the crash: %s", r.Text)
	}
	if r := run(t, cs, "6 * 7"); r.Note != "" {
		t.Errorf("the loss was told twice: %s", r.Text)
	}
}

// Drain: /readyz says draining, a new session is refused with 503 and a
// clear message, the open session goes on, and Drain returns once it
// closes.
func TestDrain(t *testing.T) {
	t.Parallel()
	srv := newServer(t, Options{Settings: with(func(s *Settings) { s.PoolSize = 1 })})
	mcpURL := startHTTP(t, srv)
	base := strings.TrimSuffix(mcpURL, Path)
	c, _ := newClient(nil)
	cs, err := connectHTTP(t, mcpURL, "", c)
	if err != nil {
		t.Fatal(err)
	}
	value(t, cs, "kept = 41")

	drained := make(chan error, 1)
	go func() { drained <- srv.Drain(context.Background()) }()
	waitFor(t, 10*time.Second, "draining", srv.Draining)
	if code, body := get(t, base+ReadyPath); code != http.StatusServiceUnavailable || !strings.Contains(body, "draining") {
		t.Errorf("/readyz while draining: %d %q", code, body)
	}
	if code, _ := get(t, base+HealthPath); code != 200 {
		t.Errorf("/healthz while draining: %d", code)
	}
	req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "draining") {
		t.Errorf("a new session while draining: %d %q", resp.StatusCode, body)
	}
	if _, err := connectHTTP(t, mcpURL, "", c); err == nil {
		t.Error("a go-sdk client opened a session while draining")
	}
	if got := value(t, cs, "kept + 1"); got != 42.0 {
		t.Errorf("the open session while draining: %v", got)
	}
	select {
	case err := <-drained:
		t.Fatalf("Drain returned with a session open: %v", err)
	default:
	}
	waitFor(t, 10*time.Second, "the pool to empty", func() bool { return srv.Pooled() == 0 })
	cs.Close()
	select {
	case err := <-drained:
		if err != nil {
			t.Errorf("Drain: %v", err)
		}
	case <-time.After(2 * time.Minute): // a deadline, not a measure
		t.Fatal("Drain did not return after the last session closed")
	}
	_, m := get(t, base+MetricsPath)
	for _, c := range []struct {
		name, labels string
		want         float64
	}{
		{"parselbox_sessions_closed_total", "", 1},
		{"parselbox_sessions_refused_total", `reason="draining"`, 2}, // at least: a client may probe first
		{"parselbox_draining", "", 1},
	} {
		if got := sample(m, c.name, c.labels); got < c.want || (got != c.want && c.labels == "") {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// A bounded drain gives up with the context's error.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := srv.Drain(ctx); err != nil {
		t.Errorf("Drain with nothing open: %v", err)
	}
}
