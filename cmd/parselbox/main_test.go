package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
)

// runCLI runs the command in-process with the test runtime and cache.
func runCLI(t *testing.T, stdin string, args ...string) (int, execOutput, string) {
	t.Helper()
	rt := testenv.Runtime(t)
	if len(args) > 0 && args[0] == "exec" {
		args = append([]string{"exec", "--runtime-dir", rt.Dir, "--cache-dir", testenv.CacheDir(t)}, args[1:]...)
	}
	var out, errb bytes.Buffer
	code := run(t.Context(), args, strings.NewReader(stdin), &out, &errb)
	var res execOutput
	if out.Len() > 0 && args[0] == "exec" {
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("stdout is not one JSON object: %v\n%s", err, out.String())
		}
	}
	return code, res, errb.String()
}

func TestExecExitStatus(t *testing.T) {
	t.Parallel()
	code, res, _ := runCLI(t, "", "exec", "x = 6 * 7\nx")
	if code != exitOK || string(res.Output) != "42" || res.Error != nil || res.Files == nil {
		t.Errorf("success: exit %d, %+v", code, res)
	}
	code, res, _ = runCLI(t, "", "exec", "1/0")
	if code != exitRaised || res.Error == nil || res.Error.Type != "ZeroDivisionError" {
		t.Errorf("raised: exit %d, %+v", code, res)
	}
	code, res, _ = runCLI(t, "print('from stdin')\n'ok'", "exec", "-")
	if code != exitOK || res.Stdout != "from stdin\n" || string(res.Output) != `"ok"` {
		t.Errorf("stdin: exit %d, %+v", code, res)
	}
}

// Flags may follow CODE as well as precede it.
func TestExecFlagsAfterCode(t *testing.T) {
	t.Parallel()
	code, res, stderr := runCLI(t, "", "exec", "import os\nos.environ['WHO']", "--env", "WHO=ada", "--timeout", "5")
	if code != exitOK || string(res.Output) != `"ada"` {
		t.Errorf("exit %d, %+v, stderr %s", code, res, stderr)
	}
	code, _, stderr = runCLI(t, "", "exec", "1", "--nope")
	if code != exitUsage || !strings.Contains(stderr, "unknown flag: --nope") {
		t.Errorf("unknown flag after CODE: exit %d, stderr %s", code, stderr)
	}
}

func TestExecUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.hcl")
	os.WriteFile(bad, []byte("memory = 256\nnetwrok = true\n"), 0o644)
	for name, tc := range map[string]struct {
		args []string
		want string // in stderr: the problem itself, not just any usage error
	}{
		"no code":          {[]string{"exec"}, "expected exactly one CODE argument"},
		"two codes":        {[]string{"exec", "1", "2"}, "expected exactly one CODE argument"},
		"code, flag, code": {[]string{"exec", "1", "--timeout", "5", "2"}, "expected exactly one CODE argument"},
		"unknown flag":     {[]string{"exec", "--nope", "1"}, "unknown flag: --nope"},
		"bad env":          {[]string{"exec", "--env", "NOEQUALS", "1"}, `--env: expected KEY=VALUE, got "NOEQUALS"`},
		"bad mount":        {[]string{"exec", "--mount", "a:b:c:d", "1"}, `--mount: expected SRC:DST[:ro|rw], got "a:b:c:d"`},
		"missing mount":    {[]string{"exec", "--mount", "/nonexistent/dir:data", "1"}, "source /nonexistent/dir is not a directory"},
		"bad config":       {[]string{"exec", "--config", bad, "1"}, `bad.hcl:2: unknown key "netwrok" (did you mean "network"?)`},
		"bad memory":       {[]string{"exec", "--memory", "0", "1"}, "--memory: memory: must be a whole number of MB from 1 to 4096 (the 32-bit WebAssembly limit), got 0"},
		"bad allow-net":    {[]string{"exec", "--allow-net", "nohostport", "1"}, `--allow-net: allow_net[0]: must be "host:port" with a port from 1 to 65535, got "nohostport"`},
		"bad host":         {[]string{"exec", "--allow-net", "exa mple.com:443", "1"}, `got "exa mple.com:443"`},
		"memory > wasm":    {[]string{"exec", "--memory", "5000", "1"}, "--memory: memory: must be a whole number of MB from 1 to 4096 (the 32-bit WebAssembly limit), got 5000"},
		"bad env name":     {[]string{"exec", "--env", "B-AD=1", "1"}, `--env: env "B-AD": variable name must be letters, digits and _, not starting with a digit`},
		"unknown cmd":      {[]string{"frobnicate"}, `unknown command "frobnicate"`},
		"missing config":   {[]string{"exec", "--config", filepath.Join(dir, "none.hcl"), "1"}, "none.hcl: no such file or directory"},
	} {
		code, _, stderr := runCLI(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, want %d; stderr: %s\nwant it to hold: %s", name, code, exitUsage, stderr, tc.want)
		}
	}
}

