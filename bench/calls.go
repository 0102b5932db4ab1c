package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/parselbox/parselbox/host"
)

// callTargets are the tool-call lines of the table.
var callTargets = []target{
	{"call_inproc_p50_ms", "", "", nil},
	{"call_inproc_p99_ms", "", "", nil},
	{"call_inproc_greet_p50_ms", "", "", nil},
	{"call_plugin_p50_ms", "call_inproc_greet_p50_ms", "≤ in-process + 0.2 ms", func(r results) bool {
		return r.v("call_plugin_p50_ms") <= r.v("call_inproc_greet_p50_ms")+0.2
	}},
	{"call_plugin_minus_inproc_p50_ms", "", "≤ 0.2 ms (paired)", func(r results) bool {
		return r.v("call_plugin_minus_inproc_p50_ms") <= 0.2
	}},
	{"call_plugin_p99_ms", "call_inproc_greet_p99_ms", "", nil},
	{"fanout_100_ms", "one_call_100ms_ms", "≤ 3 × one call", func(r results) bool {
		return r.v("fanout_100_ms") <= 3*r.v("one_call_100ms_ms")
	}},
	{"plugin_rss_mb", "", "", nil},
}

// benchTools is the in-process bridge measured: a call that does nothing,
// one that takes 100 ms, and the plugin's greet (sdk/example/greeter)
// written the same way, to compare the two side by side.
type benchTools struct{}

// greetIn is the parameter object of greet, as in the greeter plugin.
type greetIn struct {
	Name string `json:"name"`
}

func (benchTools) Greet(in greetIn) string { return "hello, " + in.Name }

func (benchTools) Noop() int { return 1 }

func (benchTools) Nap(ctx context.Context) (int, error) {
	select {
	case <-time.After(100 * time.Millisecond):
		return 1, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// timeCalls is Python that times n sync calls of fn, one by one, in ms,
// and fails unless every call returns the value of the Python expression
// want.
func timeCalls(fn, want string, n int) string {
	return fmt.Sprintf(`import time
ds = []
want = %s
for _ in range(%d):
    t0 = time.perf_counter()
    got = %s()
    ds.append((time.perf_counter() - t0) * 1000)
    if got != want:
        raise AssertionError(f"%s() returned {got!r}, want {want!r}")
ds`, want, n, fn, fn)
}

// timePaired is Python that times n sync calls of fnA and of fnB,
// alternating, in ms, and fails unless every call returns the value of the
// Python expression want: both are measured under the same load, and each
// goes first in every other pair (measured: the one that always went second
// looked about 0.1 ms slower).
func timePaired(fnA, fnB, want string, n int) string {
	return fmt.Sprintf(`import time
a, b = [], []
want = %s
for i in range(%d):
    pair = ((%s, a), (%s, b))
    for fn, ds in (pair if i %% 2 == 0 else pair[::-1]):
        t0 = time.perf_counter()
        got = fn()
        ds.append((time.perf_counter() - t0) * 1000)
        if got != want:
            raise AssertionError(f"{fn!r} returned {got!r}, want {want!r}")
[a, b]`, want, n, fnA, fnB)
}

// timeFanout is Python that times n gathered background calls of fn, in
// ms, and fails unless every call returned 1.
func timeFanout(fn string, n int) string {
	return fmt.Sprintf(`import time, asyncio
t0 = time.perf_counter()
got = await asyncio.gather(*[%s.task() for _ in range(%d)])
d = (time.perf_counter() - t0) * 1000
if got != [1] * %d:
    raise AssertionError(f"%s.task() results: {got!r}")
d`, fn, n, n, fn)
}

// runCalls measures tool calls, in b.runs runs on one sandbox (after a run
// that is not counted: eachRun): in-process, and through a plugin and the
// built-in bridges when they are built.
func (b *bench) runCalls(ctx context.Context) error {
	cfg := host.Config{
		RuntimeDir: b.rt.Dir,
		CacheDir:   b.cacheDir,
		Context:    map[string]any{"bench": benchTools{}},
	}
	if err := b.pluginConfig(&cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench: plugin calls not measured:", err)
	}
	defer b.bridgesConfig(&cfg)()
	sb, err := host.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer sb.Close()
	eval := func(code string) (any, error) {
		r, err := sb.Execute(ctx, code)
		if err != nil {
			return nil, err
		}
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %s", r.Error.Type, r.Error.Message)
		}
		var v any
		return v, json.Unmarshal(r.Output, &v)
	}
	// samples times n calls in Python; the Python code checks each call's
	// result (timeCalls), so that a call failing fast cannot look fast.
	samples := func(fn, want string, n int) ([]float64, error) {
		if _, err := eval(timeCalls(fn, want, min(n, 20))); err != nil { // warm up
			return nil, err
		}
		v, err := eval(timeCalls(fn, want, n))
		if err != nil {
			return nil, err
		}
		var out []float64
		for _, x := range v.([]any) {
			out = append(out, x.(float64))
		}
		return out, nil
	}
	pairs := func(fnA, fnB, want string, n int) (a, bs []float64, err error) {
		if _, err := eval(timePaired(fnA, fnB, want, min(n, 20))); err != nil { // warm up
			return nil, nil, err
		}
		v, err := eval(timePaired(fnA, fnB, want, n))
		if err != nil {
			return nil, nil, err
		}
		lists := v.([]any)
		for _, x := range lists[0].([]any) {
			a = append(a, x.(float64))
		}
		for _, x := range lists[1].([]any) {
			bs = append(bs, x.(float64))
		}
		return a, bs, nil
	}
	return b.eachRun("tool calls", func(run int) error {
		in, err := samples("bench.noop", "1", b.execs)
		if err != nil {
			return err
		}
		b.add("call_inproc_p50_ms", percentile(in, 50))
		b.add("call_inproc_p99_ms", percentile(in, 99))

		nap, err := samples("bench.nap", "1", 10)
		if err != nil {
			return err
		}
		b.add("one_call_100ms_ms", percentile(nap, 50))
		v, err := eval(timeFanout("bench.nap", 100))
		if err != nil {
			return err
		}
		b.add("fanout_100_ms", v.(float64))
		if err := b.measurePlugin(sb, pairs, run == 0); err != nil {
			return err
		}
		return b.measureBridges(samples)
	})
}
