// Command bench measures Parselbox against the floor of a bare Deno +
// Pyodide program measured in the same run, prints a table and writes
// bench-results.json. It is run by `make bench`; nothing here is a test.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/parselbox/parselbox/host/sandbox"
)

func main() {
	if os.Getenv(noopEnv) != "" {
		serveNoop()
		return
	}
	var (
		runtimeDir = flag.String("runtime", "", "runtime directory (default: $PARSELBOX_RUNTIME)")
		out        = flag.String("out", "bench-results.json", "where to write the results")
		boots      = flag.Int("boots", 5, "boots to measure for each kind")
		execs      = flag.Int("execs", 300, "executions (and calls) to measure in each run")
		runs       = flag.Int("runs", 5, "runs of every measurement with a target, to report its spread")
		warmup     = flag.Int("warmup", 1000, "part exec: executions of 1+1, not counted, on the fresh sandbox and floor of each run before its counted ones (V8 optimizes Pyodide's code for about the first 1000)")
		only       = flag.String("only", "", "measure only these parts, comma-separated: "+strings.Join(parts, ", "))
		cpuprofile = flag.String("cpuprofile", "", "write a CPU profile of this process (the host side) to this file")
		sessions   = flag.Int("density-sessions", densitySessions, "part density: the sessions one host holds (the targets are for 50; fewer for a quick look)")
		samples    = flag.String("density-samples", "", "part density: write every exec's latency (run, round, session, start offset) to this CSV file")
		without    = flag.String("confine-without", "", "part confine: leave out these kernel layers, comma-separated (landlock, landlock-net, seccomp, user, cgroup), to measure what each costs")
		layers     = flag.Bool("confine-layers", false, "part confine: also measure each layer's cost in the same rounds (a sandbox confined with all layers but that one, per layer)")
	)
	flag.Parse()
	b := &bench{results: results{}, boots: *boots, execs: *execs, runs: max(*runs, 1), warmup: max(*warmup, 0), only: map[string]bool{},
		densitySessions: max(*sessions, 1), densitySamples: *samples, confineLayers: *layers}
	for _, l := range strings.Split(*without, ",") {
		if l = strings.TrimSpace(l); l != "" {
			b.confineWithout = append(b.confineWithout, l)
		}
	}
	for _, p := range strings.Split(*only, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		} else if !slices.Contains(parts, p) {
			fmt.Fprintf(os.Stderr, "bench: -only: unknown part %q (parts: %s)\n", p, strings.Join(parts, ", "))
			os.Exit(2)
		}
		b.only[p] = true
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := b.run(*runtimeDir); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	b.print()
	data, _ := json.MarshalIndent(b.results, "", "  ")
	if err := os.WriteFile(*out, append(data, '\n'), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Printf("\nwrote %s\n", *out)
}

// parts are what -only selects.
var parts = []string{"boot", "exec", "calls", "result", "ui", "packages", "shell", "js", "confine", "sessions", "density"}

// measures reports whether part is to be measured: all are, unless -only
// names some.
func (b *bench) measures(part string) bool { return len(b.only) == 0 || b.only[part] }

type bench struct {
	results      results
	boots, execs int
	runs         int
	warmup       int  // executions before each run's counted ones
	warming      bool // a warm-up run: add records nothing
	rt           *sandbox.Runtime
	cacheDir     string
	plugin       string          // the plugin binary measured, if any
	bridges      []string        // the built-in bridges measured
	only         map[string]bool // the parts to measure; empty: all
	// confineWithout are the kernel layers part confine leaves out.
	confineWithout []string
	// densitySessions is how many sessions part density opens;
	// densitySamples, if set, is where it writes every exec's latency.
	densitySessions int
	densitySamples  string
	// confineLayers adds a sandbox per layer to part confine's exec runs.
	confineLayers bool
}

// A metric is one figure over the runs that measured it: each run gives
// one value (a median or percentile of its samples, or a single sample).
// The table and the targets use the median of the runs; the JSON also has
// the spread.
type metric struct {
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Runs   []float64 `json:"runs"`
}

// results are the metrics by name.
type results map[string]*metric

// v is the median of a metric, 0 when it was not measured.
func (r results) v(key string) float64 {
	if m := r[key]; m != nil {
		return m.Median
	}
	return 0
}

// add records one run's value of a metric (nothing in a warm-up run).
func (b *bench) add(key string, v float64) {
	if b.warming {
		return
	}
	m := b.results[key]
	if m == nil {
		m = &metric{}
		b.results[key] = m
	}
	m.Runs = append(m.Runs, round(v))
	m.Median, m.Min, m.Max = round(median(m.Runs)), slices.Min(m.Runs), slices.Max(m.Runs)
}

func round(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 2, 64), 64)
	return f
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// eachRun calls run for each of b.runs counted runs, after one that is not
// counted (run -1; add records nothing): the first run of a bench process
// is always the slowest (measured: call_inproc_p50_ms 0.9-2.2 ms against
// 0.3-0.7 in later runs), as the code of the processes that live through
// the runs (the bench, the MCP servers, a sandbox measured over several
// runs) is compiled and the caches fill.
func (b *bench) eachRun(what string, run func(run int) error) error {
	for i := -1; i < b.runs; i++ {
		if i < 0 {
			fmt.Printf("%s, warm-up run (not counted) ...\n", what)
		} else {
			fmt.Printf("%s, run %d of %d ...\n", what, i+1, b.runs)
		}
		b.warming = i < 0
		err := run(i)
		b.warming = false
		if err != nil {
			return err
		}
	}
	return nil
}

