package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host/mcpserver"
	"github.com/parselbox/parselbox/internal/testenv"
)

// mainEnv makes the test binary run main() (TestMain): the parselbox
// command as a real subprocess.
const mainEnv = "PARSELBOX_CMD_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) != "" {
		main()
		return
	}
	os.Exit(m.Run())
}

// parselbox returns the command running this test binary as parselbox.
func parselbox(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	return cmd
}

func sandboxArgs(t *testing.T) []string {
	return []string{"--runtime-dir", testenv.Runtime(t).Dir, "--cache-dir", testenv.CacheDir(t)}
}

func callCode(t *testing.T, cs *mcp.ClientSession, code string) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "execute_code", Arguments: map[string]any{"code": code}})
	if err != nil {
		t.Fatalf("execute_code(%q): %v", code, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string { return res.Content[0].(*mcp.TextContent).Text }

// `parselbox [flags]` serves MCP over stdio: a real subprocess driven by
// the go-sdk's CommandTransport, with the flags mirrored from the file.
func TestServeStdio(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	cmd := parselbox(t, append(sandboxArgs(t), "--output-dir", out, "--env", "WHO=stdio", "--max-output-tokens", "20")...)
	var stderr testenv.SyncBuffer
	cmd.Stderr = &stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting: %v\nstderr:\n%s", err, stderr.String())
	}
	init := cs.InitializeResult()
	if init.ServerInfo.Name != "Parselbox" || init.ServerInfo.Version != version || !strings.Contains(init.Instructions, "sbx.info()") {
		t.Errorf("initialize: %+v", init)
	}
	callCode(t, cs, "import os\nwho = os.environ['WHO']")
	if got := text(callCode(t, cs, "who")); got != `{"result":"stdio"}` {
		t.Errorf("state: %s", got)
	}
	if got := text(callCode(t, cs, "open('o.txt', 'w').write('x')\n'ok'")); got != `{"result":"ok","files":["/workspace/o.txt"]}` {
		t.Errorf("file: %s", got)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "o.txt")); string(b) != "x" {
		t.Errorf("--output-dir: %q", b)
	}
	if got := text(callCode(t, cs, "'y' * 200")); !strings.Contains(got, `"note":"Execution output too big`) {
		t.Errorf("--max-output-tokens: %s", got)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("closing: %v", err)
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("exit: %v\nstderr:\n%s", cmd.ProcessState, stderr.String())
	}
	if !strings.Contains(stderr.String(), "MCP available via stdio") {
		t.Errorf("stderr does not say how MCP is served:\n%s", stderr.String())
	}
}

// `parselbox --transport http` binds 127.0.0.1 by default and serves
// /mcp; a cancelled context (Ctrl-C) ends it with status 0.
func TestServeHTTP(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr testenv.SyncBuffer
	done := make(chan int, 1)
	args := append(sandboxArgs(t), "--transport", "HTTP", "--port", "0", "--pool-size", "0")
	go func() { done <- run(ctx, args, strings.NewReader(""), &bytes.Buffer{}, &stderr) }()
	urlRE := regexp.MustCompile(`url=(http://\S+)`)
	var url string
	deadline := time.Now().Add(60 * time.Second)
	for url == "" {
		if m := urlRE.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
			break
		}
		select {
		case code := <-done:
			t.Fatalf("exit %d:\n%s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no URL logged:\n%s", stderr.String())
		}
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Errorf("served at %s, want http://127.0.0.1:PORT/mcp", url)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := text(callCode(t, cs, "6 * 7")); got != `{"result":42}` {
		t.Errorf("6 * 7: %s", got)
	}
	cs.Close()
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("exit %d after cancel:\n%s", code, stderr.String())
	}
}

// A parselbox started with PARSELBOX_MCP_PROBE set (by a Parselbox's
// mcpproxy bridge) exits at once, serving nothing: it answers no
// initialize request and starts no sandbox (none could start: the runtime
// directory does not exist, which a server would report).
func TestServeProbe(t *testing.T) {
	t.Parallel()
	cmd := parselbox(t, "--runtime-dir", filepath.Join(t.TempDir(), "none"))
	cmd.Env = append(cmd.Env, mcpserver.ProbeEnv+"=true")
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || len(out) != 0 || stderr.Len() != 0 {
		t.Errorf("probe: %v, stdout %q, stderr %q", err, out, stderr.String())
	}
}

func TestServeUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(data), 0o644)
		return p
	}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"transport":        {[]string{"--transport", "sse"}, `--transport: server.transport: must be "stdio" or "http", got "sse"`},
		"open host":        {[]string{"--transport", "http", "--host", "0.0.0.0"}, "set --auth-token"},
		"argument":         {[]string{"--elicit", "extra"}, `unexpected argument "extra"`},
		"port":             {[]string{"--port", "70000"}, "--port"},
		"negative":         {[]string{"--pool-size", "-1"}, "--pool-size: server.pool_size: must be a whole number, 0 or more, got -1"},
		"short token":      {[]string{"--auth-token", " abc "}, "--auth-token: server.auth_token: must be at least 16 characters"},
		"blank token":      {[]string{"--transport", "http", "--host", "0.0.0.0", "--auth-token", "   "}, "got 0"},
		"server key":       {[]string{"--config", write("k.hcl", "server {\n  prot = 1\n}\n")}, `server: unknown key "prot"`},
		"server value":     {[]string{"--config", write("v.yaml", "server:\n  port: many\n")}, "v.yaml:2: server.port: must be a port number"},
		"after the block":  {[]string{"--config", write("a.hcl", "server {\n  port = 1\n}\nnetwrok = true\n")}, "a.hcl:4"},
		"server attribute": {[]string{"--config", write("attr.hcl", "server = { port = 1 }\n")}, "write it as a block"},
		"runtime":          {[]string{"--runtime-dir", dir}, "runtime"},
	} {
		var stderr bytes.Buffer
		code := run(t.Context(), tc.args, strings.NewReader(""), &bytes.Buffer{}, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%s: exit %d, stderr: %s", name, code, stderr.String())
		}
	}
}

// A bad server block is a usage error naming the file, the line and the
// key, in every syntax, for the server and for exec, which checks the
// block it ignores.
func TestServeBadServerBlock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		file, data string
		exec       bool
		want       string
	}{
		"hcl": {"s.hcl", "memory = 512\nserver {\n  transport = \"sse\"\n}\n", false,
			`s.hcl:3: server.transport: must be "stdio" or "http", got "sse"`},
		"yaml": {"s.yaml", "server:\n  port: 9000\n  idle_timeout: soon\n", false,
			`s.yaml:3: server.idle_timeout: must be a number of seconds or a duration such as "30m" (0: never), got "soon"`},
		"json": {"s.json", "{\"memory\": 512,\n \"server\": {\"pool_size\": -1}}", false,
			`s.json:2: server.pool_size: must be a whole number, 0 or more, got -1`},
		"unknown key": {"u.hcl", "server {\n  max_session = 2\n}\n", false,
			`u.hcl:2: server: unknown key "max_session" (did you mean "max_sessions"?)`},
		"exec": {"e.hcl", "server {\n  port = 70000\n}\n", true,
			`e.hcl:2: server.port: must be a port number from 0 to 65535, got 70000`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(dir, tc.file)
			if err := os.WriteFile(p, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"--config", p}
			if tc.exec {
				args = []string{"exec", "--config", p, "1"}
			}
			var stderr bytes.Buffer
			code := run(t.Context(), args, strings.NewReader(""), &bytes.Buffer{}, &stderr)
			want := dir + string(filepath.Separator) + tc.want // the file as --config names it
			if code != exitUsage || !strings.Contains(stderr.String(), want) {
				t.Errorf("exit %d, want %d; stderr: %s\nwant it to hold: %s", code, exitUsage, stderr.String(), want)
			}
		})
	}
}

// The server block of the configuration file, in each syntax; the rest of
// the file is the sandbox's; flags override both, and the token may come
// from the environment.
func TestServerConfigBlock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"p.hcl": `memory = 512
server {
  transport   = "http"
  port        = 9100
  host        = "localhost"
  idle_timeout = "90s"
  max_sessions = 3
  pool_size   = 0
  max_output_tokens = 500
  elicit      = true
  no_ui       = true
  auth_token  = "from-file-0123456789"
  drain_timeout = "45s"
  metrics_address = "127.0.0.1:9191"
}
output_dir = "out"
`,
		"p.yaml": `memory: 512
server:
  transport: http
  port: 9100
  host: localhost
  idle_timeout: 90
  max_sessions: 3
  pool_size: 0
  max_output_tokens: 500
  elicit: true
  no_ui: true
  auth_token: from-file-0123456789
  drain_timeout: 45
  metrics_address: "127.0.0.1:9191"
output_dir: out
`,
		"p.json": `{"server": {"transport": "http", "port": 9100, "host": "localhost", "idle_timeout": "1m30s",
  "max_sessions": 3, "pool_size": 0, "max_output_tokens": 500, "elicit": true, "no_ui": true,
  "auth_token": "from-file-0123456789", "drain_timeout": "45s", "metrics_address": "127.0.0.1:9191"},
 "memory": 512, "output_dir": "out"}`,
		"last.json": `{"memory": 512, "output_dir": "out", "server": {"transport": "http", "port": 9100, "host": "localhost",
  "idle_timeout": 90, "max_sessions": 3, "pool_size": 0, "max_output_tokens": 500, "elicit": true,
  "no_ui": true, "auth_token": "from-file-0123456789", "drain_timeout": 45, "metrics_address": "127.0.0.1:9191"}}`,
	}
	want := mcpserver.Settings{Transport: "http", Host: "localhost", Port: 9100, AuthToken: "from-file-0123456789",
		IdleTimeout: 90 * time.Second, MaxSessions: 3, PoolSize: 0, MaxOutputTokens: 500, MaxResultMB: 64, Elicit: true,
		ApprovalTimeout: 5 * time.Minute, NoUI: true, DrainTimeout: 45 * time.Second, MetricsAddress: "127.0.0.1:9191"}
	for name, data := range files {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(data), 0o644)
		f := newServeFlags(flagSet())
		if err := f.fs.Parse([]string{"--config", p}); err != nil {
			t.Fatal(err)
		}
		file, err := f.load()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if diff := cmp.Diff(want, file.Server); diff != "" {
			t.Errorf("%s: settings (-want +got):\n%s", name, diff)
		}
		if cfg := file.Config; cfg.Memory != 512 || cfg.OutputDir != filepath.Join(dir, "out") {
			t.Errorf("%s: sandbox config: memory %d, output_dir %s", name, cfg.Memory, cfg.OutputDir)
		}
	}

	// Flags win over the file.
	f := newServeFlags(flagSet())
	f.fs.Parse([]string{"--config", filepath.Join(dir, "p.hcl"), "--port", "9200", "--max-sessions", "0", "--auth-token", "from-flag-0123456789", "--transport", "stdio"})
	file, err := f.load()
	if err != nil {
		t.Fatal(err)
	}
	s := file.Server
	if s.Port != 9200 || s.MaxSessions != 0 || s.AuthToken != "from-flag-0123456789" || s.Transport != "stdio" || s.PoolSize != 0 {
		t.Errorf("flags over file: %+v", s)
	}
	if o := options(file, nil); *o.Settings != s || o.Config.Memory != 512 {
		t.Errorf("options: %+v", o)
	}

	// Defaults without a file.
	f = newServeFlags(flagSet())
	f.fs.Parse(nil)
	if file, err = f.load(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(mcpserver.DefaultSettings(), file.Server); diff != "" || file.Server.Host != "127.0.0.1" || file.Server.Transport != "stdio" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

// `parselbox exec` takes the same file, server block included.
func TestExecConfigWithServerBlock(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "p.hcl")
	os.WriteFile(p, []byte("server {\n  elicit = true\n}\nenv = { WHO = \"file\" }\n"), 0o644)
	code, res, stderr := runCLI(t, "", "exec", "--config", p, "import os\nos.environ['WHO']")
	if code != exitOK || string(res.Output) != `"file"` {
		t.Errorf("exit %d, %+v, %s", code, res, stderr)
	}
}

