package sandbox_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parselbox/parselbox/host/sandbox"
)

// execTimeout bounds the executions of these tests: far longer than an
// interrupt takes, so that an interrupt that was lost shows as a timeout
// (a KeyboardInterrupt that says "timed out", or a restart), not as a pass.
const execTimeout = 2 * time.Minute

// wantInterrupted checks that r is the KeyboardInterrupt of Interrupt() (not
// of the timeout), and that the sandbox was not restarted: same process,
// no restart counted, the variable set before still there.
func wantInterrupted(t *testing.T, sb *sandbox.Supervisor, r *sandbox.Result, pid int, what string) {
	t.Helper()
	if r.Error == nil || r.Error.Type != "KeyboardInterrupt" || strings.Contains(r.Error.Message, "timed out") {
		t.Fatalf("%s: want the KeyboardInterrupt of Interrupt(), got output %s, error %+v", what, r.Output, r.Error)
	}
	if got := sb.PID(); got != pid {
		t.Errorf("%s: the sandbox process changed (%d, then %d)", what, pid, got)
	}
	info, err := sb.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if info.Restarts != 0 {
		t.Errorf("%s: %d restarts", what, info.Restarts)
	}
	if got := output(t, run(t, sb, "kept")); got != "yes" {
		t.Errorf("%s: state lost: kept = %v", what, got)
	}
}

// Interrupt raises KeyboardInterrupt in the running execution, whatever it
// is doing when the interrupt arrives, and the interpreter keeps its state.
// Each loop writes a marker once it runs; then Interrupt is called, again
// every 200 ms until the execution returns, as a person presses Ctrl-C.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	sb := start(t, sandbox.Options{Workspace: ws})
	run(t, sb, "kept = 'yes'")
	pid := sb.PID()
	type loop struct{ name, code string }
	var loops []loop
	for _, tc := range []loop{
		// Mostly suspended in the interruptible sleep, a little bytecode:
		// the interrupt byte often stops it before the runner's main
		// thread hears of the interrupt, and then the interrupt must not
		// cancel the finished execution's result on its way (it did: the
		// execution never returned, and the sandbox was killed).
		{"time.sleep loop", "import time\n%s\nwhile True: time.sleep(0.01)"},
		// Only bytecode: the interrupt byte stops it.
		{"cpu loop", "%s\nwhile True: pass"},
		// Bytecode after awaits: the step that ends the execution runs in a
		// nested timer (Deno delays a nested setTimeout(0) by 4 ms), so the
		// interrupt's message reaches the runner's main thread before the
		// finished execution's result does.
		{"cpu loop after awaits", "import asyncio\nfor _ in range(20): await asyncio.sleep(0)\n%s\nwhile True: pass"},
		// Awaiting asyncio: the task is cancelled. (An interrupt byte that
		// landed in the event loop's own Python, between the code's steps,
		// lost a callback and the execution hung.)
		{"asyncio.sleep loop", "import asyncio\n%s\nwhile True: await asyncio.sleep(0.01)"},
		// With work left in the background, which is cancelled.
		{"sleep loop with a background task", "import asyncio, time\nasync def bg():\n    while True: await asyncio.sleep(0)\nasyncio.ensure_future(bg())\n%s\nwhile True: time.sleep(0.01)"},
	} {
		// Rounds: where the interrupt lands differs from one to the next.
		for round := range 3 {
			loops = append(loops, loop{fmt.Sprintf("%s, round %d", tc.name, round), tc.code})
		}
	}
	for i, tc := range loops {
		marker := fmt.Sprintf("running-%d", i)
		code := fmt.Sprintf(tc.code, fmt.Sprintf("open(%q, 'w').close()", marker))
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			waitFile(t, filepath.Join(ws, marker))
			for {
				sb.Interrupt()
				select {
				case <-stop:
					return
				case <-time.After(200 * time.Millisecond): // Ctrl-C again, not a clock
				}
			}
		}()
		r := runTimeout(t, sb, code, execTimeout)
		close(stop)
		<-done
		wantInterrupted(t, sb, r, pid, tc.name)
	}
}

// An interrupt that arrives while an execution starts (before its request
// is sent, while it is on its way, as it begins, as its code runs) raises
// KeyboardInterrupt in it, without a restart; interrupts sent while no
// execution runs do not reach the next one.
func TestInterruptAtStart(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{})
	run(t, sb, "kept = 'yes'")
	pid := sb.PID()
	for round := range 5 {
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() { // interrupts, from before the execution until it ends
			defer close(done)
			for {
				sb.Interrupt()
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond): // paced, not a clock
				}
			}
		}()
		r := runTimeout(t, sb, "while True: pass", execTimeout)
		close(stop)
		<-done
		wantInterrupted(t, sb, r, pid, fmt.Sprintf("round %d", round))
	}

	// No execution runs: nothing to interrupt, and nothing kept for later.
	for range 100 {
		sb.Interrupt()
	}
	r := run(t, sb, "import time\nn = 0\nfor _ in range(5):\n    time.sleep(0.01)\n    n += sum(range(100000)) > 0\nn")
	if got := output(t, r); got != 5.0 {
		t.Errorf("an execution after idle interrupts: %v", got)
	}
}