// shuffled returns the indices 0..n-1 in a random order: the order of the
// measurements of one round, so that none always comes first (measured:
// the order alone moved exec_minus_floor_p50_ms by about 0.1 ms).
func shuffled(n int) []int {
	return rand.Perm(n)
}

func (b *bench) run(runtimeDir string) error {
	ctx := context.Background()
	rt, err := sandbox.FindRuntime(runtimeDir)
	if err != nil {
		return err
	}
	b.rt = rt
	if b.cacheDir, err = os.MkdirTemp("", "parselbox-bench-"); err != nil {
		return err
	}
	defer os.RemoveAll(b.cacheDir)

	if !b.measures("boot") && !b.measures("exec") {
		return b.runRest(ctx)
	}

	// Cold boot: no snapshot at all. The first start also builds our snapshot.
	if b.measures("boot") {
		began := time.Now()
		sb, err := b.start(ctx, true)
		if err != nil {
			return err
		}
		b.add("boot_cold_ms", ms(time.Since(began)))
		sb.Close()
	}
	sb, err := b.start(ctx, false) // builds the snapshot
	if err != nil {
		return err
	}
	fmt.Println("preparing the floor (a bare Deno + Pyodide script) ...")
	fl, err := newFloor(rt, sb.PID()) // with this sandbox's V8 flags
	sb.Close()
	if err != nil {
		return err
	}
	defer fl.close()

	// Snapshot boots, alternating with the floor's so both see the same
	// load, and which boots first too; each boot is one run.
	for i := range b.boots {
		if !b.measures("boot") {
			break
		}
		for _, floorsTurn := range []bool{i%2 == 1, i%2 == 0} {
			if floorsTurn {
				fp, d, err := fl.start()
				if err != nil {
					return err
				}
				b.add("floor_boot_snapshot_ms", ms(d))
				fp.close()
				continue
			}
			began := time.Now()
			sb, err := b.start(ctx, false)
			if err != nil {
				return err
			}
			b.add("boot_snapshot_ms", ms(time.Since(began)))
			snap := sb.Ready().Snapshot
			sb.Close()
			if !snap {
				return fmt.Errorf("boot_snapshot_ms: the sandbox did not boot from the snapshot")
			}
		}
	}

	if b.measures("exec") {
		mcp, err := b.openMCP(ctx)
		if err != nil {
			return fmt.Errorf("MCP: %w", err)
		}
		defer mcp.close()
		fmt.Printf("warming up the MCP servers' sandboxes (%d executions each) ...\n", b.warmup)
		if err := mcp.warm(ctx, b.warmup); err != nil {
			return fmt.Errorf("MCP: %w", err)
		}
		if err := b.eachRun("exec and MCP round trips", func(int) error { return b.execRun(ctx, fl, mcp) }); err != nil {
			return err
		}
	}
	return b.runRest(ctx)
}

