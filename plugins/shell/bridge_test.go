package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// waitTimeout bounds every wait for output or for a process to go: generous,
// as the machines that run the tests are shared.
const waitTimeout = 60 * time.Second

func TestSplitCommand(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		line    string
		want    []string
		wantErr string
	}{
		"one word":           {line: "bash", want: []string{"bash"}},
		"blanks":             {line: "  ssh\t-T  user@host \n", want: []string{"ssh", "-T", "user@host"}},
		"single quotes":      {line: `sh -c 'echo "$HOME" \n'`, want: []string{"sh", "-c", `echo "$HOME" \n`}},
		"double quotes":      {line: `a "b c" "d\"e" "f\\g" "\x"`, want: []string{"a", "b c", `d"e`, `f\g`, `\x`}},
		"backslash":          {line: `a\ b c\\d \'`, want: []string{"a b", `c\d`, "'"}},
		"joined quotes":      {line: `a'b'"c"d`, want: []string{"abcd"}},
		"empty quotes":       {line: `a '' ""`, want: []string{"a", "", ""}},
		"line continuation":  {line: "a \\\nb", want: []string{"a", "b"}},
		"unicode":            {line: "echo 'héllo wörld'", want: []string{"echo", "héllo wörld"}},
		"empty":              {line: "  ", wantErr: "is empty"},
		"open single quote":  {line: "sh -c 'x", wantErr: "unterminated single quote"},
		"open double quote":  {line: `sh -c "x`, wantErr: "unterminated double quote"},
		"trailing backslash": {line: `a\`, wantErr: "ends with a backslash"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := splitCommand(tc.line)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	script := filepath.Join(dir, "myshell")
	os.WriteFile(file, nil, 0o644)
	os.WriteFile(script, []byte("#!/bin/sh\nexec sh\n"), 0o755)
	// The shell's PATH: bash and sh found there (they are not run here).
	bin := t.TempDir()
	for _, name := range []string{"bash", "sh"} {
		os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755)
	}
	base := []string{"PATH=/no/such/dir:" + bin}
	type view struct {
		Argv      []string
		Path      string
		Dir       string
		Timeout   time.Duration
		MaxOutput int
	}
	for name, tc := range map[string]struct {
		config  string
		want    view
		wantErr string
	}{
		"defaults": {config: `{}`, want: view{Argv: []string{"bash"}, Path: bin + "/bash", Timeout: time.Minute, MaxOutput: 16 << 20}},
		"empty":    {config: ``, want: view{Argv: []string{"bash"}, Path: bin + "/bash", Timeout: time.Minute, MaxOutput: 16 << 20}},
		"nulls":    {config: `{"command":null,"timeout":null,"max_output":null}`, want: view{Argv: []string{"bash"}, Path: bin + "/bash", Timeout: time.Minute, MaxOutput: 16 << 20}},
		"every key": {
			config: fmt.Sprintf(`{"command":"sh -e","cwd":%q,"env":{"A":"1"},"timeout":1.5,"max_output":100}`, dir),
			want:   view{Argv: []string{"sh", "-e"}, Path: bin + "/sh", Dir: dir, Timeout: 1500 * time.Millisecond, MaxOutput: 100},
		},
		"duration string": {config: `{"timeout":"2m30s"}`, want: view{Argv: []string{"bash"}, Path: bin + "/bash", Timeout: 150 * time.Second, MaxOutput: 16 << 20}},
		"seconds string":  {config: `{"timeout":"5"}`, want: view{Argv: []string{"bash"}, Path: bin + "/bash", Timeout: 5 * time.Second, MaxOutput: 16 << 20}},
		"no timeout":      {config: `{"timeout":0}`, want: view{Argv: []string{"bash"}, Path: bin + "/bash", MaxOutput: 16 << 20}},
		"PATH from env": {
			config: fmt.Sprintf(`{"command":"myshell","env":{"PATH":%q}}`, dir),
			want:   view{Argv: []string{"myshell"}, Path: script, Timeout: time.Minute, MaxOutput: 16 << 20},
		},
		"path relative to cwd": {
			config: fmt.Sprintf(`{"command":"./myshell -x","cwd":%q}`, dir),
			want:   view{Argv: []string{"./myshell", "-x"}, Path: "./myshell", Dir: dir, Timeout: time.Minute, MaxOutput: 16 << 20},
		},
		"unknown key":        {config: `{"shell":"zsh"}`, wantErr: `shell: unknown key (known keys: command, cwd, env, timeout, max_output)`},
		"wrong type":         {config: `{"command":["bash"]}`, wantErr: "command: expected string, got array"},
		"env not strings":    {config: `{"env":{"N":1}}`, wantErr: "env.N: expected string, got number"},
		"bad env name":       {config: `{"env":{"A=B":"1"}}`, wantErr: `invalid variable name "A=B"`},
		"bad timeout":        {config: `{"timeout":"soon"}`, wantErr: `timeout: expected seconds (a number) or a duration such as "30s", got "soon"`},
		"negative timeout":   {config: `{"timeout":-1}`, wantErr: "must not be negative"},
		"bad max_output":     {config: `{"max_output":0}`, wantErr: "max_output: must be a positive"},
		"empty command":      {config: `{"command":""}`, wantErr: "command: is empty"},
		"unbalanced command": {config: `{"command":"sh -c 'x"}`, wantErr: "unterminated"},
		"missing command":    {config: `{"command":"no-such-shell"}`, wantErr: `"no-such-shell" not found in PATH "/no/such/dir:`},
		"not executable":     {config: fmt.Sprintf(`{"command":%q}`, file), wantErr: "not an executable file"},
		"missing cwd":        {config: `{"cwd":"/no/such/dir"}`, wantErr: "cwd: stat /no/such/dir"},
		"cwd is a file":      {config: fmt.Sprintf(`{"cwd":%q}`, file), wantErr: "is not a directory"},
		"not an object":      {config: `[]`, wantErr: "expected an object, got an array"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := parseConfig(json.RawMessage(tc.config), base)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := view{Argv: s.argv, Path: s.path, Dir: s.dir, Timeout: s.timeout, MaxOutput: s.maxOutput}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestShellEnv(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		base []string
		env  map[string]string
		want []string
	}{
		"nothing": {want: []string{"PATH=" + sdk.DefaultPath}},
		"the plugin's environment, without the plugin machinery": {
			base: []string{"HOME=/root", "PATH=/bin", "PLUGIN_CLIENT_CERT=x", "PLUGIN_MIN_PORT=1",
				sdk.Handshake.MagicCookieKey + "=cookie", sdk.LogLevelEnv + "=debug", "malformed", "=x"},
			want: []string{"HOME=/root", "PATH=/bin"},
		},
		"env wins": {
			base: []string{"A=1", "B=2"},
			env:  map[string]string{"B": "3", "PATH": "/opt/bin", "EMPTY": ""},
			want: []string{"A=1", "B=3", "EMPTY=", "PATH=/opt/bin"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, shellEnv(tc.base, tc.env)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCapture(t *testing.T) {
	t.Parallel()
	numbers := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "%d\n", i)
		}
		return b.String()
	}
	for name, tc := range map[string]struct {
		max    int
		writes []string
		want   string
	}{
		"empty":       {max: 10, want: ""},
		"fits":        {max: 10, writes: []string{"abc", "def\n"}, want: "abcdef\n"},
		"exactly max": {max: 4, writes: []string{"ab", "cd"}, want: "abcd"},
		"no newlines": {
			max: 4, writes: []string{"abcdefgh"},
			want: "ab\n[... 4 bytes omitted of 8; narrow the command or write the output to a file ...]\ngh",
		},
		"many small writes": {
			max: 6, writes: strings.Split("0123456789", ""),
			want: "012\n[... 4 bytes omitted of 10; narrow the command or write the output to a file ...]\n789",
		},
		"tail starts mid-line": {
			max: 20, writes: []string{"aaaaaaaaa\n", strings.Repeat("b", 20) + "\n", "cc\ndd\n"},
			want: "aaaaaaaaa\n[... 21 bytes omitted of 37; narrow the command or write the output to a file ...]\ncc\ndd\n",
		},
		"cut at line ends": {
			max: 20, writes: []string{numbers(1, 100)},
			want: "1\n2\n3\n4\n5\n[... 272 bytes omitted of 292; narrow the command or write the output to a file ...]\n98\n99\n100\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newCapture(tc.max)
			for _, w := range tc.writes {
				c.write([]byte(w))
			}
			if diff := cmp.Diff(tc.want, c.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	c := newCapture(8)
	c.write([]byte("0123456789"))
	if got, cut := c.last(3); got != "789" || !cut {
		t.Errorf("last(3) = %q, %v", got, cut)
	}
	c = newCapture(8)
	c.write([]byte("0123"))
	if got, cut := c.last(10); got != "0123" || cut {
		t.Errorf("last(10) = %q, %v", got, cut)
	}
}

func TestLines(t *testing.T) {
	t.Parallel()
	var got []string
	l := &lines{log: func(s string) { got = append(got, s) }}
	for _, w := range []string{"a\nb", "c\r\n\n", strings.Repeat("x", maxLogLine+3), "\nlast"} {
		l.Write([]byte(w))
	}
	l.flush()
	want := []string{"a", "bc", "", strings.Repeat("x", maxLogLine), "xxx", "last"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// newHarness serves a shell bridge in the test's process, configured with cfg.
func newHarness(t *testing.T, cfg map[string]any) *sdktest.Client {
	t.Helper()
	c := sdktest.NewHarness(t, newBridge())
	configure(t, c, cfg)
	return c
}

func configure(t *testing.T, c sdk.BridgeServer, cfg map[string]any) {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Configure(t.Context(), &sdk.ConfigureRequest{Config: raw}); err != nil {
		t.Fatalf("Configure: %v", err)
	}
}

// call calls a tool and decodes its result into out, failing on an error.
func call(t *testing.T, ctx context.Context, c sdk.BridgeServer, req *sdk.CallToolRequest, out any) {
	t.Helper()
	res := callResult(t, ctx, c, req)
	if res.IsError {
		t.Fatalf("%s failed: %+v", req.Name, res.Error)
	}
	if err := json.Unmarshal(res.Content, out); err != nil {
		t.Fatal(err)
	}
}

func callResult(t *testing.T, ctx context.Context, c sdk.BridgeServer, req *sdk.CallToolRequest) *sdk.CallToolResult {
	t.Helper()
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("CallTool %s: %v", req.Name, err)
	}
	return res
}

// failed checks that a call failed with code, and returns its message.
func failed(t *testing.T, res *sdk.CallToolResult, code sdk.ErrorCode) string {
	t.Helper()
	if !res.IsError || res.Error == nil {
		t.Fatalf("want a %s error, got %s", code, res.Content)
	}
	if res.Error.Code != code {
		t.Fatalf("want a %s error, got %s: %s", code, res.Error.Code, res.Error.Message)
	}
	return res.Error.Message
}

func args(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExec(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		config  map[string]any
		command string
		want    execOut
	}{
		"stdout and stderr apart": {command: "echo out; echo err >&2; exit 3", want: execOut{Exit: 3, Stdout: "out\n", Stderr: "err\n"}},
		"several lines":           {command: "x=4\necho $((x*x))\n", want: execOut{Stdout: "16\n"}},
		"no trailing newline":     {command: "printf 'a\\nb'", want: execOut{Stdout: "a\nb"}},
		"killed by a signal":      {command: "echo before; kill -9 $$; echo after", want: execOut{Exit: 137, Stdout: "before\n"}},
		"sh":                      {config: map[string]any{"command": "sh"}, command: "echo $((6*7))", want: execOut{Stdout: "42\n"}},
		"python3 as the shell":    {config: map[string]any{"command": "python3"}, command: "import sys\nprint(6*7)\nsys.exit(4)", want: execOut{Exit: 4, Stdout: "42\n"}},
		"quoted command line":     {config: map[string]any{"command": `sh -c 'exec cat'`}, command: "it's raw: $HOME", want: execOut{Stdout: "it's raw: $HOME\n"}},
		"cwd":                     {config: map[string]any{"cwd": dir}, command: "pwd", want: execOut{Stdout: dir + "\n"}},
		"env":                     {config: map[string]any{"env": map[string]string{"GREETING": "hi there"}}, command: `echo "$GREETING"`, want: execOut{Stdout: "hi there\n"}},
		"no plugin variables":     {command: `env | grep -c '^PLUGIN_' ; true`, want: execOut{Stdout: "0\n"}},
		"invalid UTF-8":           {command: `printf 'a\377b'`, want: execOut{Stdout: "a\ufffdb"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := newHarness(t, tc.config)
			var got execOut
			call(t, t.Context(), c, &sdk.CallToolRequest{Name: "exec", Arguments: args(t, execIn{Command: tc.command})}, &got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestExecFreshShellEachCall(t *testing.T) {
	t.Parallel()
	c := newHarness(t, nil)
	var got execOut
	call(t, t.Context(), c, &sdk.CallToolRequest{Name: "exec", Arguments: args(t, execIn{Command: "x=1; cd /; echo $x"})}, &got)
	call(t, t.Context(), c, &sdk.CallToolRequest{Name: "exec", Arguments: args(t, execIn{Command: `echo "[$x]"`})}, &got)
	if got.Stdout != "[]\n" {
		t.Errorf("state leaked between execs: %q", got.Stdout)
	}
}

func TestExecMaxOutput(t *testing.T) {
	t.Parallel()
	c := newHarness(t, map[string]any{"max_output": 100})
	var got execOut
	call(t, t.Context(), c, &sdk.CallToolRequest{Name: "exec", Arguments: args(t, execIn{Command: "seq 1 1000; seq 1 10 >&2"})}, &got)
	// seq 1 1000 writes 3893 bytes.
	if !strings.HasPrefix(got.Stdout, "1\n2\n3\n") || !strings.HasSuffix(got.Stdout, "\n999\n1000\n") ||
		!regexp.MustCompile(`\n\[\.\.\. \d+ bytes omitted of 3893; `).MatchString(got.Stdout) || len(got.Stdout) > 250 {
		t.Errorf("stdout not cut in the middle:\n%s", got.Stdout)
	}
	if got.Stderr != "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n" {
		t.Errorf("stderr: %q", got.Stderr)
	}
}

// TestExecLogsLines: in a task, exec logs every line of its output; a plain
// call logs nothing.
func TestExecLogsLines(t *testing.T) {
	t.Parallel()
	c := newHarness(t, nil)
	for task, want := range map[string][]string{"sh_1": {"one", "three", "two"}, "": nil} {
		var rec sdktest.Recorder
		var got execOut
		call(t, t.Context(), c, &sdk.CallToolRequest{
			Name: "exec", TaskID: task, Events: &rec,
			Arguments: args(t, execIn{Command: "echo one; echo two >&2; printf three"}),
		}, &got)
		lines := rec.Lines()
		slices.Sort(lines)
		if diff := cmp.Diff(want, lines); diff != "" {
			t.Errorf("task %q: log (-want +got):\n%s", task, diff)
		}
	}
}

// TestExecTimeout: past the timeout the process group is killed, children
// included, and the error shows the output so far.
func TestExecTimeout(t *testing.T) {
	t.Parallel()
	c := newHarness(t, map[string]any{"timeout": 3600})
	timeout := 2.0
	res := callResult(t, t.Context(), c, &sdk.CallToolRequest{
		Name: "exec", Arguments: args(t, execIn{Command: "echo partial; sleep 1000 & echo $$ $!; sleep 1000", Timeout: &timeout}),
	})
	msg := failed(t, res, sdk.CodeTimeout)
	if !strings.HasPrefix(msg, "command timed out after 2s; it was killed with its process group\n--- stdout ---\npartial\n") {
		t.Errorf("message: %q", msg)
	}
	for _, pid := range pids(t, msg) {
		waitGone(t, pid)
	}
}

func TestExecBadTimeout(t *testing.T) {
	t.Parallel()
	c := newHarness(t, nil)
	timeout := -1.0
	res := callResult(t, t.Context(), c, &sdk.CallToolRequest{Name: "exec", Arguments: args(t, execIn{Command: "true", Timeout: &timeout})})
	failed(t, res, sdk.CodeInvalidArgument)
}

// TestExecKillsBackgroundJobs: what the shell leaves running when it exits
// is killed, and exec does not wait for it.
func TestExecKillsBackgroundJobs(t *testing.T) {
	t.Parallel()
	c := newHarness(t, nil)
	var got execOut
	call(t, t.Context(), c, &sdk.CallToolRequest{Name: "exec", Arguments: args(t, execIn{Command: "sleep 1000 & echo $!"})}, &got)
	for _, pid := range pids(t, got.Stdout) {
		waitGone(t, pid)
	}
}

func TestExecCancel(t *testing.T) {
	t.Parallel()
	c := newHarness(t, nil)
	var rec sdktest.Recorder
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, _ := c.CallTool(ctx, &sdk.CallToolRequest{
			Name: "exec", TaskID: "sh_1", Events: &rec,
			Arguments: args(t, execIn{Command: "sleep 1000 & echo pids $$ $!; wait"}),
		})
		done <- res
	}()
	line := waitLine(t, &rec, "pids ")
	cancel()
	failed(t, <-done, sdk.CodeCancelled)
	for _, pid := range pids(t, line) {
		waitGone(t, pid)
	}
}

// session is a shell tool call running as a task.
type session struct {
	rec   sdktest.Recorder
	inbox chan json.RawMessage
	done  chan *sdk.CallToolResult
}

func startSession(t *testing.T, ctx context.Context, c sdk.BridgeServer, in shellIn) *session {
	t.Helper()
	s := &session{inbox: make(chan json.RawMessage, 16), done: make(chan *sdk.CallToolResult, 1)}
	req := &sdk.CallToolRequest{Name: "shell", TaskID: "sh_1", Arguments: args(t, in), Events: &s.rec, Inbox: s.inbox}
	go func() {
		res, err := c.CallTool(ctx, req)
		if err != nil {
			res = &sdk.CallToolResult{IsError: true, Error: &sdk.ToolError{Code: "transport", Message: err.Error()}}
		}
		s.done <- res
	}()
	return s
}

func (s *session) send(t *testing.T, msg any) {
	t.Helper()
	s.inbox <- args(t, msg)
}

func (s *session) result(t *testing.T) *sdk.CallToolResult {
	t.Helper()
	select {
	case res := <-s.done:
		return res
	case <-time.After(waitTimeout):
		t.Fatalf("the session did not end; log:\n%s", strings.Join(s.rec.Lines(), "\n"))
		return nil
	}
}

func TestSession(t *testing.T) {
	t.Parallel()
	c := newHarness(t, nil)
	s := startSession(t, t.Context(), c, shellIn{})
	s.send(t, "x=21")
	s.send(t, "echo $((x*2))")
	waitLine(t, &s.rec, "42")
	s.send(t, "cd / && echo \"in $PWD\" >&2")
	waitLine(t, &s.rec, "in /")
	s.send(t, "exit 3")
	var got shellOut
	if err := json.Unmarshal(s.result(t).Content, &got); err != nil {
		t.Fatal(err)
	}
	if got.Exit != 3 {
		t.Errorf("exit %d, want 3", got.Exit)
	}
	lines := s.rec.Lines()
	if !regexp.MustCompile(`^shell started: bash \(pid \d+\)$`).MatchString(lines[0]) {
		t.Errorf("first log line: %q", lines[0])
	}
	if diff := cmp.Diff([]string{"42", "in /"}, lines[1:]); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

// TestSessionPython runs Python inside the bash session, then goes back to
// bash. Python reads ahead on stdin, so the next line for bash is sent only
// once Python has exited (it says "bye" on its way out).
func TestSessionPython(t *testing.T) {
	t.Parallel()
	c := newHarness(t, nil)
	s := startSession(t, t.Context(), c, shellIn{FirstCommand: "python3 -qi"})
	s.send(t, "x=21")
	s.send(t, "print(x*2)")
	waitLine(t, &s.rec, "42")
	s.send(t, "import atexit; _ = atexit.register(print, 'bye')")
	s.send(t, "exit()")
	waitLine(t, &s.rec, "bye")
	s.send(t, "echo back in bash")
	waitLine(t, &s.rec, "back in bash")
	s.send(t, nil) // end of input: bash exits
	var got shellOut
	if err := json.Unmarshal(s.result(t).Content, &got); err != nil {
		t.Fatal(err)
	}
	if got.Exit != 0 {
		t.Errorf("exit %d, want 0", got.Exit)
	}
}

func TestSessionMessages(t *testing.T) {
	t.Parallel()
	c := newHarness(t, map[string]any{"command": `sh -c 'exec cat'`})
	s := startSession(t, t.Context(), c, shellIn{FirstCommand: "first"})
	for _, msg := range []any{"two\nlines", "ends with newline\n", 42, map[string]any{"a": true}, nil} {
		s.send(t, msg)
	}
	if res := s.result(t); res.IsError {
		t.Fatalf("session: %+v", res.Error)
	}
	want := []string{"first", "two", "lines", "ends with newline", "42", `{"a":true}`}
	if diff := cmp.Diff(want, s.rec.Lines()[1:]); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

func TestSessionCancel(t *testing.T) {
	t.Parallel()
	c := newHarness(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s := startSession(t, ctx, c, shellIn{})
	s.send(t, "sleep 1000 & echo pids $$ $!")
	line := waitLine(t, &s.rec, "pids ")
	cancel()
	msg := failed(t, s.result(t), sdk.CodeCancelled)
	if !strings.Contains(msg, "process group") {
		t.Errorf("message: %q", msg)
	}
	for _, pid := range pids(t, line) {
		waitGone(t, pid)
	}
}

func TestSessionSynchronous(t *testing.T) {
	t.Parallel()
	c := newHarness(t, nil)
	for first, want := range map[string]int{"": 0, "echo hi; exit 7": 7} {
		var got shellOut
		call(t, t.Context(), c, &sdk.CallToolRequest{Name: "shell", Arguments: args(t, shellIn{FirstCommand: first})}, &got)
		if got.Exit != want {
			t.Errorf("%q: exit %d, want %d", first, got.Exit, want)
		}
	}
}

func TestShutdownKillsSessions(t *testing.T) {
	t.Parallel()
	c := newHarness(t, nil)
	var all []int
	var sessions []*session
	for range 2 {
		s := startSession(t, t.Context(), c, shellIn{})
		s.send(t, "sleep 1000 & echo pids $$ $!")
		all = append(all, pids(t, waitLine(t, &s.rec, "pids "))...)
		sessions = append(sessions, s)
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	if err := c.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for _, s := range sessions {
		failed(t, s.result(t), sdk.CodeUnavailable)
	}
	for _, pid := range all {
		waitGone(t, pid)
	}
	res := callResult(t, t.Context(), c, &sdk.CallToolRequest{Name: "exec", Arguments: args(t, execIn{Command: "true"})})
	failed(t, res, sdk.CodeUnavailable)
}

func TestConfigureRejects(t *testing.T) {
	t.Parallel()
	c := sdktest.NewHarness(t, newBridge())
	err := c.Configure(t.Context(), &sdk.ConfigureRequest{Config: json.RawMessage(`{"command":"bash","shell":"zsh"}`)})
	var ce *sdk.ConfigError
	if !errors.As(err, &ce) || ce.Key != "shell" || !strings.HasPrefix(ce.Message, "unknown key") {
		t.Errorf("Configure: %v, want a *sdk.ConfigError for the key shell", err)
	}
}

// waitLine waits until the recorder holds a log line starting with prefix,
// and returns it.
func waitLine(t *testing.T, rec *sdktest.Recorder, prefix string) string {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		changed := rec.Changed()
		for _, l := range rec.Lines() {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no log line %q; log:\n%s", prefix, strings.Join(rec.Lines(), "\n"))
		}
	}
}

// pids returns the numbers in the last line of text that has some.
func pids(t *testing.T, text string) []int {
	t.Helper()
	ls := strings.Split(strings.TrimSpace(text), "\n")
	for i := len(ls) - 1; i >= 0; i-- {
		var out []int
		for _, f := range strings.Fields(ls[i]) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	t.Fatalf("no pids in %q", text)
	return nil
}

// waitGone waits until process pid has ended (a zombie counts as ended:
// nobody may be left to reap an orphan).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still running", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	state := b[i+2]
	return state != 'Z' && state != 'X'
}