// Flags override the file; the file overrides the defaults.
func TestFlagsOverrideConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "parselbox.yaml")
	os.WriteFile(cfgPath, []byte("timeout: 30\nmemory: 512\nenv:\n  FROM_FILE: file\n  BOTH: file\n"), 0o644)
	f := newSandboxFlags(flagSet())
	if err := f.fs.Parse([]string{"--config", cfgPath, "--memory", "1024", "--env", "BOTH=flag", "--mount", "/src/data:/d:rw", "--mount", "/src/other", "--timeout", "0"}); err != nil {
		t.Fatal(err)
	}
	file, err := f.load()
	if err != nil {
		t.Fatal(err)
	}
	cfg := file.Config
	if cfg.Memory != 1024 || cfg.Timeout >= 0 {
		t.Errorf("memory %d, timeout %v", cfg.Memory, cfg.Timeout)
	}
	if diff := cmp.Diff(map[string]string{"FROM_FILE": "file", "BOTH": "flag"}, cfg.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	want := map[string]host.Mount{"d": {Source: "/src/data", Mode: "rw"}, "other": {Source: "/src/other", Mode: "ro"}}
	if diff := cmp.Diff(want, cfg.Mounts); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}

	// Without flags, the file's values stand.
	f = newSandboxFlags(flagSet())
	f.fs.Parse([]string{"--config", cfgPath})
	if file, err = f.load(); err != nil {
		t.Fatal(err)
	}
	if cfg = file.Config; cfg.Memory != 512 || cfg.Timeout.Seconds() != 30 {
		t.Errorf("file values: memory %d, timeout %v", cfg.Memory, cfg.Timeout)
	}
}

// A value from a flag is checked by the file's rules and named by its flag;
// the items a repeatable flag adds to the file's list keep their places.
func TestFlagErrorsNameTheFlag(t *testing.T) {
	t.Parallel()
	cfgPath := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(cfgPath, []byte("allow_net: [nohostport]\n"), 0o644)
	f := newSandboxFlags(flagSet())
	if err := f.fs.Parse([]string{"--config", cfgPath, "--allow-net", "also-bad", "--memory", "5000", "--mount", "/src:a/../b"}); err != nil {
		t.Fatal(err)
	}
	_, err := f.load()
	want := []string{
		`--memory: memory: must be a whole number of MB from 1 to 4096 (the 32-bit WebAssembly limit), got 5000`,
		`--mount: mount "a/../b": target must be a relative path such as "data" or "data/sub", without empty, "." or ".." parts`,
		`--allow-net: allow_net[1]: must be "host:port" with a port from 1 to 65535, got "also-bad"`,
		cfgPath + `:1: allow_net[0]: must be "host:port" with a port from 1 to 65535, got "nohostport"`,
	}
	if err == nil {
		t.Fatal("no error")
	}
	got := strings.Split(err.Error(), "\n")
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestExecFilesAndMounts(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	in := filepath.Join(t.TempDir(), "in.txt")
	os.WriteFile(in, []byte("input"), 0o644)
	mnt := t.TempDir()
	os.WriteFile(filepath.Join(mnt, "m.txt"), []byte("mounted"), 0o644)
	code, res, stderr := runCLI(t, "", "exec", "--output-dir", out, "--file", in, "--mount", mnt+":data",
		"--env", "K=V", "open('o.txt','w').write(open('/files/in.txt').read() + open('/mnt/data/m.txt').read())\nimport os\nos.environ['K']")
	if code != exitOK || string(res.Output) != `"V"` {
		t.Fatalf("exit %d, %+v, %s", code, res, stderr)
	}
	if diff := cmp.Diff([]string{"/workspace/o.txt"}, res.Files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "o.txt")); string(b) != "inputmounted" {
		t.Errorf("output file: %q", b)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	rt := testenv.Runtime(t)
	if code := run(t.Context(), []string{"version", "--runtime-dir", rt.Dir}, nil, &out, &out); code != 0 || !strings.HasPrefix(out.String(), "parselbox "+version+"\n") {
		t.Errorf("version: %d %q", code, out.String())
	}
	// The runtime's versions, as runtime/package.json pins them.
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, _ := os.ReadFile(filepath.Join(rt.Dir, "package.json"))
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	for name, dep := range map[string]string{"deno": "@deno/linux-x64-glibc", "pyodide": "pyodide", "just-bash": "just-bash"} {
		if want := fmt.Sprintf("  %-10s %s\n", name, pkg.Dependencies[dep]); pkg.Dependencies[dep] == "" || !strings.Contains(out.String(), want) {
			t.Errorf("version lacks %q:\n%s", want, out.String())
		}
	}
	for _, row := range []string{"  module     github.com/parselbox/parselbox", "  commit     ", "  go         go1."} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("version lacks %q:\n%s", row, out.String())
		}
	}
}

