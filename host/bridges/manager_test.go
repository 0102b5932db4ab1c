package bridges_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/host/bridges"
	"github.com/parselbox/parselbox/internal/testenv"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

func TestStartDescribeCall(t *testing.T) {
	t.Parallel()
	m := newManager(t, bridges.Options{})
	b := start(t, m, "test", config(t, nil))
	d, err := b.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "testbridge" || d.Version != "v0.0.1" || len(d.Tools) == 0 {
		t.Errorf("Describe = %+v", d)
	}
	if got := string(call(t, b, "echo", `{"a":[1,"x"]}`)); got != `{"a":[1,"x"]}` {
		t.Errorf("echo = %s", got)
	}
	res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "nope"})
	if err != nil || !res.IsError || res.Error.Code != sdk.CodeNotFound || res.Error.Message != `tool "nope" not found` {
		t.Errorf("unknown tool = %+v, %v", res, err)
	}
}

func TestFind(t *testing.T) {
	t.Parallel()
	exeDir, pluginDir, otherDir := t.TempDir(), t.TempDir(), t.TempDir()
	first := linkPlugin(t, exeDir, "both")
	linkPlugin(t, pluginDir, "both")
	second := linkPlugin(t, otherDir, "second")
	if err := os.WriteFile(filepath.Join(pluginDir, bridges.BinaryPrefix+"noexec"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, bridges.Options{ExecutableDir: exeDir, PluginDirs: []string{pluginDir, otherDir}})

	tests := map[string]struct {
		plugin string
		want   string
		err    error
	}{
		"executable dir first": {plugin: "both", want: first},
		"plugin dirs in order": {plugin: "second", want: second},
		"path":                 {plugin: second, want: second},
		"missing":              {plugin: "missing", err: bridges.ErrPluginNotFound},
		"not executable":       {plugin: "noexec", err: bridges.ErrPluginNotFound},
		"missing path":         {plugin: "./nowhere/plugin", err: bridges.ErrPluginNotFound},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := m.Find(tc.plugin)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Errorf("Find(%q) = %q, %v; want %q, %v", tc.plugin, got, err, tc.want, tc.err)
			}
		})
	}

	list, err := m.List()
	if err != nil {
		t.Fatal(err)
	}
	want := []bridges.Plugin{{Name: "both", Path: first}, {Name: "second", Path: second}}
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}

	// A plugin found by name starts like one given by path.
	b := start(t, m, "byname", bridges.Config{Plugin: "second", Env: []string{"GORACE"}})
	call(t, b, "pid", `{}`)
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	sum, err := fileSHA256(testExe(t))
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Repeat("ab", 32)
	tests := map[string]struct {
		name    string
		cfg     bridges.Config
		err     error
		message []string
		// configErr, when set, is the *sdk.ConfigError the error wraps.
		configErr *sdk.ConfigError
	}{
		"no plugin": {
			cfg: bridges.Config{}, err: bridges.ErrInvalidConfig,
			message: []string{`bridge "b": invalid configuration: plugin is empty`},
		},
		"bad sha256": {
			cfg: bridges.Config{Plugin: "x", SHA256: "abc"}, err: bridges.ErrInvalidConfig,
			message: []string{`bridge "b": invalid configuration: sha256 "abc" is not 64 hexadecimal digits`},
		},
		"bad env": {
			cfg: bridges.Config{Plugin: "x", Env: []string{"A=B"}}, err: bridges.ErrInvalidConfig,
			message: []string{`bridge "b": invalid configuration: env: "A=B" is not a variable name`},
		},
		"reserved env": {
			cfg: bridges.Config{Plugin: "x", Env: []string{"PLUGIN_UNIX_SOCKET_DIR"}}, err: bridges.ErrInvalidConfig,
			message: []string{`invalid configuration: env: PLUGIN_UNIX_SOCKET_DIR is set by the plugin manager`},
		},
		"dotted name": {
			name: "a.b", cfg: bridges.Config{Plugin: "x"}, err: bridges.ErrInvalidConfig,
			message: []string{`bridge "a.b": invalid configuration: a bridge name is one namespace`},
		},
		"rejected by the bridge": {
			cfg: config(t, map[string]any{"reject": "value must be positive"}), err: bridges.ErrInvalidConfig,
			message:   []string{`bridge "b": invalid configuration: value must be positive`},
			configErr: &sdk.ConfigError{Message: "value must be positive"},
		},
		"a key rejected by the bridge": {
			cfg: config(t, map[string]any{"servers": []any{map[string]any{"url": "x"}, map[string]any{"ulr": "y"}}}), err: bridges.ErrInvalidConfig,
			message:   []string{`bridge "b": invalid configuration: servers[1].ulr: unknown key (did you mean "url"?)`},
			configErr: &sdk.ConfigError{Key: "servers[1].ulr", Message: `unknown key (did you mean "url"?)`},
		},
		"not found": {
			cfg: bridges.Config{Plugin: "nonesuch"}, err: bridges.ErrPluginNotFound,
			message: []string{`bridge "b": plugin not found: no executable parselbox-bridge-nonesuch in`},
		},
		"sha256 mismatch": {
			cfg: bridges.Config{Plugin: testExe(t), SHA256: wrong}, err: bridges.ErrChecksumMismatch,
			message: []string{`bridge "b": sha256 mismatch: `, "has sha256 " + sum, "the configuration pins " + wrong, "refusing to start it"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := newManager(t, bridges.Options{ExecutableDir: t.TempDir()})
			if tc.name == "" {
				tc.name = "b"
			}
			_, err := m.Start(t.Context(), tc.name, tc.cfg)
			t.Logf("Start: %v", err)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Start = %v, want %v", err, tc.err)
			}
			for _, want := range tc.message {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			var ce *sdk.ConfigError
			if tc.configErr != nil && (!errors.As(err, &ce) || *ce != *tc.configErr) {
				t.Errorf("error %v does not wrap %+v", err, *tc.configErr)
			}
		})
	}
}