// runRest measures the parts that need no floor.
func (b *bench) runRest(ctx context.Context) error {
	if b.measures("calls") {
		if err := b.runCalls(ctx); err != nil {
			return err
		}
	}
	if b.measures("result") {
		b.measureResult(ctx)
	}
	if b.measures("ui") {
		b.measureUI(ctx)
	}
	if b.measures("packages") {
		if err := b.runPackages(ctx); err != nil {
			return fmt.Errorf("packages: %w", err)
		}
	}
	if b.measures("shell") {
		if err := b.runShell(ctx); err != nil {
			return fmt.Errorf("bash and WASI: %w", err)
		}
	}
	if b.measures("js") {
		if err := b.runJS(ctx); err != nil {
			return fmt.Errorf("js: %w", err)
		}
	}
	if b.measures("confine") {
		if err := b.runConfined(ctx); err != nil {
			return fmt.Errorf("confinement: %w", err)
		}
	}
	if b.measures("sessions") {
		if err := measureSessions(ctx, b, 10); err != nil {
			return fmt.Errorf("sessions: %w", err)
		}
	}
	if b.measures("density") {
		if err := measureDensity(ctx, b); err != nil {
			return fmt.Errorf("density: %w", err)
		}
	}
	return nil
}

// execRun is one run of exec round trips of 1+1: ours and the floor's on
// freshly snapshot-booted processes, and execute_code over each MCP
// transport, all in rounds of one of each, in a random order per round, so
// that all see the same load and none always comes first (nor always
// after the same one). Every answer is checked. The memory of both
// processes is read at boot and after the same executions.
//
// Ours and the floor's first run b.warmup executions each, alternating,
// not counted: V8 compiles Pyodide's hot functions with its optimizing
// tier once they have run enough, in the background, for about the first
// 1000 executions of 1+1 (measured with --trace-wasm-compilation-times);
// the counted ones then compare two processes in the same state, where
// neither still compiles. The MCP servers' sandboxes live through the runs,
// warmed as many times before them (mcpClients.warm).
func (b *bench) execRun(ctx context.Context, fl *floor, mc *mcpClients) error {
	sb, err := b.start(ctx, false)
	if err != nil {
		return err
	}
	defer sb.Close()
	fp, _, err := fl.start()
	if err != nil {
		return err
	}
	defer fp.close()
	if err := copyNice(sb.PID(), fp.pid()); err != nil {
		return fmt.Errorf("the floor's thread priorities: %w", err)
	}
	if mb, err := rssOf(sb.PID()); err == nil {
		b.add("rss_mb", float64(mb))
	}
	if mb, err := rssOf(fp.pid()); err == nil {
		b.add("floor_rss_mb", float64(mb))
	}
	exec := func() (time.Duration, error) {
		t0 := time.Now()
		r, err := sb.Exec(ctx, "1+1", time.Minute)
		d := time.Since(t0)
		if err != nil {
			return 0, err
		}
		if r.Error != nil || string(r.Output) != "2" {
			return 0, fmt.Errorf("exec 1+1 = %s, error %+v", r.Output, r.Error)
		}
		return d, nil
	}
	floorExec := func() (time.Duration, error) {
		t0 := time.Now()
		err := fp.exec("1+1", "2")
		return time.Since(t0), err
	}
	for i := range b.warmup {
		first, second := exec, floorExec
		if i%2 == 1 {
			first, second = floorExec, exec
		}
		if _, err := first(); err != nil {
			return err
		}
		if _, err := second(); err != nil {
			return err
		}
	}
	cpu0, _ := cpuOf(sb.PID())
	floorCPU0, _ := cpuOf(fp.pid())

	// The measurements of a round, each with the samples it adds to.
	var ours, theirs, overHTTP, overStdio, noop, pingHTTP, pingStdio []float64
	var rawStdio, rawNoop []float64 // the minimal client's (rawStdio)
	type measurement struct {
		samples *[]float64
		run     func() (time.Duration, error)
	}
	var round []measurement
	add := func(samples *[]float64, what string, run func() (time.Duration, error)) {
		round = append(round, measurement{samples, func() (time.Duration, error) {
			d, err := run()
			if err != nil && what != "" {
				err = fmt.Errorf("%s: %w", what, err)
			}
			return d, err
		}})
	}
	add(&ours, "", exec)
	add(&theirs, "", floorExec)
	add(&overHTTP, "over HTTP", func() (time.Duration, error) { return callExec(ctx, mc.http, "1+1", `{"result":2}`) })
	// The transports' own round trip, without the sandbox: a ping.
	add(&pingHTTP, "ping over HTTP", func() (time.Duration, error) { return ping(ctx, mc.http) })
	if mc.stdio != nil {
		add(&overStdio, "over stdio", func() (time.Duration, error) { return callExec(ctx, mc.stdio, "1+1", `{"result":2}`) })
		add(&pingStdio, "ping over stdio", func() (time.Duration, error) { return ping(ctx, mc.stdio) })
	}
	if mc.noop != nil {
		add(&noop, "no-op server over stdio", func() (time.Duration, error) { return callExec(ctx, mc.noop, "1+1", `{"result":2}`) })
	}
	if mc.rawStdio != nil {
		add(&rawStdio, "over stdio, minimal client", func() (time.Duration, error) { return callRawExec(mc.rawStdio, "1+1", `{"result":2}`) })
		add(&rawNoop, "no-op server over stdio, minimal client", func() (time.Duration, error) { return callRawExec(mc.rawNoop, "1+1", `{"result":2}`) })
	}
	// The CPU time of the stdio servers the minimal client drives (the
	// process alone, not its sandbox), which serve nothing else: what one
	// execute_code costs the server, a figure the load stretches less
	// than the latencies.
	var rawCPU0, rawNoopCPU0 time.Duration
	if mc.rawStdio != nil {
		rawCPU0, _ = cpuOf(mc.rawStdio.cmd.Process.Pid)
		rawNoopCPU0, _ = cpuOf(mc.rawNoop.cmd.Process.Pid)
	}
	for range b.execs {
		for _, i := range shuffled(len(round)) {
			d, err := round[i].run()
			if err != nil {
				return err
			}
			*round[i].samples = append(*round[i].samples, ms(d))
		}
	}
	// The same comparisons as paired differences: each sample minus the one
	// taken in the same round, so that load that comes and goes during the
	// run weighs on both sides of each difference alike.
	b.add("exec_minus_floor_p50_ms", percentile(minus(ours, theirs), 50))
	b.add("mcp_minus_exec_p50_ms", percentile(minus(overHTTP, ours), 50))
	if mc.stdio != nil {
		b.add("mcp_stdio_minus_exec_p50_ms", percentile(minus(overStdio, ours), 50))
	}
	if mc.stdio != nil && mc.noop != nil {
		b.add("mcp_stdio_noop_p50_ms", percentile(noop, 50))
		b.add("mcp_stdio_own_p50_ms", percentile(minus(minus(overStdio, ours), noop), 50))
	}
	if mc.rawStdio != nil {
		b.add("mcp_stdio_raw_exec_p50_ms", percentile(rawStdio, 50))
		b.add("mcp_stdio_raw_exec_p99_ms", percentile(rawStdio, 99))
		b.add("mcp_stdio_raw_minus_exec_p50_ms", percentile(minus(rawStdio, ours), 50))
		b.add("mcp_stdio_raw_noop_p50_ms", percentile(rawNoop, 50))
		b.add("mcp_stdio_raw_own_p50_ms", percentile(minus(minus(rawStdio, ours), rawNoop), 50))
		if cpu, err := cpuOf(mc.rawStdio.cmd.Process.Pid); err == nil && rawCPU0 > 0 {
			b.add("mcp_stdio_server_cpu_ms", ms(cpu-rawCPU0)/float64(b.execs))
		}
		if cpu, err := cpuOf(mc.rawNoop.cmd.Process.Pid); err == nil && rawNoopCPU0 > 0 {
			b.add("mcp_stdio_noop_server_cpu_ms", ms(cpu-rawNoopCPU0)/float64(b.execs))
		}
	}
	b.add("exec_p50_ms", percentile(ours, 50))
	b.add("exec_p99_ms", percentile(ours, 99))
	b.add("floor_exec_p50_ms", percentile(theirs, 50))
	b.add("floor_exec_p99_ms", percentile(theirs, 99))
	b.add("mcp_ping_p50_ms", percentile(pingHTTP, 50))
	if mc.stdio != nil {
		b.add("mcp_stdio_ping_p50_ms", percentile(pingStdio, 50))
	}
	b.add("mcp_exec_p50_ms", percentile(overHTTP, 50))
	b.add("mcp_exec_p99_ms", percentile(overHTTP, 99))
	if mc.stdio != nil {
		b.add("mcp_stdio_exec_p50_ms", percentile(overStdio, 50))
		b.add("mcp_stdio_exec_p99_ms", percentile(overStdio, 99))
	}
	// The CPU time each process spent on an exec (all its threads): a
	// figure that the load of the machine does not stretch as it does the
	// latencies.
	if cpu, err := cpuOf(sb.PID()); err == nil && cpu0 > 0 {
		b.add("exec_cpu_ms", ms(cpu-cpu0)/float64(b.execs))
	}
	if cpu, err := cpuOf(fp.pid()); err == nil && floorCPU0 > 0 {
		b.add("floor_exec_cpu_ms", ms(cpu-floorCPU0)/float64(b.execs))
	}
	if mb, err := rssOf(sb.PID()); err == nil {
		b.add("rss_after_execs_mb", float64(mb))
	}
	if mb, err := rssOf(fp.pid()); err == nil {
		b.add("floor_rss_after_execs_mb", float64(mb))
	}
	return nil
}