// An execution that does not stop when interrupted (it swallows every
// KeyboardInterrupt) has its sandbox killed once the grace period after
// the interrupt is over, long before its deadline: its error says that it
// did not stop on the interrupt and the sandbox was killed and restarted
// (not that it timed out), and the next execution runs on a fresh one.
func TestInterruptRunaway(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	restarts := make(chan string, 8)
	sb := start(t, sandbox.Options{Workspace: ws, Grace: time.Second, OnRestart: func(cause string) { restarts <- cause }})
	run(t, sb, "kept = 'yes'")
	done := make(chan struct{})
	go func() {
		defer close(done)
		waitFile(t, filepath.Join(ws, "running"))
		sb.Interrupt()
	}()
	r := runTimeout(t, sb, `open("running", "w").close()
while True:
    try:
        while True: pass
    except BaseException:
        pass`, execTimeout)
	<-done
	const want = "Execution was interrupted and did not stop within 1s of the interrupt, so the sandbox was killed; " +
		"it was restarted and all state was lost."
	if r.Error == nil || r.Error.Type != sandbox.ErrorTypeCrash || r.Error.Message != want {
		t.Fatalf("the runaway's result: output %s, error %+v; want %s: %s", r.Output, r.Error, sandbox.ErrorTypeCrash, want)
	}
	wantError(t, run(t, sb, "kept"), "NameError", "kept")
	if got := output(t, run(t, sb, "6 * 7")); got != 42.0 {
		t.Errorf("the execution after the restart: %v", got)
	}
	select {
	case cause := <-restarts:
		if cause != "interrupt" {
			t.Errorf("restart cause %q, want interrupt", cause)
		}
	default:
		t.Error("no restart was reported")
	}
}

// An execution that times out while a task it started runs: the
// KeyboardInterrupt that lands in the task is the execution's error, told
// once, not again on stderr by asyncio (as an unhandled exception in the
// task, or as a task exception never retrieved when the garbage collector
// frees the task), neither in this execution's output nor in a later one's.
func TestInterruptInTask(t *testing.T) {
	t.Parallel()
	// Each task blocks the event loop, so that the interrupt lands in it
	// (the runner's main thread does not take the interrupt's message).
	for name, code := range map[string]string{
		// asyncio reports it when the task ends (nothing else awaits it).
		"task": `import asyncio
async def spin():
    await asyncio.sleep(0)
    while True: pass
task = asyncio.ensure_future(spin())
await asyncio.sleep(60)`,
		// Awaited by asyncio.wait, then freed with its exception never
		// retrieved: reported by whichever execution collects it.
		"task awaited by asyncio.wait": `import asyncio
async def spin():
    await asyncio.sleep(0)
    while True: pass
async def main():
    await asyncio.wait([asyncio.ensure_future(spin())], timeout=60)
await main()`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sb := start(t, sandbox.Options{})
			r := runTimeout(t, sb, code, time.Second)
			wantError(t, r, "KeyboardInterrupt", "timed out after 1s")
			if r.Stdout != "" || r.Stderr != "" {
				t.Errorf("the interrupted execution's output: stdout %q, stderr %q", r.Stdout, r.Stderr)
			}
			// The garbage collector frees what the interrupted one left.
			r = run(t, sb, "import gc\ngc.collect()\n'next'")
			if got := output(t, r); got != "next" || r.Stdout != "" || r.Stderr != "" || r.Note != "" {
				t.Errorf("the next execution: %v, stdout %q, stderr %q, note %q", got, r.Stdout, r.Stderr, r.Note)
			}
			// Any other exception that ends a task is reported as before.
			r = run(t, sb, "import asyncio\nasync def fail(): raise ValueError('mine')\nasyncio.ensure_future(fail())\nawait asyncio.sleep(0.05)")
			if r.Error != nil || !strings.Contains(r.Stderr, "Unhandled exception in event loop") || !strings.Contains(r.Stderr, "ValueError: mine") {
				t.Errorf("a task's ValueError: error %+v, stderr %q", r.Error, r.Stderr)
			}
		})
	}
}

// An interrupt whose message the main thread takes (the code waits) may
// leave something runnable that then keeps the thread busy: here a
// callback that the interrupted code schedules as its wait ends. The
// watchdog sets the interrupt byte once the heartbeat stands still, so the
// execution ends with its KeyboardInterrupt and the state is kept, where
// the sandbox used to be killed as a runaway.
func TestInterruptReachesWhatTheMessageLeft(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{})
	run(t, sb, "kept = 'yes'")
	pid := sb.PID()
	r := runTimeout(t, sb, `import asyncio
async def main():
    try:
        await asyncio.sleep(60)
    finally:
        def spin():
            open('/workspace/spun', 'w').write('1')
            while True: pass
        asyncio.get_running_loop().call_soon(spin)
await main()`, time.Second)
	wantError(t, r, "KeyboardInterrupt", "timed out after 1s")
	if got := output(t, run(t, sb, "import os\nos.path.exists('/workspace/spun')")); got != true {
		t.Fatal("the callback never ran: the test tests nothing")
	}
	if got := sb.PID(); got != pid {
		t.Errorf("the sandbox process changed (%d, then %d)", pid, got)
	}
	if got := output(t, run(t, sb, "kept")); got != "yes" {
		t.Errorf("state lost: kept = %v", got)
	}
}
