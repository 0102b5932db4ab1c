package main

import (
	"bytes"
	"errors"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

func TestIncomplete(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]bool{
		"x = 1":                         false,
		"f(1,":                          true,
		"f(1,\n2)":                      false,
		"def f():":                      true,
		"def f():\n    return 1":        true,
		"def f():\n    return 1\n":      false,
		"s = '''a":                      true,
		"s = '''a\nb'''":                false,
		"d = {'a': 1":                   true,
		"x = 1 + \\":                    true,
		"'('":                           false,
		"x = 1  # a comment (":          false,
		"for i in range(3): print(i)":   true,
		"{'k': ':'}":                    false,
		"lambda: 1":                     false, // a colon, but not a block's
		"@dec":                          false,
		"if x:\n    pass\nelse:\n    y": true,
	} {
		if got := incomplete(src); got != want {
			t.Errorf("incomplete(%q) = %v, want %v", src, got, want)
		}
	}
}

// terminal reads what a program (the REPL, an interactive shell) writes to
// its pseudo-terminal.
type terminal struct {
	t   *testing.T
	mu  sync.Mutex
	out bytes.Buffer
	at  int // what expect has consumed
	tty io.Writer
}

// startTerminal starts cmd on a new pseudo-terminal, which is closed when
// the test ends, and collects what it writes there.
func startTerminal(t *testing.T, cmd *exec.Cmd) *terminal {
	t.Helper()
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	tm := &terminal{t: t, tty: tty}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			tm.mu.Lock()
			tm.out.Write(buf[:n])
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return tm
}

// output is all that the program has written so far.
func (tm *terminal) output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

// expect waits until the output after what was consumed holds want, and
// consumes up to its end.
func (tm *terminal) expect(want string) {
	tm.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		tm.mu.Lock()
		s := tm.out.String()[tm.at:]
		tm.mu.Unlock()
		if i := strings.Index(s, want); i >= 0 {
			tm.at += i + len(want)
			return
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("no %q in the REPL's output; after the last match it wrote:\n%s", want, s)
		}
		time.Sleep(10 * time.Millisecond) // polling the output, with a deadline
	}
}

// seen is expect without failing: whether want shows up within d.
func (tm *terminal) seen(want string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		tm.mu.Lock()
		s := tm.out.String()[tm.at:]
		tm.mu.Unlock()
		if i := strings.Index(s, want); i >= 0 {
			tm.at += i + len(want)
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond) // polling the output, with a deadline
	}
}

func (tm *terminal) send(s string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.tty, s); err != nil {
		tm.t.Fatal(err)
	}
}

// The REPL driven as a person would, through a pseudo-terminal: state kept
// across inputs, a multi-line block, pretty results, errors, :files,
// :info, Ctrl-C interrupting running code (state kept), :reset, Ctrl-D.
func TestReplPTY(t *testing.T) {
	t.Parallel()
	cmd := parselbox(t, append([]string{"repl"}, sandboxArgs(t)...)...)
	tm := startTerminal(t, cmd)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	tm.expect(">>> ")
	tm.send("x = 6 * 7\r")
	tm.expect(">>> ")
	tm.send("x\r")
	tm.expect("42\r\n>>> ")

	tm.send("def inc(a):\r")
	tm.expect("... ")
	tm.send("    return a + 1\r")
	tm.expect("... ")
	tm.send("\r")
	tm.expect(">>> ")
	tm.send("inc(x)\r")
	tm.expect("43\r\n>>> ")

	tm.send(`{"a": [1, 2]}` + "\r")
	tm.expect("{\r\n  \"a\": [\r\n    1,\r\n    2\r\n  ]\r\n}\r\n>>> ")
	tm.send("print('hi there')\r")
	tm.expect("hi there\r\n>>> ")
	tm.send("1/0\r")
	tm.expect("ZeroDivisionError: division by zero")
	tm.expect(">>> ")

	tm.send("open('a.txt', 'w').write('abc')\r")
	tm.expect("(wrote /workspace/a.txt)\r\n>>> ")
	tm.send(":files\r")
	tm.expect("/workspace/a.txt\r\n>>> ")
	tm.send(":info\r")
	tm.expect(`"namespaces"`)
	tm.expect(">>> ")

	// Ctrl-C interrupts running code; the state stays.
	tm.send("import time\r")
	tm.expect(">>> ")
	tm.send("while True: time.sleep(0.01)\r")
	tm.expect("... ")
	tm.send("\r")
	// (Until the loop runs there is nothing to interrupt: press Ctrl-C
	// until it is.)
	for deadline := time.Now().Add(60 * time.Second); !tm.seen("KeyboardInterrupt", 500*time.Millisecond); {
		if time.Now().After(deadline) {
			t.Fatal("Ctrl-C never interrupted the loop")
		}
		tm.send("\x03")
	}
	tm.expect(">>> ")
	tm.send("x\r")
	tm.expect("42\r\n>>> ")
	// Ctrl-C at the prompt drops the input typed so far.
	tm.send("(1,\r")
	tm.expect("... ")
	tm.send("\x03")
	tm.expect("KeyboardInterrupt\r\n>>> ")

	tm.send(":reset\r")
	tm.expect("(a fresh sandbox: all state was reset)\r\n>>> ")
	tm.send("x\r")
	tm.expect("NameError: name 'x' is not defined")
	tm.expect(">>> ")

	tm.send("\x04") // Ctrl-D
	select {
	case err := <-exited:
		var ee interface{ ExitCode() int }
		if err != nil && (!errors.As(err, &ee) || ee.ExitCode() != 0) {
			t.Errorf("exit: %v", err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("Ctrl-D did not end the REPL")
	}
}