func (b *bench) start(ctx context.Context, cold bool) (*sandbox.Supervisor, error) {
	ws, err := os.MkdirTemp(b.cacheDir, "ws-")
	if err != nil {
		return nil, err
	}
	return sandbox.Start(ctx, sandbox.Options{
		Runtime: b.rt, CacheDir: b.cacheDir, Workspace: ws, NoSnapshot: cold,
	})
}

func median(v []float64) float64 { return percentile(v, 50) }

// minus is a[i] - b[i] for each pair of samples taken side by side.
func minus(a, b []float64) []float64 {
	d := make([]float64, min(len(a), len(b)))
	for i := range d {
		d[i] = a[i] - b[i]
	}
	return d
}

func percentile(v []float64, p int) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return s[min(i, len(s)-1)]
}

// rssOf reads a process's resident memory in MB.
func rssOf(pid int) (int, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			kb, err := strconv.Atoi(f[0])
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS")
}

// cpuOf is the CPU time (user and system, all threads) that process pid
// has used, in clock ticks of 10 ms.
func cpuOf(pid int) (time.Duration, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, err
	}
	// The fields after the command, which is in parentheses and may hold
	// spaces: state is the first, utime the 12th, stime the 13th.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	user, err1 := strconv.Atoi(f[11])
	sys, err2 := strconv.Atoi(f[12])
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(user+sys) * 10 * time.Millisecond, nil
}

