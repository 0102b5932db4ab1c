package main

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/parselbox/parselbox/host"
)

// sampler times n sync calls of a tool from Python, each of which must
// return the value of the Python expression want.
type sampler func(fn, want string, n int) ([]float64, error)

// pairSampler times n sync calls of two tools, alternating.
type pairSampler func(fnA, fnB, want string, n int) (a, b []float64, err error)

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

// measurePlugin measures sync calls of greet through the plugin and of the
// same tool in-process, alternating, and in the first run the plugin's
// memory, from the PID the host's plugin manager knows.
func (b *bench) measurePlugin(sb *host.Sandbox, pairs pairSampler, first bool) error {
	if b.plugin == "" {
		return nil
	}
	in, v, err := pairs("(lambda: bench.greet('ada'))", "(lambda: greeter.greet('ada'))", `"hello, ada"`, b.execs)
	if err != nil {
		return err
	}
	b.add("call_inproc_greet_p50_ms", percentile(in, 50))
	b.add("call_inproc_greet_p99_ms", percentile(in, 99))
	b.add("call_plugin_p50_ms", percentile(v, 50))
	b.add("call_plugin_p99_ms", percentile(v, 99))
	if !first {
		return nil
	}
	pid, ok := sb.BridgePid("greeter")
	if !ok {
		return errors.New("the plugin manager knows no process for the greeter bridge")
	}
	if mb, err := rssOf(pid); err == nil {
		b.add("plugin_rss_mb", float64(mb))
	}
	return nil
}
