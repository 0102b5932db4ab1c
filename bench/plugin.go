package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/parselbox/parselbox/host"
)

// sampler times n sync calls of a tool from Python, each of which must
// return the value of the Python expression want.
type sampler func(fn, want string, n int) ([]float64, error)

// pluginConfig adds the greeter example bridge (built by make build into
// bin/parselbox-bridge-greeter) as the plugin measured.
func (b *bench) pluginConfig(cfg *host.Config) error {
	bin, err := filepath.Abs(filepath.Join("bin", "parselbox-bridge-greeter"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return errors.New("bin/parselbox-bridge-greeter is not built (make build)")
	}
	cfg.Bridges = map[string]host.BridgeConfig{"greeter": {Plugin: bin}}
	b.plugin = bin
	return nil
}

// measurePlugin measures sync calls through the plugin, and in the first
// run its memory.
func (b *bench) measurePlugin(samples sampler, first bool) error {
	if b.plugin == "" {
		return nil
	}
	v, err := samples("(lambda: greeter.greet('ada'))", `"hello, ada"`, b.execs)
	if err != nil {
		return err
	}
	b.add("call_plugin_p50_ms", percentile(v, 50))
	b.add("call_plugin_p99_ms", percentile(v, 99))
	if !first {
		return nil
	}
	// TODO(plugin PID): take the PID from the plugin manager once it
	// exposes it. Until then: the one child of this process running the
	// plugin binary (pgrep -P), never another user's process of that name.
	out, err := exec.Command("pgrep", "-P", strconv.Itoa(os.Getpid()), "-f", b.plugin).Output()
	if err != nil {
		return fmt.Errorf("finding the plugin process: %w", err)
	}
	pids := strings.Fields(string(out))
	if len(pids) != 1 {
		return fmt.Errorf("finding the plugin process: %d children run %s", len(pids), b.plugin)
	}
	pid, _ := strconv.Atoi(pids[0])
	if mb, err := rssOf(pid); err == nil {
		b.add("plugin_rss_mb", float64(mb))
	}
	return nil
}