// runsMet says in how many runs a target was met, each run judged on its
// own values (run i of every metric the target reads; a metric measured
// once counts with that value): a median that meets a target by a hair
// while most runs miss it shows as "met 2/5". n is 0 when the target's
// metric was measured once.
func (r results) runsMet(t target) (k, n int) {
	m := r[t.key]
	if m == nil || len(m.Runs) < 2 {
		return 0, 0
	}
	for i := range m.Runs {
		run := results{}
		for key, v := range r {
			x := v.Median
			if i < len(v.Runs) {
				x = v.Runs[i]
			}
			run[key] = &metric{Median: x}
		}
		if t.ok(run) {
			k++
		}
	}
	return k, len(m.Runs)
}

// target is one line of the table: a metric, what it is compared with, and
// the goal.
type target struct {
	key, floor, goal string
	ok               func(r results) bool
}

var targets = []target{
	{"boot_cold_ms", "", "", nil},
	{"boot_snapshot_ms", "floor_boot_snapshot_ms", "≤ 1.3 × floor", func(r results) bool {
		return r.v("boot_snapshot_ms") <= 1.3*r.v("floor_boot_snapshot_ms")
	}},
	{"exec_p50_ms", "floor_exec_p50_ms", "≤ floor + 0.2 ms", func(r results) bool {
		return r.v("exec_p50_ms") <= r.v("floor_exec_p50_ms")+0.2
	}},
	{"exec_minus_floor_p50_ms", "", "≤ 0.2 ms (paired)", func(r results) bool { return r.v("exec_minus_floor_p50_ms") <= 0.2 }},
	{"exec_p99_ms", "floor_exec_p99_ms", "", nil},
	{"rss_mb", "floor_rss_mb", "≤ 250 MB (at boot)", func(r results) bool { return r.v("rss_mb") <= 250 }},
	{"rss_after_execs_mb", "floor_rss_after_execs_mb", "", nil},
	{"exec_cpu_ms", "floor_exec_cpu_ms", "", nil},
}

