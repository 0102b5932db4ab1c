package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/parselbox/parselbox/host"
)

// sampler times n sync calls of a tool from Python.
type sampler func(fn string, n int) ([]float64, error)

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

// measurePlugin measures sync calls through the plugin and its memory.
func (b *bench) measurePlugin(eval func(string) (any, error), samples sampler) error {
	if b.plugin == "" {
		return nil
	}
	v, err := samples("(lambda: greeter.greet('ada'))", b.execs)
	if err != nil {
		return err
	}
	b.set("call_plugin_p50_ms", percentile(v, 50))
	b.set("call_plugin_p99_ms", percentile(v, 99))
	out, err := exec.Command("pgrep", "-f", b.plugin).Output()
	if err != nil {
		return fmt.Errorf("finding the plugin process: %w", err)
	}
	var pid int
	fmt.Sscan(strings.Fields(string(out))[0], &pid)
	if mb, err := rssOf(pid); err == nil {
		b.set("plugin_rss_mb", float64(mb))
	}
	return nil
}
