package bridges_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/host/bridges"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// Run with: go test -run '^$' -bench . ./host/bridges/ (not with -race,
// which slows both sides down several times).

var echoArgs = []byte(`{"a":1,"b":"two"}`)

// BenchmarkCallPlugin is a small call to a plugin process, one at a time. It
// reports the latency percentiles, the plugin's resident memory, and what
// each call costs each process in CPU time and in context switches (the
// sleeps and wakeups of its threads): on a loaded machine the latency is
// noise, and those two are what a change of the call path changes.
func BenchmarkCallPlugin(b *testing.B) {
	m := newManager(b, bridges.Options{Logger: hclog.NewNullLogger()})
	br := start(b, m, "bench", config(b, nil))
	pid := pidOf(b, br)
	req := &sdk.CallToolRequest{Name: "echo", Arguments: echoArgs}
	lat := make([]time.Duration, 0, b.N)
	host0, plugin0 := selfUsage(b), procUsage(b, pid)
	for b.Loop() {
		t0 := time.Now()
		if _, err := br.CallTool(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	host1, plugin1 := selfUsage(b), procUsage(b, pid)
	reportPercentiles(b, lat)
	host1.report(b, host0, "host", len(lat))
	plugin1.report(b, plugin0, "plugin", len(lat))
	if rss, err := rssKB(pid); err == nil {
		b.ReportMetric(float64(rss)/1024, "plugin-RSS-MB")
	}
}

// BenchmarkCallPluginParallel is the same call from many goroutines at
// once.
func BenchmarkCallPluginParallel(b *testing.B) {
	m := newManager(b, bridges.Options{Logger: hclog.NewNullLogger()})
	br := start(b, m, "bench", config(b, nil))
	req := &sdk.CallToolRequest{Name: "echo", Arguments: echoArgs}
	b.SetParallelism(16) // 16 × GOMAXPROCS callers
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := br.CallTool(context.Background(), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkCallInProcess is the same call over a real gRPC connection to a
// bridge served in this process (sdktest.NewHarness): the cost of the
// protocol without the process boundary.
func BenchmarkCallInProcess(b *testing.B) {
	br := sdktest.NewHarness(b, newTestBridge())
	req := &sdk.CallToolRequest{Name: "echo", Arguments: echoArgs}
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		if _, err := br.CallTool(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	reportPercentiles(b, lat)
}

// BenchmarkCallDirect calls the bridge as a Go value: the cost of the SDK
// (decoding, validation, encoding) alone.
func BenchmarkCallDirect(b *testing.B) {
	br := newTestBridge()
	req := &sdk.CallToolRequest{Name: "echo", Arguments: echoArgs}
	for b.Loop() {
		if _, err := br.CallTool(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStart measures launch → configured → Describe answered, with
// and without AutoMTLS, and stopping the plugin.
func BenchmarkStart(b *testing.B) {
	for _, mtls := range []bool{false, true} {
		b.Run(fmt.Sprintf("AutoMTLS=%v", mtls), func(b *testing.B) {
			m := newManager(b, bridges.Options{Logger: hclog.NewNullLogger(), AutoMTLS: mtls})
			var stops time.Duration
			i := 0
			for b.Loop() {
				i++
				br, err := m.Start(context.Background(), "start"+strconv.Itoa(i), config(b, nil))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := br.Describe(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				t0 := time.Now()
				// Stop it now, outside the timing, so that plugins do not pile up.
				if err := m.Stop(context.Background(), "start"+strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
				stops += time.Since(t0)
				b.StartTimer()
			}
			b.ReportMetric(float64(stops.Microseconds())/float64(i)/1000, "stop-ms/op")
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds())
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// usage is the CPU time and context switches (voluntary and not) of a
// process so far.
type usage struct {
	cpu      time.Duration
	switches int64
}

// report reports the CPU time and context switches per call since u0.
func (u usage) report(b *testing.B, u0 usage, who string, calls int) {
	if calls == 0 {
		return
	}
	b.ReportMetric(float64((u.cpu-u0.cpu).Microseconds())/float64(calls), who+"-cpu-µs/op")
	b.ReportMetric(float64(u.switches-u0.switches)/float64(calls), who+"-ctxsw/op")
}

// selfUsage is this process's usage.
func selfUsage(b *testing.B) usage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return usage{
		cpu:      time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
		switches: ru.Nvcsw + ru.Nivcsw,
	}
}

// procUsage is the usage of process pid, from /proc: its CPU time (in
// clock ticks of 10 ms, enough over thousands of calls) and the context
// switches of its threads.
func procUsage(b *testing.B, pid int) usage {
	var u usage
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command, which may contain spaces: utime and
	// stime are the 14th and 15th of the line.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	u.cpu = time.Duration(ut+st) * 10 * time.Millisecond
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range tasks {
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
		for line := range strings.SplitSeq(string(status), "\n") {
			name, v, _ := strings.Cut(line, ":")
			if name == "voluntary_ctxt_switches" || name == "nonvoluntary_ctxt_switches" {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				u.switches += n
			}
		}
	}
	return u
}

// rssKB returns the resident set size of a process, from /proc.
func rssKB(pid int) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no VmRSS for %d", pid)
}

// BenchmarkGreeter starts the example bridge (sdk/example/greeter, built
// here), as a real third-party bridge: launch → Describe, and its memory.
func BenchmarkGreeter(b *testing.B) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go toolchain to build the example bridge")
	}
	dir := b.TempDir()
	build := exec.Command(gobin, "build", "-o", filepath.Join(dir, bridges.BinaryPrefix+"greeter"), "../../sdk/example/greeter")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the greeter: %v\n%s", err, out)
	}
	m := newManager(b, bridges.Options{Logger: hclog.NewNullLogger(), ExecutableDir: dir})
	var rss float64
	i := 0
	for b.Loop() {
		i++
		name := "greeter" + strconv.Itoa(i)
		br, err := m.Start(context.Background(), name, bridges.Config{Plugin: "greeter"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := br.Describe(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if _, err := br.CallTool(context.Background(), &sdk.CallToolRequest{Name: "greet", Arguments: []byte(`{"name":"ada"}`)}); err != nil {
			b.Fatal(err)
		}
		if kb, err := rssKB(greeterPid(b, dir)); err == nil {
			rss = float64(kb) / 1024
		}
		if err := m.Stop(context.Background(), name); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(rss, "plugin-RSS-MB")
}

// greeterPid finds the running greeter started from dir.
func greeterPid(b *testing.B, dir string) int {
	entries, _ := os.ReadDir("/proc")
	want := filepath.Join(dir, bridges.BinaryPrefix+"greeter")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && exe == want {
			return pid
		}
	}
	b.Fatal("the greeter is not running")
	return 0
}
