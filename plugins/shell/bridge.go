package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parselbox/parselbox/sdk"
)

const description = `Shell commands on the host.
  exec(command, timeout=None) -> {"exit": int, "stdout": str, "stderr": str}
      Runs command (shell code, several lines allowed) in a fresh shell and
      returns its exit status and output; a non-zero exit is a result, not an
      exception. Past the timeout (seconds) the command and all its child
      processes are killed and TimeoutError shows the last output. Output
      beyond the bridge's max_output keeps its head and tail and says how many
      bytes were left out; binary output is not preserved (use base64).
  shell(first_command=None) -> {"exit": int}
      A live session, meant for .task(): t = sh.shell.task(); t.send("cd /tmp")
      writes a line to the shell's stdin, t.tail(5) shows its latest output,
      t.cancel() kills it with its children. State persists between sends.
      first_command is sent first; for Python use "exec python3 -qi".
      The task ends with {"exit": status} when the shell exits (send "exit").`

// config is the bridge's `config` block. Every key is optional.
type config struct {
	// Command is the shell's command line, split into words like a POSIX
	// shell would (quotes and backslashes, no expansions).
	Command string `json:"command" default:"bash"`
	// Cwd is the shell's working directory.
	Cwd string `json:"cwd"`
	// Env sets variables of the shell's environment. Without PATH, the
	// shell's is the plugin's, or sdk.DefaultPath.
	Env map[string]string `json:"env"`
	// Timeout bounds one exec: seconds, or a duration string; 0 means none.
	Timeout sdk.Duration `json:"timeout" default:"60s"`
	// MaxOutput bounds what exec keeps of stdout, and of stderr, in bytes.
	MaxOutput int `json:"max_output" default:"16777216"`
}

// settings is a validated configuration.
type settings struct {
	command   string   // the configured command line, for messages
	argv      []string // its words; argv[0] as written
	path      string   // the executable argv[0] resolves to
	dir       string   // working directory; "" is the plugin's
	env       []string // the shell's whole environment
	timeout   time.Duration
	maxOutput int
}

// parseConfig validates the `config` block; base is the environment that the
// shell inherits (the plugin's own, which holds only what the host passed).
// Its errors are *sdk.ConfigError naming the key.
func parseConfig(raw json.RawMessage, base []string) (*settings, error) {
	req := &sdk.ConfigureRequest{Config: raw}
	c, err := sdk.DecodeConfig[config](req)
	if err != nil {
		return nil, err
	}
	bad := func(key, format string, args ...any) error {
		return &sdk.ConfigError{Key: key, Message: fmt.Sprintf(format, args...)}
	}
	s := &settings{command: c.Command, timeout: c.Timeout.D(), maxOutput: c.MaxOutput}
	if s.argv, err = splitCommand(s.command); err != nil {
		return nil, bad("command", "%v", err)
	}
	if c.Cwd != "" {
		fi, err := os.Stat(c.Cwd)
		if err != nil {
			return nil, bad("cwd", "%v", err)
		}
		if !fi.IsDir() {
			return nil, bad("cwd", "%s is not a directory", c.Cwd)
		}
		s.dir = c.Cwd
	}
	for k := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, bad("env", "invalid variable name %q", k)
		}
	}
	s.env = shellEnv(base, c.Env)
	if s.path, err = lookPath(s.argv[0], envValue(s.env, "PATH"), s.dir); err != nil {
		return nil, bad("command", "%v", err)
	}
	if s.maxOutput <= 0 {
		return nil, bad("max_output", "must be a positive number of bytes, got %d", s.maxOutput)
	}
	return s, nil
}

// shellEnv is the shell's environment: base without the variables that
// go-plugin and the SDK set for the plugin itself, then PATH if base has
// none, then env. The result is sorted, for stable tests.
func shellEnv(base []string, env map[string]string) []string {
	vars := map[string]string{}
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || pluginVar(k) {
			continue
		}
		vars[k] = v
	}
	if _, ok := vars["PATH"]; !ok {
		vars["PATH"] = sdk.DefaultPath
	}
	maps.Copy(vars, env)
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// pluginVar reports whether an environment variable belongs to the plugin
// machinery rather than to the user.
func pluginVar(name string) bool {
	return strings.HasPrefix(name, "PLUGIN_") || name == sdk.Handshake.MagicCookieKey || name == sdk.LogLevelEnv
}

func envValue(env []string, name string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// lookPath finds the executable name in the directories of path, as a shell
// would; a name with a slash is taken as is (relative to dir). The plugin's
// own PATH plays no part: it is the shell's that counts.
func lookPath(name, path, dir string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		fi, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is not an executable file", p)
		}
		return name, nil
	}
	if p := sdk.LookPath(name, path); p != "" {
		return p, nil
	}
	return "", fmt.Errorf("%q not found in PATH %q (set PATH in env, or give a full path)", name, path)
}