func (b *bench) print() {
	fmt.Printf("\n%-30s %10s %12s  %-24s %-11s %s\n", "metric", "parselbox", "baseline", "target", "runs met", "runs: min / median / max")
	all := slices.Concat(targets, mcpTargets, callTargets, shellTargets, languageTargets, bridgeTargets, sessionTargets, densityTargets, confineTargets, packageTargets)
	for _, t := range all {
		m, ok := b.results[t.key]
		if !ok {
			continue
		}
		fl := ""
		if f, ok := b.results[t.floor]; ok {
			fl = strconv.FormatFloat(f.Median, 'f', 2, 64)
		}
		verdict := ""
		if t.ok != nil {
			verdict = "met"
			if !t.ok(b.results) {
				verdict = "MISSED"
			}
			if k, n := b.results.runsMet(t); n > 1 {
				verdict += fmt.Sprintf(" %d/%d", k, n)
			}
		}
		spread := ""
		if len(m.Runs) > 1 {
			spread = fmt.Sprintf("%d: %.2f / %.2f / %.2f", len(m.Runs), m.Min, m.Median, m.Max)
			if f, ok := b.results[t.floor]; ok && len(f.Runs) > 1 {
				spread += fmt.Sprintf("  (baseline %.2f / %.2f / %.2f)", f.Min, f.Median, f.Max)
			}
		}
		fmt.Printf("%-30s %10.2f %12s  %-24s %-11s %s\n", t.key, m.Median, fl, t.goal, verdict, spread)
	}
	if _, ok := b.results["mcp_stdio_raw_exec_p50_ms"]; ok {
		fmt.Print("\nOver stdio, mcp_stdio_* are measured with the go-sdk's MCP client, mcp_stdio_raw_* with a minimal\n" +
			"one (one goroutine: write the request line, read the answer's), as an agent's own client may be: what\n" +
			"Parselbox adds. The go-sdk client's own share is mcp_stdio_noop - mcp_stdio_raw_noop (the no-op server).\n")
	}
}