// The token from the environment, between the file and the flag.
func TestServerTokenEnv(t *testing.T) {
	t.Setenv(mcpserver.AuthTokenEnv, "  from-env-0123456789\n")
	f := newServeFlags(flagSet())
	f.fs.Parse([]string{"--transport", "http", "--host", "0.0.0.0"})
	file, err := f.load()
	if err != nil || file.Server.AuthToken != "from-env-0123456789" {
		t.Errorf("token from the environment (trimmed): %+v, %v", file, err)
	}
	f = newServeFlags(flagSet())
	f.fs.Parse([]string{"--auth-token", "from-flag-0123456789"})
	if file, err := f.load(); err != nil || file.Server.AuthToken != "from-flag-0123456789" {
		t.Errorf("the flag over the environment: %+v, %v", file, err)
	}

	// A short token from the environment is refused, naming the variable.
	t.Setenv(mcpserver.AuthTokenEnv, "short")
	f = newServeFlags(flagSet())
	f.fs.Parse(nil)
	if _, err := f.load(); err == nil || !strings.HasPrefix(err.Error(), "$"+mcpserver.AuthTokenEnv+": server.auth_token: must be at least 16 characters") {
		t.Errorf("short token from the environment: %v", err)
	}
}

// `parselbox` over stdio runs its Go code on one thread at a time
// (GOMAXPROCS=1, stdioProcs) unless $GOMAXPROCS says otherwise, as the
// process itself reports it (runtime.GOMAXPROCS, in its debug log) once
// it serves: without stdioProcs it would report Go's default, the number
// of CPUs.
func TestServeStdioProcs(t *testing.T) {
	t.Parallel()
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: Go's default is GOMAXPROCS=1 already")
	}
	for _, tc := range []struct{ env, want string }{{"", "1"}, {"GOMAXPROCS=2", "2"}} {
		t.Run("env="+tc.env, func(t *testing.T) {
			t.Parallel()
			cmd := parselbox(t, sandboxArgs(t)...)
			cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "GOMAXPROCS=") })
			cmd.Env = append(cmd.Env, logLevelEnv+"=debug")
			if tc.env != "" {
				cmd.Env = append(cmd.Env, tc.env)
			}
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			procs := regexp.MustCompile(`stdio server: gomaxprocs=(\d+)`)
			var got, log string
			sc := bufio.NewScanner(stderr)
			for got == "" && sc.Scan() {
				log += sc.Text() + "\n"
				if m := procs.FindStringSubmatch(sc.Text()); m != nil {
					got = m[1]
				}
			}
			stdin.Close() // the client is gone: the server exits
			io.Copy(io.Discard, stderr)
			if err := cmd.Wait(); err != nil {
				t.Errorf("exit: %v", err)
			}
			if got != tc.want {
				t.Errorf("GOMAXPROCS of parselbox over stdio = %q, want %s; stderr:\n%s", got, tc.want, log)
			}
		})
	}
}