func TestSHA256Pin(t *testing.T) {
	t.Parallel()
	sum, err := fileSHA256(testExe(t))
	if err != nil {
		t.Fatal(err)
	}
	m := newManager(t, bridges.Options{})
	cfg := config(t, nil)
	cfg.SHA256 = strings.ToUpper(sum)
	b := start(t, m, "pinned", cfg)
	call(t, b, "pid", `{}`)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func TestVersionMismatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	linkPlugin(t, dir, "v2")
	m := newManager(t, bridges.Options{ExecutableDir: dir})
	_, err := m.Start(t.Context(), "old", bridges.Config{Plugin: "v2", Env: []string{"GORACE"}})
	if !errors.Is(err, bridges.ErrIncompatible) {
		t.Fatalf("Start = %v, want ErrIncompatible", err)
	}
	t.Logf("Start: %v", err)
	for _, want := range []string{
		`bridge "old": incompatible plugin protocol version`,
		"this host speaks version 1",
		"Plugin version: 2",
		"rebuild it with a matching parselbox sdk",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

// TestEnvIsolation checks that a plugin sees none of the host's environment
// but what its configuration names, and go-plugin's own variables.
func TestEnvIsolation(t *testing.T) {
	t.Parallel()
	m := newManager(t, bridges.Options{})
	for name, tc := range map[string]struct {
		env        []string
		wantSecret bool
	}{
		"not named": {},
		"named":     {env: []string{secretEnv, "PARSELBOX_TEST_UNSET"}, wantSecret: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := start(t, m, "env-"+strings.ReplaceAll(name, " ", "-"), config(t, nil, tc.env...))
			var env []string
			if err := json.Unmarshal(call(t, b, "env", `{}`), &env); err != nil {
				t.Fatal(err)
			}
			allowed := map[string]bool{
				sdk.Handshake.MagicCookieKey: true, sdk.LogLevelEnv: true, "GORACE": true,
				"PLUGIN_MIN_PORT": true, "PLUGIN_MAX_PORT": true, "PLUGIN_PROTOCOL_VERSIONS": true,
				"PLUGIN_UNIX_SOCKET_DIR": true,
			}
			gotSecret := false
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				switch {
				case k == secretEnv:
					gotSecret = v == "s3cret"
				case !allowed[k]:
					t.Errorf("the plugin sees %s", kv)
				}
			}
			if gotSecret != tc.wantSecret {
				t.Errorf("plugin sees the secret: %v, want %v (env %q)", gotSecret, tc.wantSecret, env)
			}
		})
	}
}

