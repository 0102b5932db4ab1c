package main

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/parselbox/parselbox/host/mcpserver"
)

// densitySessions is how many sessions one host holds for the density
// figures.
const densitySessions = 50

// densityTargets: the targets for one host holding many sessions.
var densityTargets = []target{
	{"mem_per_session_mb", "", "≤ 120 MB", func(r results) bool { return r.v("mem_per_session_mb") <= 120 }},
	{"exec_p99_ms_50_sessions", "", "≤ 30 ms", func(r results) bool { return r.v("exec_p99_ms_50_sessions") <= 30 }},
	{"exec_p50_ms_50_sessions", "", "", nil},
	{"exec_max_ms_50_sessions", "", "", nil},
	{"session_pss_mb", "", "", nil},
	{"session_pss_anon_mb", "", "", nil},
	{"session_pss_file_mb", "", "", nil},
	{"mem_per_session_pss_mb", "", "", nil},
	{"idle_cpu_pct_50_sessions", "", "", nil},
}

// measureDensity opens densitySessions MCP sessions on one host (over
// streamable HTTP, no pool) and adds:
//   - mem_per_session_mb: the fall of the system's MemAvailable from before
//     the server started to when every session holds an idle sandbox,
//     divided by the sessions (the host's own share included);
//   - exec_p99_ms_50_sessions, exec_p50_ms_50_sessions: execute_code("1+1")
//     round-robin over the open sessions;
//   - session_pss_mb and its anonymous and file-backed parts: the mean
//     proportional set size of one sandbox process (/proc/PID/smaps_rollup),
//     which says what dominates: anonymous memory is each sandbox's own
//     (V8 heap, wasm memory, malloc), file-backed memory (the Deno binary)
//     is shared, and PSS divides it among the processes;
//   - mem_per_session_pss_mb: the same cost counted from the processes
//     instead of the system: the sandboxes' PSS plus what this process
//     (the host, with the bench's clients) grew by, per session. PSS sums
//     shared pages once, so this is mem_per_session_mb without what the
//     rest of the machine did meanwhile (and without the kernel's share);
//   - idle_cpu_pct_50_sessions: the CPU the idle sandboxes use together
//     over 10 s (their timers and the host's watch of them), in percent of
//     one core: the load that idle sessions put on the exec latency.
//
// The machine is shared: MemAvailable moves with everything else that
// runs. Each run is one value; compare runs.
func measureDensity(ctx context.Context, b *bench) error {
	runs := min(b.runs, 2) // each boots 50 sandboxes
	for run := range runs {
		fmt.Printf("%d sessions on one host, run %d of %d ...\n", b.densitySessions, run+1, runs)
		if err := densityRun(ctx, b, run); err != nil {
			return err
		}
	}
	return nil
}

