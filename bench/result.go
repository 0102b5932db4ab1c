package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/parselbox/parselbox/host/sandbox"
)

// The host's memory while an execution returns a 50 MB string: the growth
// of the host process's peak RSS over its RSS before the call. The result
// crosses the pipe once and is decoded in place (its output is not copied
// out of the line), so the target is 3 × 50 MB.
func init() {
	targets = append(targets, target{"result_50mb_host_peak_mb", "", "≤ 150 MB", func(r results) bool {
		return r.v("result_50mb_host_peak_mb") <= 150
	}})
}

const resultBytes = 50_000_000

// measureResult records result_50mb_host_peak_mb over three calls (three
// runs); a failure is reported and leaves the figure out.
func (b *bench) measureResult(ctx context.Context) {
	ws, err := os.MkdirTemp(b.cacheDir, "ws-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: result:", err)
		return
	}
	sb, err := sandbox.Start(ctx, sandbox.Options{Runtime: b.rt, CacheDir: b.cacheDir, Workspace: ws})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: result:", err)
		return
	}
	defer sb.Close()
	for range 3 {
		mb, err := resultPeak(ctx, sb)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: result:", err)
			return
		}
		b.add("result_50mb_host_peak_mb", mb)
	}
}

// resultPeak returns by how many MB the host's peak RSS grows while one
// execution returns a 50 MB string, and checks the string.
func resultPeak(ctx context.Context, sb *sandbox.Supervisor) (float64, error) {
	runtime.GC()
	debug.FreeOSMemory()
	before, err := selfStatus("VmRSS:")
	if err != nil {
		return 0, err
	}
	// Reset the peak (VmHWM) to the current RSS.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, fmt.Errorf("resetting the peak RSS: %w", err)
	}
	r, err := sb.Exec(ctx, fmt.Sprintf("'x' * %d", resultBytes), time.Minute)
	if err != nil {
		return 0, err
	}
	if r.Error != nil {
		return 0, fmt.Errorf("the execution failed: %s", r.Error)
	}
	if len(r.Output) != resultBytes+2 || r.Output[1] != 'x' {
		return 0, fmt.Errorf("the output is %d bytes, want a string of %d", len(r.Output), resultBytes)
	}
	peak, err := selfStatus("VmHWM:")
	runtime.KeepAlive(r)
	if err != nil {
		return 0, err
	}
	return float64(peak-before) / 1024, nil
}

// selfStatus reads a figure in kB from /proc/self/status.
func selfStatus(key string) (int, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return strconv.Atoi(f[0])
			}
		}
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", key)
}
