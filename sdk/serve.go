package sdk

import (
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/parselbox/parselbox/internal/wire"
)

// Handshake is the go-plugin handshake shared by the host and every bridge.
// ProtocolVersion is the version of the bridge protocol
// (parselbox.bridge.v1); a host and a bridge built against different
// versions refuse each other at start with a message that says so. The magic
// cookie only keeps people from running a bridge binary by hand by mistake;
// it is no security measure.
var Handshake = wire.Handshake

// PluginName is the name under which a bridge plugin is dispensed.
const PluginName = wire.PluginName

// LogLevelEnv names the environment variable in which the host passes its log
// level ("trace", "debug", "info", "warn", "error") to a bridge; the default
// logger of a Bridge logs at that level.
const LogLevelEnv = wire.LogLevelEnv

// Serve serves b as a bridge plugin over go-plugin gRPC and returns when the
// host stops it. Call it from main and do nothing else there: stdout
// carries the plugin handshake, and logs go to stderr as JSON lines that the
// host re-levels under its own logger. A binary started by hand (not by a
// parselbox host) prints a notice and exits with status 1. The bridge's Go
// code runs on one processor (GOMAXPROCS=1: fewer thread wakeups per call)
// unless its environment sets GOMAXPROCS, which the host passes when the
// bridge's env names it.
func Serve(b BridgeServer) {
	plugin.Serve(ServeConfig(b))
}

// ServeConfig returns the go-plugin configuration with which Serve serves b.
// Bridges that need to adjust it (for example to run in go-plugin's test
// mode) call plugin.Serve with it themselves.
func ServeConfig(b BridgeServer) *plugin.ServeConfig {
	return wire.ServeConfig(b, loggerOf(b))
}

func loggerOf(b BridgeServer) hclog.Logger {
	if l, ok := b.(interface{ Logger() hclog.Logger }); ok && l.Logger() != nil {
		return l.Logger()
	}
	return newStderrLogger("")
}

// newStderrLogger is the default logger of a bridge: JSON lines on the
// process's stderr (as it is now, before go-plugin redirects os.Stderr), at
// the level in LogLevelEnv, Info when unset.
func newStderrLogger(name string) hclog.Logger {
	level := hclog.LevelFromString(os.Getenv(LogLevelEnv))
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:       name,
		Level:      level,
		Output:     os.Stderr,
		JSONFormat: true,
	})
}
