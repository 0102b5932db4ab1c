//go:build fleet

package fleet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/internal/testenv"
)

// sessions is how many MCP sessions the fleet serves at once.
const sessions = 30

// host is one parselbox process of the fleet.
type host struct {
	name   string
	addr   string // host:port
	cmd    *exec.Cmd
	stderr *testenv.SyncBuffer
	exited chan error
}

// binary is bin/parselbox (make build), or $PARSELBOX_BIN.
func binary(t *testing.T) string {
	if b := os.Getenv("PARSELBOX_BIN"); b != "" {
		return b
	}
	b := filepath.Join(testenv.ModuleRoot(t), "bin", "parselbox")
	if _, err := os.Stat(b); err != nil {
		t.Fatalf("%s: %v (run make build, or make fleet-test)", b, err)
	}
	return b
}

func startHost(t *testing.T, name string) *host {
	t.Helper()
	cmd := exec.Command(binary(t), "--transport", "http", "--port", "0",
		"--runtime-dir", testenv.Runtime(t).Dir, "--cache-dir", testenv.CacheDir(t),
		"--pool-size", "0", "--max-sessions", "25", "--drain-timeout", "3m", "--timeout", "120",
		"--env", "FLEET_HOST="+name)
	h := &host{name: name, cmd: cmd, stderr: &testenv.SyncBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = h.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { h.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-h.exited
		}
	})
	return h
}

// waitServing waits for the host to log its URL.
func (h *host) waitServing(t *testing.T) {
	t.Helper()
	re := regexp.MustCompile(`url=http://(\S+)/mcp`)
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if m := re.FindStringSubmatch(h.stderr.String()); m != nil {
			h.addr = m[1]
			return
		}
		select {
		case err := <-h.exited:
			t.Fatalf("%s exited (%v):\n%s", h.name, err, h.stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not serve:\n%s", h.name, h.stderr.String())
		}
	}
}

func httpGet(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// metric sums the series of name whose labels contain match, in the
// host's /metrics.
func (h *host) metric(t *testing.T, name, match string) float64 {
	t.Helper()
	code, body, err := httpGet("http://" + h.addr + "/metrics")
	if err != nil || code != 200 {
		t.Fatalf("%s /metrics: %d %v", h.name, code, err)
	}
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		series, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		n, labels, _ := strings.Cut(series, "{")
		if n != name || !strings.Contains(labels, match) {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}

func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startHAProxy runs Debian's haproxy with the shipped configuration in
// front of the hosts.
func startHAProxy(t *testing.T, hosts []*host) string {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("PARSELBOX_REQUIRE_FLEET") != "" {
			t.Fatal("haproxy is not installed (apt-get install haproxy; make fleet-test does) and PARSELBOX_REQUIRE_FLEET is set")
		}
		t.Skip("haproxy is not installed: make fleet-test installs it")
	}
	cfg := filepath.Join(testenv.ModuleRoot(t), "deploy", "haproxy", "haproxy.cfg")
	bind := freePort(t)
	cmd := exec.Command(bin, "-db", "-f", cfg)
	cmd.Env = append(os.Environ(), "HAPROXY_BIND="+bind)
	for i, h := range hosts {
		cmd.Env = append(cmd.Env, fmt.Sprintf("PARSELBOX_%d=%s", i+1, h.addr))
	}
	log := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("haproxy log:\n%s", log.String())
		}
	})
	// Wait for it to listen, then for its health checks to see the hosts
	// up (rise 2 × inter 500ms).
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.Dial("tcp", bind); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy does not listen:\n%s", log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(2 * time.Second)
	return "http://" + bind + "/mcp"
}

// agent is one MCP client with its session.
type agent struct {
	id    int
	cs    *mcp.ClientSession
	host  string // the fleet host that serves the session
	calls map[string]int
}

func connect(ctx context.Context, url string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "fleet-test", Version: "1"}, nil)
	// The go-sdk's default retries: a real client reconnects its stream.
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
}