// splitCommand splits a command line into words the way a POSIX shell does,
// without any expansion: blanks separate words; 'single quotes' keep their
// text as is; "double quotes" keep theirs but for \" \\ \$ and \`; outside
// quotes a backslash keeps the next character.
func splitCommand(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case r == '\\':
			i++
			if i == len(rs) {
				return nil, fmt.Errorf("%q ends with a backslash", line)
			}
			if rs[i] != '\n' { // backslash-newline joins lines
				w.WriteRune(rs[i])
				inWord = true
			}
		case r == '\'':
			end := slices.Index(rs[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("%q has an unterminated single quote", line)
			}
			w.WriteString(string(rs[i+1 : i+1+end]))
			i += end + 1
			inWord = true
		case r == '"':
			i++
			for ; i < len(rs) && rs[i] != '"'; i++ {
				if rs[i] == '\\' && i+1 < len(rs) && strings.ContainsRune("\"\\$`\n", rs[i+1]) {
					i++
					if rs[i] == '\n' {
						continue
					}
				}
				w.WriteRune(rs[i])
			}
			if i == len(rs) {
				return nil, fmt.Errorf("%q has an unterminated double quote", line)
			}
			inWord = true
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, errors.New("is empty")
	}
	return words, nil
}

// shellBridge holds the configuration and the running processes.
type shellBridge struct {
	mu     sync.Mutex
	cfg    *settings
	live   map[*process]struct{}
	closed bool // Shutdown ran: no new processes
}

// newBridge returns the shell bridge, configured with the defaults until the
// host configures it.
func newBridge() *sdk.Bridge {
	sb := &shellBridge{live: map[*process]struct{}{}}
	if s, err := parseConfig(nil, os.Environ()); err == nil {
		sb.cfg = s
	}
	b := sdk.NewBridge(&sdk.Info{Name: "shell", Version: "v0.1.0", Description: description}, &sdk.Options{
		Configure: sb.configure,
		Shutdown:  sb.shutdown,
	})
	sdk.AddTool(b, &sdk.Tool{Name: "exec", Description: execDescription}, sb.exec)
	sdk.AddTool(b, &sdk.Tool{Name: "shell", Description: shellDescription}, sb.shell)
	return b
}

func (sb *shellBridge) configure(_ context.Context, req *sdk.ConfigureRequest) error {
	s, err := parseConfig(req.Config, os.Environ())
	if err != nil {
		return err
	}
	sb.mu.Lock()
	sb.cfg = s
	sb.mu.Unlock()
	return nil
}

func (sb *shellBridge) settings() (*settings, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.cfg == nil {
		// Only when the default command is missing and the host has not
		// configured the bridge: say why.
		_, err := parseConfig(nil, os.Environ())
		return nil, sdk.Errorf(sdk.CodeUnavailable, "shell bridge not configured: %v", err)
	}
	return sb.cfg, nil
}

