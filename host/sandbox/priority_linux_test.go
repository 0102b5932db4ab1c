package sandbox_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host/sandbox"
)

// V8's helper threads (background compilation, concurrent GC) run at nice
// 19 once the sandbox is ready; the thread that runs Python keeps its
// priority. A sandbox restored from the snapshot still computes and keeps
// its state (the snapshot's memory image is copied page by page).
func TestHelperThreadsLowPriority(t *testing.T) {
	t.Parallel()
	sb := start(t, sandbox.Options{})
	if got := output(t, run(t, sb, "x = sum(i * i for i in range(1000))\nx")); got != float64(332833500) {
		t.Fatalf("sum = %v", got)
	}
	if got := output(t, run(t, sb, "import json, sqlite3\nx + len(json.dumps({'a': [1, 2]}))")); got != float64(332833500+13) {
		t.Fatalf("state = %v", got)
	}
	if !sb.Ready().Snapshot {
		t.Log("booted without the snapshot")
	}
	dir := filepath.Join("/proc", strconv.Itoa(sb.PID()), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	helpers, main := 0, -1
	for _, task := range tasks {
		comm, _ := os.ReadFile(filepath.Join(dir, task.Name(), "comm"))
		stat, err := os.ReadFile(filepath.Join(dir, task.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		nice, _ := strconv.Atoi(f[16]) // field 19 of stat
		switch {
		case strings.HasPrefix(string(comm), "V8 DefaultWorke"):
			helpers++
			if nice != 19 {
				t.Errorf("helper thread %s (%s): nice %d, want 19", task.Name(), strings.TrimSpace(string(comm)), nice)
			}
		case task.Name() == strconv.Itoa(sb.PID()):
			main = nice
		}
	}
	if helpers == 0 {
		t.Errorf("no V8 helper threads found in %s", dir)
	}
	if main != 0 {
		t.Errorf("main thread: nice %d, want 0", main)
	}
}
