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
	{"call_plugin_p50_ms", "call_inproc_p50_ms", "≤ in-process + 0.5 ms", func(r map[string]float64) bool {
		return r["call_plugin_p50_ms"] <= r["call_inproc_p50_ms"]+0.5
	}},
	{"call_plugin_p99_ms", "call_inproc_p99_ms", "", nil},
	{"fanout_100_ms", "one_call_100ms_ms", "≤ 3 × one call", func(r map[string]float64) bool {
		return r["fanout_100_ms"] <= 3*r["one_call_100ms_ms"]
	}},
	{"plugin_rss_mb", "", "", nil},
}

// benchTools is the in-process bridge measured: a call that does nothing,
// and one that takes 100 ms.
type benchTools struct{}

func (benchTools) Noop() int { return 1 }

func (benchTools) Nap(ctx context.Context) (int, error) {
	select {
	case <-time.After(100 * time.Millisecond):
		return 1, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// timeCalls is Python that times n sync calls of fn, one by one, in ms.
func timeCalls(fn string, n int) string {
	return fmt.Sprintf(`import time
ds = []
for _ in range(%d):
    t0 = time.perf_counter()
    %s()
    ds.append((time.perf_counter() - t0) * 1000)
ds`, n, fn)
}

// timeFanout is Python that times n gathered background calls of fn, in ms.
func timeFanout(fn string, n int) string {
	return fmt.Sprintf(`import time, asyncio
t0 = time.perf_counter()
await asyncio.gather(*[%s.task() for _ in range(%d)])
(time.perf_counter() - t0) * 1000`, fn, n)
}

// runCalls measures tool calls: in-process, and through a plugin when
// pluginCalls finds one.
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
	samples := func(fn string, n int) ([]float64, error) {
		if _, err := eval(timeCalls(fn, min(n, 20))); err != nil { // warm up
			return nil, err
		}
		v, err := eval(timeCalls(fn, n))
		if err != nil {
			return nil, err
		}
		var out []float64
		for _, x := range v.([]any) {
			out = append(out, x.(float64))
		}
		return out, nil
	}
	in, err := samples("bench.noop", b.execs)
	if err != nil {
		return err
	}
	b.set("call_inproc_p50_ms", percentile(in, 50))
	b.set("call_inproc_p99_ms", percentile(in, 99))

	nap, err := samples("bench.nap", 10)
	if err != nil {
		return err
	}
	b.set("one_call_100ms_ms", percentile(nap, 50))
	v, err := eval(timeFanout("bench.nap", 100))
	if err != nil {
		return err
	}
	b.set("fanout_100_ms", v.(float64))
	if err := b.measurePlugin(eval, samples); err != nil {
		return err
	}
	return b.measureBridges(samples)
}