// shutdown kills every running command and session with its process group,
// and waits (until ctx ends) for them to be reaped.
func (sb *shellBridge) shutdown(ctx context.Context) error {
	sb.mu.Lock()
	sb.closed = true
	procs := slices.Collect(maps.Keys(sb.live))
	sb.mu.Unlock()
	for _, p := range procs {
		p.kill(reasonShutdown)
	}
	for _, p := range procs {
		select {
		case <-p.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// start starts the configured command as a process of the bridge.
func (sb *shellBridge) start(ctx context.Context, s *settings) (*process, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.closed {
		return nil, sdk.Errorf(sdk.CodeUnavailable, "the shell bridge is shutting down")
	}
	p, err := startProcess(ctx, s)
	if err != nil {
		if ctx.Err() != nil {
			return nil, sdk.Errorf(sdk.CodeCancelled, "cancelled before %s started", s.argv[0])
		}
		return nil, sdk.Errorf(sdk.CodeUnavailable, "cannot start %q: %v", s.command, err)
	}
	sb.live[p] = struct{}{}
	go func() {
		<-p.done
		sb.mu.Lock()
		delete(sb.live, p)
		sb.mu.Unlock()
	}()
	return p, nil
}

const execDescription = `Run shell code in a fresh shell and return {"exit", "stdout", "stderr"}.
command is fed to the shell's stdin (several lines allowed). A non-zero exit is
returned, not raised. Past the timeout (seconds; default: the bridge's, 0: none)
the whole process group is killed and TimeoutError is raised with the last output.
Background jobs still running when the shell exits are killed. Run as a task,
each output line is logged, so exec.task(...).tail() shows progress.`

type execIn struct {
	Command string   `json:"command" jsonschema:"shell code to run, fed to the shell's stdin"`
	Timeout *float64 `json:"timeout,omitempty" jsonschema:"seconds before the command is killed; default: the bridge's timeout; 0: no limit"`
}

type execOut struct {
	Exit   int    `json:"exit"`
	Stdout string `json:"stdout"`
	Stderr string `json:"stderr"`
}

// timeoutTail bounds how much of each stream a TimeoutError shows.
const timeoutTail = 4 << 10

func (sb *shellBridge) exec(ctx context.Context, req *sdk.CallToolRequest, in execIn) (execOut, error) {
	s, err := sb.settings()
	if err != nil {
		return execOut{}, err
	}
	timeout := s.timeout
	if in.Timeout != nil {
		if *in.Timeout < 0 {
			return execOut{}, sdk.Errorf(sdk.CodeInvalidArgument, "timeout must not be negative, got %g", *in.Timeout)
		}
		timeout = time.Duration(*in.Timeout * float64(time.Second))
	}
	runCtx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	p, err := sb.start(runCtx, s)
	if err != nil {
		return execOut{}, err
	}
	stdout, stderr := newCapture(s.maxOutput), newCapture(s.maxOutput)
	// Lines are logged for a task's log (task.tail()); a plain call has
	// none, and logging costs much more than the command for chatty output.
	var log func(string)
	if req.TaskID != "" {
		log = req.Log
	}
	p.read(&lines{capture: stdout, log: log}, &lines{capture: stderr, log: log})
	go func() {
		_, _ = p.stdin.Write([]byte(withNewline(in.Command)))
		_ = p.stdin.Close() // EOF: the shell exits after the last command
	}()
	code, reason := p.wait()
	switch reason {
	case reasonShutdown:
		return execOut{}, sdk.Errorf(sdk.CodeUnavailable, "the shell bridge is shutting down; the command was killed")
	case reasonCancel:
		if ctx.Err() == nil && runCtx.Err() != nil {
			return execOut{}, sdk.Errorf(sdk.CodeTimeout, "%s", timeoutMessage(timeout, stdout, stderr))
		}
		return execOut{}, sdk.Errorf(sdk.CodeCancelled, "exec cancelled; the command and its process group were killed")
	}
	return execOut{Exit: code, Stdout: stdout.String(), Stderr: stderr.String()}, nil
}

func timeoutMessage(timeout time.Duration, stdout, stderr *capture) string {
	var b strings.Builder
	fmt.Fprintf(&b, "command timed out after %s; it was killed with its process group", timeout)
	for _, st := range []struct {
		name string
		c    *capture
	}{{"stdout", stdout}, {"stderr", stderr}} {
		tail, cut := st.c.last(timeoutTail)
		if tail == "" {
			continue
		}
		if cut {
			fmt.Fprintf(&b, "\n--- last %d bytes of %s ---\n", len(tail), st.name)
		} else {
			fmt.Fprintf(&b, "\n--- %s ---\n", st.name)
		}
		b.WriteString(strings.TrimSuffix(tail, "\n"))
	}
	return strings.ToValidUTF8(b.String(), "\uFFFD")
}

const shellDescription = `Start a live shell session; use it as a task: t = sh.shell.task().
t.send("line") writes a line to the shell's stdin (t.send(None) closes stdin);
every output line (stdout and stderr) goes to the task's log: t.tail(n).
first_command, if given, is sent first. State persists between sends. A program
started in the session shares its stdin and may read ahead: for Python, make it
the session with first_command="exec python3 -qi". The task ends with
{"exit": status} when the shell exits (t.send("exit")); t.cancel() kills the
shell and all its child processes. Called without .task() nobody can send: the
shell runs first_command, reads end of input, and returns {"exit": status};
its output is not kept (use exec).`

type shellIn struct {
	FirstCommand string `json:"first_command,omitempty" jsonschema:"a first line to send, e.g. \"python3 -i\""`
}

type shellOut struct {
	Exit int `json:"exit"`
}

func (sb *shellBridge) shell(ctx context.Context, req *sdk.CallToolRequest, in shellIn) (shellOut, error) {
	s, err := sb.settings()
	if err != nil {
		return shellOut{}, err
	}
	p, err := sb.start(ctx, s)
	if err != nil {
		return shellOut{}, err
	}
	req.Log(fmt.Sprintf("shell started: %s (pid %d)", s.command, p.pid))
	p.read(&lines{log: req.Log}, &lines{log: req.Log})
	go feed(p, in.FirstCommand, req)
	code, reason := p.wait()
	switch reason {
	case reasonShutdown:
		return shellOut{}, sdk.Errorf(sdk.CodeUnavailable, "the shell bridge is shutting down; the session was killed")
	case reasonCancel:
		return shellOut{}, sdk.Errorf(sdk.CodeCancelled, "shell session cancelled; it was killed with its process group")
	}
	return shellOut{Exit: code}, nil
}

// feed writes the first command and then every message sent into the call
// to the session's stdin, until the session ends. A call that is not a task
// gets no messages: its stdin is closed after the first command.
func feed(p *process, first string, req *sdk.CallToolRequest) {
	if first != "" {
		if _, err := p.stdin.Write([]byte(withNewline(first))); err != nil {
			return
		}
	}
	if req.TaskID == "" {
		_ = p.stdin.Close()
		return
	}
	for {
		select {
		case <-p.done:
			return
		case msg := <-req.Messages():
			line, eof := messageText(msg)
			if eof {
				_ = p.stdin.Close()
				return
			}
			if _, err := p.stdin.Write([]byte(withNewline(line))); err != nil {
				return // the session has ended
			}
		}
	}
}

// messageText is what a message sent into a session writes: a JSON string
// as its text, null as end of input, anything else as its JSON text.
func messageText(msg json.RawMessage) (text string, eof bool) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 || string(msg) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(msg, &s) == nil {
		return s, false
	}
	return string(msg), false
}

func withNewline(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