// TestOneProcessor checks that a bridge runs on one processor (GOMAXPROCS
// 1) unless the host passes it GOMAXPROCS.
func TestOneProcessor(t *testing.T) {
	t.Setenv("GOMAXPROCS", "3") // read by the plugins started here, not by this process
	m := newManager(t, bridges.Options{})
	for name, tc := range map[string]struct {
		env  []string
		want string
	}{
		"default":          {want: "1"},
		"GOMAXPROCS named": {env: []string{"GOMAXPROCS"}, want: "3"},
	} {
		b := start(t, m, "procs-"+strings.ReplaceAll(name, " ", "-"), config(t, nil, tc.env...))
		if got := string(call(t, b, "procs", `{}`)); got != tc.want {
			t.Errorf("%s: the plugin's GOMAXPROCS is %s, want %s", name, got, tc.want)
		}
	}
}

// TestPrivateSockets checks that a plugin's sockets (and the host's broker
// sockets for callbacks) are in a directory only the host's user can enter.
func TestPrivateSockets(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	m := newManager(t, bridges.Options{SocketDir: base, Host: echoHost{}})
	b := start(t, m, "sockets", config(t, nil))
	call(t, b, "callback", `{"path":"x.y"}`) // opens a broker socket on the host's side
	var env []string
	if err := json.Unmarshal(call(t, b, "env", `{}`), &env); err != nil {
		t.Fatal(err)
	}
	var dir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PLUGIN_UNIX_SOCKET_DIR="); ok {
			dir = v
		}
	}
	if filepath.Dir(dir) != base {
		t.Fatalf("PLUGIN_UNIX_SOCKET_DIR = %q, want a directory in %s", dir, base)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("socket directory mode = %v, want 0700", fi.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 2 {
		t.Errorf("socket directory holds %d entries, want the plugin's and the host's sockets", len(entries))
	}
	// Nothing else in the socket base directory.
	all, _ := os.ReadDir(base)
	if len(all) != 1 {
		t.Errorf("%s holds %d entries, want 1", base, len(all))
	}
}

// echoHost is a HostClient that answers with the call it got.
type echoHost struct{}

func (echoHost) CallTool(ctx context.Context, path string, args json.RawMessage) (*sdk.CallToolResult, error) {
	if path == "refused.tool" {
		return nil, sdk.Errorf(sdk.CodePermission, "refused by a hook")
	}
	return &sdk.CallToolResult{Content: json.RawMessage(fmt.Sprintf(`{"path":%q,"args":%s}`, path, args))}, nil
}

func TestHostCallback(t *testing.T) {
	t.Parallel()
	m := newManager(t, bridges.Options{Host: echoHost{}})
	b := start(t, m, "cb", config(t, nil))
	if got := string(call(t, b, "callback", `{"path":"other.tool"}`)); got != `{"path":"other.tool","args":{"from":"bridge"}}` {
		t.Errorf("callback = %s", got)
	}
	res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "callback", Arguments: []byte(`{"path":"refused.tool"}`)})
	if err != nil || !res.IsError || res.Error.Code != sdk.CodePermission || res.Error.Message != "refused by a hook" {
		t.Errorf("refused callback = %+v, %v", res, err)
	}
}

func TestCancelReachesTheBridge(t *testing.T) {
	t.Parallel()
	m := newManager(t, bridges.Options{})
	b := start(t, m, "cancel", config(t, nil))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rec := &sdktest.Recorder{}
	done := make(chan struct{})
	var res *sdk.CallToolResult
	var err error
	go func() {
		defer close(done)
		res, err = b.CallTool(ctx, &sdk.CallToolRequest{Name: "block", Events: rec})
	}()
	if !rec.WaitFor("blocked", done) {
		t.Fatalf("block returned early: %+v, %v", res, err)
	}
	cancel()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	// The bridge's own message: the tool saw ctx.Done.
	if !res.IsError || res.Error.Code != sdk.CodeCancelled || res.Error.Message != "block: stopped by the cancel" {
		t.Fatalf("cancelled call = %+v", res.Error)
	}
}

