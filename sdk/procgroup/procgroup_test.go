//go:build unix

package procgroup_test

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parselbox/parselbox/sdk/procgroup"
)

// start runs script under sh in its own group, waits for its first line of
// output ("ready", written once its traps are set) and returns the process,
// its stdin and the channel of Wait's result.
func start(t *testing.T, script string) (*procgroup.Process, *os.File, <-chan error, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	p, err := procgroup.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	t.Cleanup(func() { p.Kill(); outR.Close(); inW.Close() })
	done := make(chan error, 1)
	go func() { done <- p.Wait() }()
	out := bufio.NewReader(outR)
	if line, err := out.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("first line = %q, %v; want ready", line, err)
	}
	return p, inW, done, out
}

// endedBy returns the signal that ended the process, or 0 for an exit.
func endedBy(t *testing.T, err error) syscall.Signal {
	t.Helper()
	var ee *exec.ExitError
	if err == nil {
		return 0
	}
	if !errors.As(err, &ee) {
		t.Fatalf("Wait: %v", err)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() {
		return 0
	}
	return ws.Signal()
}

func TestStopEndsWithEOF(t *testing.T) {
	p, stdin, done, _ := start(t, "echo ready; cat >/dev/null")
	// A long grace: the process exits on EOF, and Stop returns when it does.
	p.Stop(stdin, time.Hour)
	if sig := endedBy(t, <-done); sig != 0 {
		t.Fatalf("ended by %v, want an exit on EOF", sig)
	}
}

func TestStopTerminatesWhatIgnoresEOF(t *testing.T) {
	p, stdin, done, _ := start(t, "echo ready; exec sleep 1000")
	p.Stop(stdin, 50*time.Millisecond)
	if sig := endedBy(t, <-done); sig != syscall.SIGTERM {
		t.Fatalf("ended by %v, want SIGTERM", sig)
	}
}

func TestStopKillsWhatIgnoresTERM(t *testing.T) {
	p, stdin, done, _ := start(t, `trap "" TERM; echo ready; exec sleep 1000`)
	p.Stop(stdin, 50*time.Millisecond)
	if sig := endedBy(t, <-done); sig != syscall.SIGKILL {
		t.Fatalf("ended by %v, want SIGKILL", sig)
	}
}

// TestWaitKillsTheGroup: a background job of the leader does not outlive it.
func TestWaitKillsTheGroup(t *testing.T) {
	p, stdin, done, out := start(t, `echo ready; sleep 1000 & echo $!; read x`)
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	stdin.Close() // the leader's read returns and it exits
	if sig := endedBy(t, <-done); sig != 0 {
		t.Fatalf("leader ended by %v, want an exit", sig)
	}
	<-p.Done()
	// The background sleep was SIGKILLed as part of the group; it is a child
	// of init now, or gone. Poll until it is gone, with a deadline.
	deadline := time.Now().Add(2 * time.Minute)
	for syscall.Kill(child, 0) == nil && !isZombie(child) {
		if time.Now().After(deadline) {
			t.Fatalf("background job %d outlived its group's leader", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func isZombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // gone
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] == "Z"
}

func TestSignalAfterReapIsANoOp(t *testing.T) {
	p, stdin, done, _ := start(t, "echo ready; cat >/dev/null")
	stdin.Close()
	<-done
	<-p.Done()
	p.Kill() // must not signal whatever group now has this id
	p.Stop(nil, 0)
}

// StartPiped connects the three streams and closes the child's ends: the
// reads end when the child exits (they would hang on an end left open).
func TestStartPiped(t *testing.T) {
	p, pipes, err := procgroup.StartPiped(exec.Command("sh", "-c", `read line; echo "out $line"; echo "err $line" >&2`))
	if err != nil {
		t.Fatal(err)
	}
	defer pipes.Stdout.Close()
	defer pipes.Stderr.Close()
	done := make(chan error, 1)
	go func() { done <- p.Wait() }()
	if _, err := pipes.Stdin.WriteString("hi\n"); err != nil {
		t.Fatal(err)
	}
	_ = pipes.Stdin.Close()
	out, err := io.ReadAll(pipes.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	errOut, err := io.ReadAll(pipes.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if string(out) != "out hi\n" || string(errOut) != "err hi\n" {
		t.Fatalf("stdout %q, stderr %q; want %q, %q", out, errOut, "out hi\n", "err hi\n")
	}
}
