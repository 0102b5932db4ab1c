package serve_test

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/serve"
	"github.com/parselbox/parselbox/internal/testenv"
)

// gate is a tool that waits until the test opens it.
type gate struct{ open chan struct{} }

func (g gate) Wait() string {
	<-g.open
	return "opened"
}

// An /api request is the sandbox protocol's api method, not an execution:
// it runs while an execution waits, has a timeout of its own, and the files
// its handler writes are reported by the next execution.
func TestServeAPIMethod(t *testing.T) {
	t.Parallel()
	g := gate{make(chan struct{})}
	sb, err := host.New(t.Context(), host.Config{
		RuntimeDir: testenv.Runtime(t).Dir, CacheDir: testenv.CacheDir(t), Logger: testenv.Logger(t),
		Context: map[string]any{"calc": calc{}, "gate": g}, Timeout: 8 * time.Second,
		Serve: &host.ServeConfig{Addr: "127.0.0.1:0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	base := sb.ServeURL()
	exec(t, sb, `
import asyncio
flag = {"set": False, "by": None}

@api.post("/set")
def set_flag(body):
    flag["set"], flag["by"] = True, body
    return {"sum": calc.add(a=1, b=2)}

@api.get("/write")
def write(params):
    print("printed by a handler")
    open("from_api.txt", "w").write(params.get("text", ""))
    return "written"

@api.get("/slow")
async def slow(params):
    await asyncio.sleep(3600)

load = {"now": 0, "max": 0}

@api.get("/busy")
async def busy(params):
    load["now"] += 1
    load["max"] = max(load["max"], load["now"])
    try:
        await asyncio.sleep(0.2)
    finally:
        load["now"] -= 1
    return "done"

@api.get("/spin")
def spin(params):
    while True:
        pass
`)

	// While an execution waits for the flag, a request sets it: the two
	// interleave (as executions, the request would wait for this one, which
	// would time out).
	type out struct {
		r   *host.Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		r, err := sb.Execute(t.Context(), `
for _ in range(150):
    if flag["set"]:
        break
    await asyncio.sleep(0.05)
flag`)
		done <- out{r, err}
	}()
	time.Sleep(500 * time.Millisecond)
	if r := do(t, "POST", base+"/api/set", strings.NewReader(`"from the app"`), nil); r.status != 200 || !strings.Contains(r.body, `"sum":3`) {
		t.Errorf("POST /api/set during an execution: %d %s", r.status, r.body)
	}
	o := <-done
	if o.err != nil || o.r.Error != nil {
		t.Fatalf("the execution waiting for the flag: %v %v", o.err, o.r.Error)
	}
	if got := string(o.r.Output); got != `{"set":true,"by":"from the app"}` {
		t.Errorf("the execution saw %s; want the flag set by the request while it ran", got)
	}

	// While an execution waits in a (synchronous) tool call, a handler
	// runs and makes one of its own.
	go func() {
		r, err := sb.Execute(t.Context(), `[gate.wait(), flag["by"]]`)
		done <- out{r, err}
	}()
	time.Sleep(500 * time.Millisecond)
	if r := do(t, "POST", base+"/api/set", strings.NewReader(`"during a tool call"`), nil); r.status != 200 || !strings.Contains(r.body, `"sum":3`) {
		t.Errorf("POST /api/set during a tool call: %d %s", r.status, r.body)
	}
	close(g.open)
	o = <-done
	if o.err != nil || o.r.Error != nil || string(o.r.Output) != `["opened","during a tool call"]` {
		t.Errorf("the execution in a tool call: %v %+v", o.err, o.r)
	}

	// The handler's files are the next execution's; its print is no one's.
	if r := do(t, "GET", base+"/api/write?text=hello", nil, nil); r.status != 200 || r.body != `"written"` {
		t.Errorf("GET /api/write: %d %s", r.status, r.body)
	}
	r, err := sb.Execute(t.Context(), "open('from_api.txt').read()")
	if err != nil || r.Error != nil {
		t.Fatalf("%v %v", err, r.Error)
	}
	if string(r.Output) != `"hello"` || !slices.Contains(r.Files, "/workspace/from_api.txt") {
		t.Errorf("after the handler wrote a file: output %s, files %v; want the file reported", r.Output, r.Files)
	}
	if strings.Contains(r.Stdout, "printed by a handler") {
		t.Errorf("the next execution's stdout has the handler's print: %q", r.Stdout)
	}

	// A handler that awaits past the timeout: 500 naming it, the sandbox
	// and its state kept.
	start := time.Now()
	if r := do(t, "GET", base+"/api/slow", nil, nil); r.status != 500 || !strings.Contains(r.body, "timed out after 8s") {
		t.Errorf("GET /api/slow: %d %s", r.status, r.body)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("the slow handler was answered after %s", d)
	}
	r, err = sb.Execute(t.Context(), "flag['by']")
	if err != nil || r.Error != nil || string(r.Output) != `"during a tool call"` || r.Note != "" {
		t.Errorf("after a handler timed out: %v %+v", err, r)
	}

	// A handler that never yields is interrupted by the watchdog, as any
	// callback between executions is: 500, the sandbox and its state kept.
	if r := do(t, "GET", base+"/api/spin", nil, nil); r.status != 500 || !(strings.Contains(r.body, "KeyboardInterrupt") || strings.Contains(r.body, "timed out after 8s")) {
		t.Errorf("GET /api/spin: %d %s", r.status, r.body)
	}
	r, err = sb.Execute(t.Context(), "flag['set']")
	if err != nil || r.Error != nil || string(r.Output) != "true" {
		t.Errorf("after a handler spun: %v %+v", err, r)
	}

	// Many requests at once: all answered, at most MaxConcurrentAPI of
	// them in the sandbox at a time.
	var wg sync.WaitGroup
	var failed atomic.Int32
	for range 3 * serve.MaxConcurrentAPI {
		wg.Go(func() {
			if r := do(t, "GET", base+"/api/busy", nil, nil); r.status != 200 {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	r, err = sb.Execute(t.Context(), "load")
	if err != nil || r.Error != nil || failed.Load() != 0 {
		t.Fatalf("%d requests failed; %v %+v", failed.Load(), err, r)
	}
	var load struct{ Now, Max int }
	json.Unmarshal(r.Output, &load)
	if load.Now != 0 || load.Max < 2 || load.Max > serve.MaxConcurrentAPI {
		t.Errorf("requests in the sandbox at once: %s; want 2 to %d", r.Output, serve.MaxConcurrentAPI)
	}
}