func TestMessagesAndEvents(t *testing.T) {
	t.Parallel()
	m := newManager(t, bridges.Options{})
	b := start(t, m, "events", config(t, nil))
	const n = 50
	inbox := make(chan json.RawMessage)
	go func() {
		defer close(inbox)
		for i := range n {
			inbox <- json.RawMessage(strconv.Itoa(i))
		}
	}()
	rec := &sdktest.Recorder{}
	res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{
		Name: "messages", Arguments: []byte(fmt.Sprintf(`{"n":%d}`, n)), Events: rec, Inbox: inbox,
	})
	if err != nil || res.IsError {
		t.Fatalf("messages = %+v, %v", res, err)
	}
	var want []string
	var wantProgress []sdktest.Progress
	for i := range n {
		want = append(want, fmt.Sprintf("got: %d", i))
		wantProgress = append(wantProgress, sdktest.Progress{Progress: float64(i + 1), Total: n, Message: "received"})
	}
	if diff := cmp.Diff(want, rec.Lines()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantProgress, rec.ProgressReports()); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

func TestPanicIsAnErrorForThatCall(t *testing.T) {
	t.Parallel()
	m := newManager(t, bridges.Options{})
	b := start(t, m, "panicky", config(t, nil))
	pid := pidOf(t, b)
	res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "boom"})
	if err != nil || !res.IsError || res.Error.Code != sdk.CodeInternal || !strings.Contains(res.Error.Message, "boom in the bridge") {
		t.Fatalf("boom = %+v, %v", res, err)
	}
	if got := pidOf(t, b); got != pid {
		t.Errorf("the plugin was restarted after a panic: pid %d, then %d", pid, got)
	}
}

// TestConcurrentCalls runs 50 calls of a tool that only returns once 50
// calls are inside it at the same time.
func TestConcurrentCalls(t *testing.T) {
	t.Parallel()
	m := newManager(t, bridges.Options{})
	b := start(t, m, "concurrent", config(t, nil))
	const n = 50
	var wg sync.WaitGroup
	results := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "barrier", Arguments: []byte(fmt.Sprintf(`{"n":%d}`, n))})
			if err == nil {
				results[i] = string(res.Content)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || results[i] != strconv.Itoa(n) {
			t.Errorf("call %d = %s, %v; want max concurrency %d", i, results[i], errs[i], n)
		}
	}
}

func TestCrashAndRestart(t *testing.T) {
	t.Parallel()
	m := newManager(t, bridges.Options{})
	b := start(t, m, "crashy", config(t, map[string]any{"value": "configured"}))
	pid := pidOf(t, b)

	rec := &sdktest.Recorder{}
	done := make(chan struct{})
	var res *sdk.CallToolResult
	var err error
	go func() {
		defer close(done)
		res, err = b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "block", Events: rec})
	}()
	if !rec.WaitFor("blocked", done) {
		t.Fatalf("block returned early: %+v, %v", res, err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done

	if res != nil || !errors.Is(err, bridges.ErrBridgeShutdown) {
		t.Fatalf("in-flight call = %+v, %v; want ErrBridgeShutdown", res, err)
	}
	t.Logf("in-flight call: %v", err)
	var te *sdk.ToolError
	if !errors.As(err, &te) || te.Code != sdk.CodeUnavailable {
		t.Errorf("in-flight error %v is not a ToolError with code unavailable", err)
	}
	if want := `bridge "crashy" crashed while running tool "block"`; !strings.Contains(err.Error(), want) {
		t.Errorf("in-flight error %q does not contain %q", err, want)
	}

	// The next call restarts the plugin, configured as before.
	if got := string(call(t, b, "config", `{}`)); got != `"configured"` {
		t.Errorf("config after restart = %s", got)
	}
	if got := pidOf(t, b); got == pid {
		t.Errorf("pid after restart = %d, the same as before", got)
	}
}

// TestCrashDuringPlainCall kills the plugin while a call without events
// (one on the shared Calls stream) runs: the call reports the crash, and
// the next call restarts the plugin.
func TestCrashDuringPlainCall(t *testing.T) {
	t.Parallel()
	m := newManager(t, bridges.Options{})
	b := start(t, m, "crashyplain", config(t, map[string]any{"value": "configured"}))
	pid := pidOf(t, b)

	done := make(chan struct{})
	var res *sdk.CallToolResult
	var err error
	go func() {
		defer close(done)
		res, err = b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "block"})
	}()
	for string(call(t, b, "blocked", `{}`)) != "1" {
		select {
		case <-done:
			t.Fatalf("block returned early: %+v, %v", res, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done

	var te *sdk.ToolError
	if res != nil || !errors.Is(err, bridges.ErrBridgeShutdown) || !errors.As(err, &te) || te.Code != sdk.CodeUnavailable {
		t.Fatalf("in-flight call = %+v, %v; want ErrBridgeShutdown, a ToolError with code unavailable", res, err)
	}
	if want := `bridge "crashyplain" crashed while running tool "block"`; !strings.Contains(err.Error(), want) {
		t.Errorf("in-flight error %q does not contain %q", err, want)
	}
	if got := string(call(t, b, "config", `{}`)); got != `"configured"` {
		t.Errorf("config after restart = %s", got)
	}
	if got := pidOf(t, b); got == pid {
		t.Errorf("pid after restart = %d, the same as before", got)
	}
}

// TestCrashWhileIdle kills the plugin between calls: the next call notices
// and restarts it.
func TestCrashWhileIdle(t *testing.T) {
	t.Parallel()
	m := newManager(t, bridges.Options{})
	b := start(t, m, "idle", config(t, nil))
	pid := pidOf(t, b)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	// The first call may still reach the dead process before go-plugin
	// notices; then it fails as in-flight calls do, and the one after works.
	for i := 0; ; i++ {
		res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "pid"})
		if err == nil && !res.IsError {
			break
		}
		if i > 0 || !errors.Is(err, bridges.ErrBridgeShutdown) {
			t.Fatalf("call %d after the crash = %+v, %v", i, res, err)
		}
	}
}

