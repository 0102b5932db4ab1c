package sandbox_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/internal/testenv"
)

// watchdogBeginScript runs the runner's Watchdog (its main thread's half,
// in Deno) while another thread plays the watchdog's worker in the middle
// of an idle interrupt (watchdog_worker.ts raiseIdle): the state is
// RAISING (4) when the execution begins, and the byte for the blocked
// callback is set (IDLE_LIMIT) after begin cleared it at its start.
const watchdogBeginScript = `
import { Watchdog, STATE, REASON, IDLE, EXEC, IDLE_LIMIT } from %q;
const RAISING = 4; // (not exported before it existed)
const wd = new Watchdog();
Atomics.store(wd.ctl, STATE, RAISING);
const w = new Worker(new URL("./raiser.ts", import.meta.url), { type: "module" });
await new Promise((resolve) => {
  w.onmessage = resolve;
  w.postMessage({ ctl: wd.ctl, signal: wd.signal, STATE, REASON, IDLE, IDLE_LIMIT });
});
const began = wd.begin(7, 0);
const state = Atomics.load(wd.ctl, STATE);
console.log(JSON.stringify({ began, exec: state === EXEC, state, byte: wd.signal[0], reason: Atomics.load(wd.ctl, REASON) }));
w.terminate();
`

// watchdogRaiserScript ends the idle interrupt as raiseIdle does, once
// begin waits: it sets the byte, then the state back to IDLE.
const watchdogRaiserScript = `
self.onmessage = (e) => {
  const { ctl, signal, STATE, REASON, IDLE, IDLE_LIMIT } = e.data;
  self.postMessage("ready");
  const until = Date.now() + 100; // begin waits by then
  while (Date.now() < until);
  Atomics.store(ctl, REASON, IDLE_LIMIT);
  Atomics.store(signal, 0, 2);
  Atomics.store(ctl, STATE, IDLE);
  Atomics.notify(ctl, STATE);
};
`

// An execution that begins while the watchdog's worker raises an idle
// interrupt (for a callback that blocked the event loop, which has ended
// since: the execution's request runs on the loop) waits for the worker,
// begins, and does not start with the byte meant for the callback: it
// would raise KeyboardInterrupt in the execution's code, told as an idle
// interrupt. Before, begin took the worker's state for CONDEMNED and the
// execution never ran; without the state, the byte landed in it.
func TestWatchdogBeginWaitsForIdleRaise(t *testing.T) {
	t.Parallel()
	rt, err := sandbox.FindRuntime(testenv.Runtime(t).Dir)
	if err != nil {
		t.Fatal(err)
	}
	runner, err := filepath.Abs(filepath.Join("runner", "watchdog.ts"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{"main.ts": fmt.Sprintf(watchdogBeginScript, "file://"+runner), "raiser.ts": watchdogRaiserScript} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(t.Context(), rt.Deno, "run", "--no-config", "--quiet", "--allow-read="+dir+","+filepath.Dir(runner), filepath.Join(dir, "main.ts"))
	cmd.Env = []string{"DENO_DIR=" + filepath.Join(dir, "deno"), "DENO_NO_UPDATE_CHECK=1", "NO_COLOR=1", "HOME=" + dir}
	out, err := cmd.Output()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		t.Fatalf("%v: %s", err, ee.Stderr)
	} else if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Began, Exec         bool
		State, Byte, Reason int
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	want := got
	want.Began, want.Exec, want.Byte, want.Reason = true, true, 0, 0 // running, no byte, no reason
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after begin (-want +got):\n%s", diff)
	}
}