func flagSet() *pflag.FlagSet {
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func TestPlugins(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "parselbox-bridge-fake")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"plugins", "--plugin-dir", dir}, nil, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	sum := sha256.Sum256([]byte("#!/bin/sh\n"))
	if !strings.Contains(out.String(), "fake") || !strings.Contains(out.String(), `sha256 = "`+hex.EncodeToString(sum[:])+`"`) {
		t.Errorf("output:\n%s", out.String())
	}
}

// --mcp reads an mcp.json: each server is a namespace, served by the
// mcpproxy plugin that make build puts in bin/.
func TestExecMCPFlag(t *testing.T) {
	t.Parallel()
	root := testenv.ModuleRoot(t)
	plugin := filepath.Join(root, "bin", "parselbox-bridge-mcpproxy")
	server := filepath.Join(root, "tests", "fixtures", "mcp", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	for _, need := range []string{plugin, server} {
		if _, err := os.Stat(need); err != nil {
			if os.Getenv(testenv.RequireEnv) != "" {
				t.Fatalf("%s missing (make build fixtures)", need)
			}
			t.Skipf("%s missing (make build fixtures)", need)
		}
	}
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv(testenv.RequireEnv) != "" {
			t.Fatal("node not found")
		}
		t.Skip("node not found")
	}
	mcpJSON := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(mcpJSON, []byte(`{"mcpServers": {"everything": {"command": "`+node+`", "args": ["`+server+`", "stdio"]}}}`), 0o644)
	code, res, stderr := runCLI(t, "", "exec", "--mcp", mcpJSON, "--plugin-dir", filepath.Join(root, "bin"),
		"[everything.echo(message='hi'), everything.get_sum(2, 3)]")
	if code != exitOK {
		t.Fatalf("exit %d: %+v\n%s", code, res, stderr)
	}
	if string(res.Output) != `["Echo: hi","The sum of 2 and 3 is 5."]` {
		t.Errorf("output: %s", res.Output)
	}
}