// waitGone waits until no process pid exists (or it is a zombie).
func waitGone(t testing.TB, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute) // ends with the event; long for a loaded machine
	for time.Now().Before(deadline) {
		if !processAlive(pid) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d is still alive", pid)
}

func processAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	// The state follows the command name in parentheses: "Z" is a zombie.
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

func TestRestartFailureIsUnavailable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := linkPlugin(t, dir, "vanishing")
	m := newManager(t, bridges.Options{ExecutableDir: dir, RestartDelay: time.Hour, MaxRestartDelay: time.Hour})
	b := start(t, m, "vanishing", bridges.Config{Plugin: "vanishing", Env: []string{"GORACE"}})
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, b)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)

	// The first call after the crash restarts at once; the restart fails.
	// (A call may still see the dead connection first, as in-flight calls do.)
	var err error
	for i := 0; i < 2; i++ {
		_, err = b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "pid"})
		if err != nil && strings.Contains(err.Error(), "could not be restarted") {
			break
		}
	}
	var te *sdk.ToolError
	if !errors.Is(err, bridges.ErrBridgeShutdown) || !errors.Is(err, bridges.ErrPluginNotFound) ||
		!errors.As(err, &te) || te.Code != sdk.CodeUnavailable {
		t.Fatalf("call with the plugin gone = %v", err)
	}
	t.Logf("call: %v", err)
	if want := `bridge "vanishing" is down and could not be restarted: plugin not found`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}

	// Until the backoff (an hour) has passed, calls fail at once.
	_, err = b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "pid"})
	t.Logf("call: %v", err)
	if !errors.Is(err, bridges.ErrBridgeShutdown) || !errors.Is(err, bridges.ErrPluginNotFound) ||
		!strings.Contains(err.Error(), "after 2 failures in a row; the next restart is due in ") {
		t.Errorf("call during the backoff = %v", err)
	}
	// The time left counts down from the hour of backoff (how far it has
	// gone depends on the machine, not on the code).
	if m := regexp.MustCompile(`due in (\S+) \(`).FindStringSubmatch(err.Error()); m == nil {
		t.Errorf("no time left in %q", err)
	} else if d, perr := time.ParseDuration(m[1]); perr != nil || d <= 59*time.Minute || d > time.Hour {
		t.Errorf("time left %q, want the rest of the hour's backoff", m[1])
	}
}

func TestCloseShutsDownGracefully(t *testing.T) {
	t.Parallel()
	m := bridges.NewManager(bridges.Options{Logger: sdktest.Logger(t)})
	marker := filepath.Join(t.TempDir(), "shutdown")
	b, err := m.Start(t.Context(), "graceful", config(t, map[string]any{"shutdown_file": marker}))
	if err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, b)
	var child int
	if err := json.Unmarshal(call(t, b, "spawn", `{}`), &child); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(marker); err != nil || string(data) != "bye" {
		t.Errorf("the bridge's Shutdown did not run: %q, %v", data, err)
	}
	if processAlive(pid) {
		t.Errorf("plugin %d alive after Close", pid)
	}
	waitGone(t, child) // killed with the plugin's process group

	_, err = b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "pid"})
	if !errors.Is(err, bridges.ErrBridgeShutdown) || !errors.Is(err, bridges.ErrClosed) {
		t.Errorf("call after Close = %v, want ErrBridgeShutdown", err)
	}
	if _, err := m.Start(t.Context(), "late", config(t, nil)); !errors.Is(err, bridges.ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
}