func densityRun(ctx context.Context, b *bench, run int) error {
	n := b.densitySessions
	opts := b.mcpOptions(0)
	opts.Settings.MaxSessions = 0
	time.Sleep(2 * time.Second) // let what ran before settle
	before, err := memAvailableMB()
	if err != nil {
		return err
	}
	selfBefore, _, _, err := pssOf(os.Getpid())
	if err != nil {
		return err
	}
	srv, err := mcpserver.New(opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.RunHTTP(ctx, ln) }()
	defer func() {
		cancel()
		<-served
	}()
	url := "http://" + ln.Addr().String() + mcpserver.Path
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	sessions := make([]*mcp.ClientSession, n)
	defer func() {
		for _, cs := range sessions {
			if cs != nil {
				cs.Close()
			}
		}
	}()
	// Opened two at a time, as clients arriving together would.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(2)
	for i := range n {
		g.Go(func() error {
			cs, err := client.Connect(gctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
			if err != nil {
				return fmt.Errorf("session %d: %w", i, err)
			}
			sessions[i] = cs
			if _, err := callExec(gctx, cs, fmt.Sprintf("n = %d\nn", i), fmt.Sprintf(`{"result":%d}`, i)); err != nil {
				return fmt.Errorf("session %d: %w", i, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	time.Sleep(3 * time.Second) // idle
	after, err := memAvailableMB()
	if err != nil {
		return err
	}
	b.add("mem_per_session_mb", float64(before-after)/float64(n))
	selfAfter, _, _, err := pssOf(os.Getpid())
	if err != nil {
		return err
	}

	var pss, anon, file float64
	var np int
	for _, pid := range srv.SandboxPIDs() {
		p, a, f, err := pssOf(pid)
		if err != nil {
			continue
		}
		pss, anon, file, np = pss+p, anon+a, file+f, np+1
	}
	if np > 0 {
		b.add("session_pss_mb", pss/float64(np))
		b.add("session_pss_anon_mb", anon/float64(np))
		b.add("session_pss_file_mb", file/float64(np))
		b.add("mem_per_session_pss_mb", (pss+selfAfter-selfBefore)/float64(np))
	}
	pids := srv.SandboxPIDs()
	cpu0 := cpuSeconds(pids)
	time.Sleep(10 * time.Second)
	b.add("idle_cpu_pct_50_sessions", (cpuSeconds(pids)-cpu0)/10*100)

	var lat []float64
	var all []sample
	began := time.Now()
	for round := range 10 {
		for i, cs := range sessions {
			at := time.Since(began)
			d, err := callExec(ctx, cs, "1+1", `{"result":2}`)
			if err != nil {
				return fmt.Errorf("round %d, session %d: %w", round, i, err)
			}
			all = append(all, sample{run, round, i, ms(at), ms(d)})
			if round > 0 { // the first round warms every sandbox up
				lat = append(lat, ms(d))
			}
		}
	}
	b.add("exec_p99_ms_50_sessions", percentile(lat, 99))
	b.add("exec_p50_ms_50_sessions", percentile(lat, 50))
	b.add("exec_max_ms_50_sessions", slices.Max(lat))
	if n != densitySessions {
		fmt.Printf("  %d sessions, not %d: the *_50_sessions figures of this run are for %d\n", n, densitySessions, n)
	}
	slowest := slices.Clone(all[n:])
	slices.SortFunc(slowest, func(a, b sample) int { return cmp.Compare(b.ms, a.ms) })
	for _, s := range slowest[:min(8, len(slowest))] {
		fmt.Printf("  slow exec: round %d, session %d, at %.0f ms: %.1f ms\n", s.round, s.session, s.at, s.ms)
	}
	if b.densitySamples != "" {
		if err := writeSamples(b.densitySamples, all); err != nil {
			return err
		}
	}
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("  load average after the run: %s", la) // the machine may be shared
	}
	return nil
}

// A sample is one timed exec of part density.
type sample struct {
	run, round, session int
	at, ms              float64 // start since the first round began, latency
}

// writeSamples appends samples to a CSV file (header when new).
func writeSamples(path string, all []sample) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		fmt.Fprintln(f, "run,round,session,at_ms,latency_ms")
	}
	for _, s := range all {
		fmt.Fprintf(f, "%d,%d,%d,%.1f,%.2f\n", s.run, s.round, s.session, s.at, s.ms)
	}
	return f.Close()
}

// cpuSeconds is the CPU time (user and system) the processes used so far.
func cpuSeconds(pids []int) float64 {
	var total float64
	for _, pid := range pids {
		data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command name, which is in parentheses.
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			continue
		}
		utime, _ := strconv.ParseFloat(f[11], 64)
		stime, _ := strconv.ParseFloat(f[12], 64)
		total += (utime + stime) / clockTicks
	}
	return total
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on Linux.
const clockTicks = 100

// memAvailableMB is the system's MemAvailable.
func memAvailableMB() (int64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no MemAvailable in /proc/meminfo")
}

// pssOf reads a process's proportional set size and its anonymous and
// file-backed parts, in MB.
func pssOf(pid int) (pss, anon, file float64, err error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "smaps_rollup"))
	if err != nil {
		return 0, 0, 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "Pss:":
			pss = kb / 1024
		case "Pss_Anon:":
			anon = kb / 1024
		case "Pss_File:":
			file = kb / 1024
		}
	}
	return pss, anon, file, nil
}