// A bridge's relative paths resolve against its configuration file's
// directory: the plugin runs there.
func TestBridgeDirIsTheConfigFilesDirectory(t *testing.T) {
	t.Parallel()
	plugin := filepath.Join(testenv.ModuleRoot(t), "bin", "parselbox-bridge-shell")
	if _, err := os.Stat(plugin); err != nil {
		if os.Getenv(testenv.RequireEnv) != "" {
			t.Fatalf("%s missing (make build)", plugin)
		}
		t.Skipf("%s missing (make build)", plugin)
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	os.Mkdir(filepath.Join(dir, "work"), 0o755)
	cfg := filepath.Join(dir, "p.hcl")
	os.WriteFile(cfg, []byte(`bridge "sh" {
  plugin = "`+plugin+`"
  config = { cwd = "work" }
}
`), 0o644)
	code, res, stderr := runCLI(t, "", "exec", "--config", cfg, "sh.exec('pwd')['stdout'].strip()")
	if code != exitOK {
		t.Fatalf("exit %d: %+v\n%s", code, res, stderr)
	}
	if want := `"` + filepath.Join(dir, "work") + `"`; string(res.Output) != want {
		t.Errorf("the shell ran in %s, want %s", res.Output, want)
	}
}

// A bridge that rejects its configuration is reported at the line of the
// key it names: the SDK's ConfigError crosses the plugin protocol, and the
// CLI places it with the file's positions.
func TestBridgeConfigErrorNamesTheLine(t *testing.T) {
	t.Parallel()
	plugin := filepath.Join(testenv.ModuleRoot(t), "bin", "parselbox-bridge-shell")
	if _, err := os.Stat(plugin); err != nil {
		if os.Getenv(testenv.RequireEnv) != "" {
			t.Fatalf("%s missing (make build)", plugin)
		}
		t.Skipf("%s missing (make build)", plugin)
	}
	cfg := filepath.Join(t.TempDir(), "p.hcl")
	os.WriteFile(cfg, []byte(`bridge "sh" {
  plugin = "`+plugin+`"
  config = {
    timeout = "soon"
  }
}
`), 0o644)
	code, _, stderr := runCLI(t, "", "exec", "--config", cfg, "1")
	if code != exitUsage {
		t.Fatalf("exit %d, want %d\n%s", code, exitUsage, stderr)
	}
	if want := `bridge "sh": ` + cfg + `:4: config.timeout: `; !strings.Contains(stderr, want) {
		t.Errorf("stderr %q does not contain %q", stderr, want)
	}
	// The refusal is said once: stopping the plugin that refused is no
	// error of its own.
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 {
		t.Errorf("stderr has %d lines, want the one error:\n%s", len(lines), stderr)
	}
}

// A mount whose source is no directory is placed at its line.
func TestBadMountSourceNamesTheLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "p.hcl")
	os.WriteFile(cfg, []byte("memory = 256\nmount \"ref\" {\n  source = \"./missing\"\n}\n"), 0o644)
	code, _, stderr := runCLI(t, "", "exec", "--config", cfg, "1")
	want := cfg + `:2: mount "ref": source ` + filepath.Join(dir, "missing") + " is not a directory\n"
	if code != exitUsage || stderr != "parselbox exec: "+want {
		t.Errorf("exit %d, stderr %q; want 2, %q", code, stderr, want)
	}
}

// A level that names no level is an error, not silently the default.
func TestLogLevelEnv(t *testing.T) {
	t.Setenv(logLevelEnv, "loud")
	var out, errb bytes.Buffer
	code := run(t.Context(), []string{"exec", "1"}, nil, &out, &errb)
	want := "parselbox: $PARSELBOX_LOG_LEVEL: must be trace, debug, info, warn, error or off, got \"loud\"\n"
	if code != exitUsage || errb.String() != want || out.Len() != 0 {
		t.Errorf("exit %d, stderr %q, stdout %q; want exit 2, %q", code, errb.String(), out.String(), want)
	}
	t.Setenv(logLevelEnv, "DEBUG")
	if l, err := envLogLevel(); err != nil || l != hclog.Debug {
		t.Errorf("DEBUG: %v, %v", l, err)
	}
}

// A tool of an MCP server that did not start is not just "not found": the
// error says why the namespace has no tools.
func TestExecMCPServerDown(t *testing.T) {
	t.Parallel()
	bin := requireBin(t)
	mcpJSON := filepath.Join(t.TempDir(), "mcp.json")
	os.WriteFile(mcpJSON, []byte(`{"mcpServers": {"broken": {"command": "sh", "args": ["-c", "exit 1"]}}}`), 0o644)
	code, res, stderr := runCLI(t, "", "exec", "--mcp", mcpJSON, "--plugin-dir", bin, "broken.echo(message='hi')")
	want := `Tool 'broken.echo' not found: MCP server "broken" (stdio: sh) is not available, so it has no tools: the server exited (exit status 1) before the MCP handshake`
	if code != exitRaised || res.Error == nil || res.Error.Type != "AttributeError" || !strings.HasPrefix(res.Error.Message, want) {
		t.Errorf("exit %d, error %+v; want 1, AttributeError %q\n%s", code, res.Error, want, stderr)
	}
}

// hclog escapes the control characters of a value, not those of a message
// or a key, which may hold the guest's text too (a bridge's log message
// about a command, relayed by go-plugin): their escape sequences (here one
// that sets the terminal's title, and an 8-bit CSI) reach the log's reader
// shown, not obeyed.
func TestLogShowsControlCharacters(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	newLogger(&out, false).Warn("running nope\n\x1b]0;pwned\x07\u009b2J\tx", "k\x1b[8m", "v")
	got := out.String()
	if strings.ContainsFunc(got, isControl) {
		t.Errorf("a control character reached the log: %q", got)
	}
	for _, want := range []string{"running nope\n", `\x1b]0;pwned\x07\u009b2J` + "\tx", `k\x1b[8m=v`} {
		if !strings.Contains(got, want) {
			t.Errorf("the log does not show %q:\n%s", want, got)
		}
	}
}