func TestCloseKillsAHangingBridge(t *testing.T) {
	t.Parallel()
	m := bridges.NewManager(bridges.Options{Logger: sdktest.Logger(t), ShutdownTimeout: 50 * time.Millisecond})
	b, err := m.Start(t.Context(), "hanging", config(t, map[string]any{"hang_shutdown": true}))
	if err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, b)
	if err := m.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if processAlive(pid) {
		t.Errorf("plugin %d alive after Close", pid)
	}
}

// TestStderrIsRelevelled checks that what a plugin logs reaches the host's
// logger at the plugin's level.
func TestStderrIsRelevelled(t *testing.T) {
	t.Parallel()
	var buf testenv.SyncBuffer
	logger := hclog.New(&hclog.LoggerOptions{Output: &buf, JSONFormat: true, Level: hclog.Info})
	m := newManager(t, bridges.Options{Logger: logger})
	b := start(t, m, "logger", config(t, nil))
	call(t, b, "warn", `{"message":"the cache is cold"}`)
	if err := m.Close(t.Context()); err != nil { // flushes the plugin's stderr
		t.Fatal(err)
	}
	found := false
	sc := bufio.NewScanner(bytes.NewReader(buf.Bytes()))
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		if line["@message"] == "the cache is cold" {
			found = true
			if line["@level"] != "warn" || line["from"] != "bridge" || line["bridge"] != "logger" {
				t.Errorf("relayed line = %v", line)
			}
		}
	}
	if !found {
		t.Errorf("the plugin's warning is not in the host's log:\n%s", buf.Bytes())
	}
}

// TestPdeathsig SIGKILLs a host (this test binary in host mode) and checks
// that its plugin dies with it.
func TestPdeathsig(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(testExe(t))
	cmd.Env = append(os.Environ(), hostModeEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the plugin's pid from the host: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("host said %q", line)
	}
	if !processAlive(pid) {
		t.Fatalf("plugin %d is not running", pid)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

// TestReconfigure configures a running bridge again: the new configuration
// is used after a restart; a rejected one changes nothing.
func TestReconfigure(t *testing.T) {
	t.Parallel()
	m := newManager(t, bridges.Options{})
	b := start(t, m, "reconf", config(t, map[string]any{"value": "first"}))
	if err := b.Configure(t.Context(), &sdk.ConfigureRequest{Config: json.RawMessage(`{"value":"second"}`)}); err != nil {
		t.Fatal(err)
	}
	err := b.Configure(t.Context(), &sdk.ConfigureRequest{Config: json.RawMessage(`{"reject":"no thanks"}`)})
	if !errors.Is(err, bridges.ErrInvalidConfig) || err.Error() != `bridge "reconf": invalid configuration: no thanks` {
		t.Errorf("rejected Configure = %v", err)
	}
	if got := string(call(t, b, "config", `{}`)); got != `"second"` {
		t.Errorf("config = %s, want \"second\"", got)
	}
	pid := pidOf(t, b)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	for i := 0; ; i++ {
		res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "config"})
		if err == nil && !res.IsError {
			if string(res.Content) != `"second"` {
				t.Errorf("config after restart = %s, want \"second\"", res.Content)
			}
			break
		}
		if i > 0 {
			t.Fatalf("call %d after the crash = %+v, %v", i, res, err)
		}
	}
}

func TestStopOneBridge(t *testing.T) {
	t.Parallel()
	m := newManager(t, bridges.Options{})
	b := start(t, m, "one", config(t, nil))
	other := start(t, m, "other", config(t, nil))
	pid := pidOf(t, b)
	if err := m.Stop(t.Context(), "one"); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	if _, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "pid"}); !errors.Is(err, bridges.ErrBridgeShutdown) {
		t.Errorf("call of a stopped bridge = %v, want ErrBridgeShutdown", err)
	}
	call(t, other, "pid", `{}`)
	again := start(t, m, "one", config(t, nil))
	call(t, again, "pid", `{}`)
	if err := m.Stop(t.Context(), "nonesuch"); err == nil {
		t.Error("Stop of an unknown bridge succeeded")
	}
}
