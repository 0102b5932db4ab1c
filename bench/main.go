// Command bench measures Parselbox against the floor of a bare Deno +
// Pyodide program measured in the same run, prints a table and writes
// bench-results.json. It is run by `make bench`; nothing here is a test.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/parselbox/parselbox/host/sandbox"
)

func main() {
	var (
		runtimeDir = flag.String("runtime", "", "runtime directory (default: $PARSELBOX_RUNTIME)")
		out        = flag.String("out", "bench-results.json", "where to write the results")
		boots      = flag.Int("boots", 5, "boots to measure for each kind")
		execs      = flag.Int("execs", 300, "executions to measure")
	)
	flag.Parse()
	b := &bench{results: map[string]float64{}, boots: *boots, execs: *execs}
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

type bench struct {
	results      map[string]float64
	boots, execs int
	rt           *sandbox.Runtime
	cacheDir     string
	plugin       string   // the plugin binary measured, if any
	bridges      []string // the built-in bridges measured
}

func (b *bench) set(key string, v float64) { b.results[key] = round(v) }

func round(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 2, 64), 64)
	return f
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

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

	fmt.Println("preparing the floor (a bare Deno + Pyodide script) and our snapshot ...")
	fl, err := newFloor(rt)
	if err != nil {
		return err
	}
	defer fl.close()

	// Cold boot: no snapshot at all. The first start also builds our snapshot.
	began := time.Now()
	sb, err := b.start(ctx, true)
	if err != nil {
		return err
	}
	b.set("boot_cold_ms", ms(time.Since(began)))
	sb.Close()
	if sb, err = b.start(ctx, false); err != nil { // builds the snapshot
		return err
	}
	sb.Close()

	// Snapshot boots, alternating with the floor's so both see the same load.
	var ours, theirs []float64
	for range b.boots {
		began := time.Now()
		sb, err := b.start(ctx, false)
		if err != nil {
			return err
		}
		ours = append(ours, ms(time.Since(began)))
		sb.Close()
		fp, d, err := fl.start()
		if err != nil {
			return err
		}
		theirs = append(theirs, ms(d))
		fp.close()
	}
	b.set("boot_snapshot_ms", median(ours))
	b.set("floor_boot_snapshot_ms", median(theirs))

	// Execution round trips of 1+1 on snapshot-booted processes.
	sb, err = b.start(ctx, false)
	if err != nil {
		return err
	}
	defer sb.Close()
	if mb, err := rssOf(sb.PID()); err == nil {
		b.set("rss_mb", float64(mb))
	}
	fp, _, err := fl.start()
	if err != nil {
		return err
	}
	defer fp.close()
	var execOurs, execTheirs []float64
	for i := range b.execs + 20 {
		t0 := time.Now()
		if _, err := sb.Exec(ctx, "1+1", time.Minute); err != nil {
			return err
		}
		d1 := time.Since(t0)
		t0 = time.Now()
		if err := fp.exec("1+1"); err != nil {
			return err
		}
		d2 := time.Since(t0)
		if i >= 20 { // after a warm-up
			execOurs = append(execOurs, ms(d1))
			execTheirs = append(execTheirs, ms(d2))
		}
	}
	b.set("exec_p50_ms", percentile(execOurs, 50))
	b.set("exec_p99_ms", percentile(execOurs, 99))
	b.set("floor_exec_p50_ms", percentile(execTheirs, 50))
	b.set("floor_exec_p99_ms", percentile(execTheirs, 99))
	if mb, err := rssOf(sb.PID()); err == nil {
		b.set("rss_after_execs_mb", float64(mb))
	}
	if mb, err := rssOf(fp.pid()); err == nil {
		b.set("floor_rss_mb", float64(mb))
	}
	if err := b.runCalls(ctx); err != nil {
		return err
	}
	b.measureResult(ctx)
	figs, err := measureSessions(ctx, rt, b.cacheDir, 10)
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	for k, v := range figs {
		b.set(k, v)
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

// target is one line of the table: a metric, what it is compared with, and
// the goal.
type target struct {
	key, floor, goal string
	ok               func(r map[string]float64) bool
}

var targets = []target{
	{"boot_cold_ms", "", "", nil},
	{"boot_snapshot_ms", "floor_boot_snapshot_ms", "≤ 1.3 × floor", func(r map[string]float64) bool {
		return r["boot_snapshot_ms"] <= 1.3*r["floor_boot_snapshot_ms"]
	}},
	{"exec_p50_ms", "floor_exec_p50_ms", "≤ floor + 2 ms", func(r map[string]float64) bool {
		return r["exec_p50_ms"] <= r["floor_exec_p50_ms"]+2
	}},
	{"exec_p99_ms", "floor_exec_p99_ms", "", nil},
	{"rss_mb", "floor_rss_mb", "≤ 250 MB", func(r map[string]float64) bool { return r["rss_mb"] <= 250 }},
	{"rss_after_execs_mb", "", "", nil},
}

func (b *bench) print() {
	fmt.Printf("\n%-30s %10s %12s  %-22s %s\n", "metric", "parselbox", "baseline", "target", "")
	all := append(append(append(targets, callTargets...), bridgeTargets...), sessionTargets...)
	for _, t := range all {
		v, ok := b.results[t.key]
		if !ok {
			continue
		}
		fl := ""
		if f, ok := b.results[t.floor]; ok {
			fl = strconv.FormatFloat(f, 'f', 2, 64)
		}
		verdict := ""
		if t.ok != nil {
			verdict = "met"
			if !t.ok(b.results) {
				verdict = "MISSED"
			}
		}
		fmt.Printf("%-30s %10.2f %12s  %-22s %s\n", t.key, v, fl, t.goal, verdict)
	}
}