// call runs code in the agent's session and returns the text result.
func (a *agent) call(ctx context.Context, code string) (string, error) {
	res, err := a.cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": code}})
	if err != nil {
		return "", err
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		return "", fmt.Errorf("execute_code(%q): %s", code, text)
	}
	return text, nil
}

// open starts a session through the load balancer, sets its state, and
// learns which host serves it.
func open(ctx context.Context, url string, id int) (*agent, error) {
	cs, err := connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("agent %d: connecting: %w", id, err)
	}
	a := &agent{id: id, cs: cs, calls: map[string]int{}}
	text, err := a.call(ctx, fmt.Sprintf("import os\nstate = %d\nos.environ['FLEET_HOST']", id))
	if err != nil {
		cs.Close()
		return nil, fmt.Errorf("agent %d: %w", id, err)
	}
	a.host = strings.TrimSuffix(strings.TrimPrefix(text, `{"result":"`), `"}`)
	a.calls[a.host]++
	return a, nil
}

// check asks the session for its state, which must have been kept.
func (a *agent) check(ctx context.Context) error {
	text, err := a.call(ctx, "(state, os.environ['FLEET_HOST'])")
	if err != nil {
		return fmt.Errorf("agent %d on %s: %w", a.id, a.host, err)
	}
	if want := fmt.Sprintf(`{"result":[%d,%q]}`, a.id, a.host); text != want {
		return fmt.Errorf("agent %d: got %s, want %s", a.id, text, want)
	}
	a.calls[a.host]++
	return nil
}

// parallel runs f for 0..n-1, a few at a time, and returns the errors.
func parallel(n, width int, f func(i int) error) []error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, width)
	)
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := f(i); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}

