package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"
)

// v8HelperThread is the name (as the kernel keeps it, 15 bytes) of V8's
// platform worker threads in Deno: they run the optimizing compiler's
// background jobs (wasm tier-up) and the concurrent parts of the GC.
const v8HelperThread = "V8 DefaultWorke"

// helperNice is the nice value those threads get.
const helperNice = 19

// lowerHelperPriority gives V8's helper threads of the sandbox process pid
// the lowest priority (nice 19), so that the background compilation of
// sandboxes that just ran code does not take the CPU from the one that
// runs code now: with many sessions on few cores, an execution otherwise
// waits behind the other sandboxes' compiler threads. The helpers still
// get every idle cycle, and V8's main thread does their work itself when
// it must wait for it. Best effort: a thread that cannot be reniced keeps
// its priority (logged at debug level).
func lowerHelperPriority(pid int, log hclog.Logger) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		log.Debug("helper threads not reniced", "error", err)
		return
	}
	for _, t := range tasks {
		comm, err := os.ReadFile(filepath.Join(dir, t.Name(), "comm"))
		if err != nil || !strings.HasPrefix(string(comm), v8HelperThread) {
			continue
		}
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, helperNice); err != nil {
			log.Debug("helper thread not reniced", "tid", tid, "error", err)
		}
	}
}