func TestFleet(t *testing.T) {
	ctx := context.Background()
	began := time.Now()
	// One after the other, and sessions below one at a time: on a busy
	// machine, many boots at once can take longer than a boot may.
	var hosts []*host
	byName := map[string]*host{}
	for _, name := range []string{"h1", "h2", "h3"} {
		h := startHost(t, name)
		h.waitServing(t)
		hosts = append(hosts, h)
		byName[h.name] = h
	}
	url := startHAProxy(t, hosts)
	t.Logf("fleet up in %v: %s, %s, %s behind %s", time.Since(began).Round(time.Millisecond), hosts[0].addr, hosts[1].addr, hosts[2].addr, url)

	// 1. 30 sessions, each on one host, keep their state across calls.
	agents := make([]*agent, sessions)
	errs := parallel(sessions, 1, func(i int) error {
		a, err := open(ctx, url, i)
		agents[i] = a
		return err
	})
	for _, err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Cleanup(func() {
		for _, a := range agents {
			if a != nil {
				a.cs.Close()
			}
		}
	})
	for round := range 3 {
		for _, err := range parallel(sessions, 10, func(i int) error { return agents[i].check(ctx) }) {
			t.Errorf("round %d: %v", round, err)
		}
	}
	count := map[string]int{}
	for _, a := range agents {
		count[a.host]++
	}
	t.Logf("sessions per host: %v (%v since start)", count, time.Since(began).Round(time.Millisecond))
	if len(count) != 3 {
		t.Errorf("the sessions landed on %d hosts, want all 3: %v", len(count), count)
	}
	// /metrics adds up: each host counts the sessions and executions its
	// clients saw, and the sums are the fleet's.
	checkMetrics(t, agents, hosts)

	// 2. Kill a host: only its sessions are lost; their clients get 404
	// and recover with a new session; the others keep their state.
	victim := byName["h1"]
	victim.cmd.Process.Signal(syscall.SIGKILL)
	<-victim.exited
	var lost, kept int
	// One at a time: each recovery boots a sandbox.
	for _, err := range parallel(sessions, 1, func(i int) error {
		a := agents[i]
		if a.host != victim.name {
			kept++
			return a.check(ctx)
		}
		lost++
		_, err := a.call(ctx, "state")
		// The 404 reaches the client on its call or on its event stream's
		// reconnection (the go-sdk then closes the session, and says so
		// in text).
		if !errors.Is(err, mcp.ErrSessionMissing) && (err == nil || !strings.Contains(err.Error(), mcp.ErrSessionMissing.Error())) {
			return fmt.Errorf("agent %d on the killed host: %v, want the spec's 404 (session not found)", a.id, err)
		}
		a.cs.Close()
		b, err := open(ctx, url, a.id) // the client's recovery
		if err != nil {
			return fmt.Errorf("agent %d recovering: %w", a.id, err)
		}
		if b.host == victim.name {
			return fmt.Errorf("agent %d: the new session is on the killed host", a.id)
		}
		for h, n := range a.calls {
			b.calls[h] += n
		}
		agents[i] = b
		return b.check(ctx)
	}) {
		t.Error(err)
	}
	t.Logf("killed %s: %d sessions lost and recovered elsewhere, %d kept", victim.name, lost, kept)
	if lost == 0 {
		t.Error("the killed host had no session")
	}

	// 3. Drain a host: new sessions go to the others, and no call fails,
	// neither on the draining host's sessions nor on new ones opened
	// while it begins to drain.
	drained := byName["h2"]
	drained.cmd.Process.Signal(syscall.SIGTERM)
	var (
		fresh   []*agent
		freshMu sync.Mutex
	)
	for _, err := range parallel(8, 1, func(i int) error {
		if i == 2 {
			time.Sleep(1500 * time.Millisecond) // the health check saw the drain
		}
		a, err := open(ctx, url, 100+i)
		if err != nil {
			return fmt.Errorf("a new session while %s drains: %w", drained.name, err)
		}
		freshMu.Lock()
		fresh = append(fresh, a)
		freshMu.Unlock()
		if i >= 2 && a.host == drained.name {
			return fmt.Errorf("agent %d: a new session on the draining host", a.id)
		}
		return a.check(ctx)
	}) {
		t.Error(err)
	}
	for _, err := range parallel(sessions, 10, func(i int) error { return agents[i].check(ctx) }) {
		t.Errorf("while %s drains: %v", drained.name, err)
	}
	if code, _, err := httpGet("http://" + drained.addr + "/readyz"); err != nil || code != http.StatusServiceUnavailable {
		t.Errorf("%s /readyz while draining: %d %v", drained.name, code, err)
	}
	all := append(append([]*agent{}, agents...), fresh...)
	checkMetrics(t, all, []*host{drained, byName["h3"]})
	if n := drained.metric(t, "parselbox_sessions_refused_total", `reason="draining"`); n != 0 {
		t.Logf("%s refused %v new sessions while draining (retried elsewhere by haproxy)", drained.name, n)
	}
	// Its last session closed, the draining host exits 0.
	for _, a := range all {
		if a.host == drained.name {
			a.cs.Close()
		}
	}
	select {
	case err := <-drained.exited:
		if err != nil {
			t.Errorf("%s after the drain: %v\n%s", drained.name, err, drained.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Errorf("%s still runs after its sessions closed", drained.name)
	}
	t.Logf("fleet test done in %v", time.Since(began).Round(time.Millisecond))
}

// checkMetrics compares each host's /metrics with what the clients saw.
func checkMetrics(t *testing.T, agents []*agent, hosts []*host) {
	t.Helper()
	for _, h := range hosts {
		var open, calls int
		for _, a := range agents {
			if a.host == h.name {
				open++
			}
			calls += a.calls[h.name]
		}
		if got := h.metric(t, "parselbox_sessions_open", ""); got != float64(open) {
			t.Errorf("%s: parselbox_sessions_open = %v, the clients hold %d", h.name, got, open)
		}
		// Every call the clients made there, plus the pool's warm-up runs
		// (which go through Execute too): at least the clients' calls.
		if got := h.metric(t, "parselbox_executions_total", `outcome="ok"`); got < float64(calls) {
			t.Errorf("%s: parselbox_executions_total{ok} = %v, the clients made %d calls", h.name, got, calls)
		}
		if got := h.metric(t, "parselbox_executions_total", `outcome="raised"`); got != 0 {
			t.Errorf("%s: %v executions raised", h.name, got)
		}
	}
}
