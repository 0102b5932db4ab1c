package bridges_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/parselbox/parselbox/host/bridges"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// The test binary doubles as the plugin under test: started by a Manager
// (which sets go-plugin's magic cookie in its environment), it serves
// testBridge. The name it is started under chooses a variant:
// parselbox-bridge-v2 speaks another protocol version.
func TestMain(m *testing.M) {
	if os.Getenv(sdk.Handshake.MagicCookieKey) != "" {
		serveTestBridge()
		return
	}
	if path := os.Getenv(rawEchoEnv); path != "" {
		serveRawEcho(path)
		return
	}
	if os.Getenv(hostModeEnv) != "" {
		runTestHost()
		return
	}
	// Known to the test process only: plugins must not see it.
	os.Setenv(secretEnv, "s3cret")
	// Race-enabled binaries sleep 1s at exit; plugins are named GORACE.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

const (
	secretEnv   = "PARSELBOX_TEST_SECRET"
	hostModeEnv = "PARSELBOX_TEST_HOST"
)

func serveTestBridge() {
	b := newTestBridge()
	cfg := sdk.ServeConfig(b)
	if filepath.Base(os.Args[0]) == bridges.BinaryPrefix+"v2" {
		cfg.HandshakeConfig.ProtocolVersion = 2
		cfg.VersionedPlugins = map[int]plugin.PluginSet{2: cfg.Plugins}
		cfg.Plugins = nil
	}
	plugin.Serve(cfg)
}

// testConfig is what the test bridge's Configure accepts.
type testConfig struct {
	Reject       string `json:"reject,omitempty"`        // reject the configuration with this message
	ShutdownFile string `json:"shutdown_file,omitempty"` // written by Shutdown
	HangShutdown bool   `json:"hang_shutdown,omitempty"` // Shutdown never returns
	Value        string `json:"value,omitempty"`         // returned by the tool config
	// Servers are checked with sdk.DecodeConfig: an unknown key in one is
	// a *sdk.ConfigError naming it.
	Servers []struct {
		URL string `json:"url"`
	} `json:"servers,omitempty"`
}

func newTestBridge() *sdk.Bridge {
	var (
		mu       sync.Mutex
		cfg      testConfig
		active   int
		blocked  int
		maxSeen  int
		arrivals = make(chan struct{})
	)
	b := sdk.NewBridge(&sdk.Info{Name: "testbridge", Version: "v0.0.1"}, &sdk.Options{
		Configure: func(ctx context.Context, req *sdk.ConfigureRequest) error {
			c, err := sdk.DecodeConfig[testConfig](req)
			if err != nil {
				return err
			}
			if c.Reject != "" {
				return sdk.Errorf(sdk.CodeInvalidArgument, "%s", c.Reject)
			}
			mu.Lock()
			cfg = c
			mu.Unlock()
			return nil
		},
		Shutdown: func(ctx context.Context) error {
			mu.Lock()
			c := cfg
			mu.Unlock()
			if c.ShutdownFile != "" {
				if err := os.WriteFile(c.ShutdownFile, []byte("bye"), 0o600); err != nil {
					return err
				}
			}
			if c.HangShutdown {
				select {}
			}
			return nil
		},
	})
	log := b.Logger()

	type none struct{}
	sdk.AddTool(b, &sdk.Tool{Name: "echo"}, func(ctx context.Context, req *sdk.CallToolRequest, in map[string]any) (map[string]any, error) {
		return in, nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "procs"}, func(ctx context.Context, req *sdk.CallToolRequest, in none) (int, error) {
		return runtime.GOMAXPROCS(0), nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "env"}, func(ctx context.Context, req *sdk.CallToolRequest, in none) ([]string, error) {
		env := os.Environ()
		slices.Sort(env)
		return env, nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "pid"}, func(ctx context.Context, req *sdk.CallToolRequest, in none) (int, error) {
		return os.Getpid(), nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "config"}, func(ctx context.Context, req *sdk.CallToolRequest, in none) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		return cfg.Value, nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "block"}, func(ctx context.Context, req *sdk.CallToolRequest, in none) (any, error) {
		mu.Lock()
		blocked++
		mu.Unlock()
		defer func() {
			mu.Lock()
			blocked--
			mu.Unlock()
		}()
		req.Log("blocked")
		<-ctx.Done()
		return nil, sdk.Errorf(sdk.CodeCancelled, "block: stopped by the cancel")
	})
	// blocked says how many calls of block are running (for calls whose
	// log nobody reads).
	sdk.AddTool(b, &sdk.Tool{Name: "blocked"}, func(ctx context.Context, req *sdk.CallToolRequest, in none) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return blocked, nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "boom"}, func(ctx context.Context, req *sdk.CallToolRequest, in none) (any, error) {
		panic("boom in the bridge")
	})
	sdk.AddTool(b, &sdk.Tool{Name: "warn"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct {
		Message string `json:"message"`
	}) (any, error) {
		log.Warn(in.Message, "from", "bridge")
		return nil, nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "messages"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct {
		N int `json:"n"`
	}) ([]json.RawMessage, error) {
		var got []json.RawMessage
		for i := range in.N {
			select {
			case msg := <-req.Messages():
				got = append(got, msg)
				req.Log("got: " + string(msg))
				req.Progress(float64(i+1), float64(in.N), "received")
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return got, nil
	})
	// barrier returns once n calls are inside it at the same time: n
	// concurrent calls only all return if they really run concurrently.
	sdk.AddTool(b, &sdk.Tool{Name: "barrier"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct {
		N int `json:"n"`
	}) (int, error) {
		mu.Lock()
		active++
		maxSeen = max(maxSeen, active)
		if active >= in.N {
			close(arrivals)
			arrivals = make(chan struct{})
		}
		wait := arrivals
		if active >= in.N {
			wait = nil
		}
		mu.Unlock()
		defer func() {
			mu.Lock()
			active--
			mu.Unlock()
		}()
		if wait != nil {
			select {
			case <-wait:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		mu.Lock()
		defer mu.Unlock()
		return maxSeen, nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "callback"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct {
		Path string `json:"path"`
	}) (json.RawMessage, error) {
		if b.Host() == nil {
			return nil, errors.New("no host callbacks")
		}
		res, err := b.Host().CallTool(ctx, in.Path, json.RawMessage(`{"from":"bridge"}`))
		if err != nil {
			return nil, err
		}
		return res.Content, nil
	})
	// spawn starts a child process that outlives the tool call.
	sdk.AddTool(b, &sdk.Tool{Name: "spawn"}, func(ctx context.Context, req *sdk.CallToolRequest, in none) (int, error) {
		cmd := exec.Command("/bin/sleep", "1000")
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		go func() { _ = cmd.Wait() }()
		return cmd.Process.Pid, nil
	})
	return b
}

// runTestHost is a parselbox host in miniature, for TestPdeathsig: it starts
// the test bridge, prints the plugin's pid, and waits to be killed.
func runTestHost() {
	exe, _ := os.Executable()
	m := bridges.NewManager(bridges.Options{})
	b, err := m.Start(context.Background(), "orphan", bridges.Config{Plugin: exe, Env: []string{"GORACE"}})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	res, err := b.CallTool(context.Background(), &sdk.CallToolRequest{Name: "pid"})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(string(res.Content))
	select {}
}

// testExe returns the path of the test binary, which serves the test bridge.
func testExe(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// newManager returns a manager whose logs go to t, closed when the test
// ends.
func newManager(t testing.TB, opts bridges.Options) *bridges.Manager {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = sdktest.Logger(t)
	}
	m := bridges.NewManager(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := m.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return m
}

// config returns a Config for the test bridge, passing GORACE through.
func config(t testing.TB, cfg map[string]any, env ...string) bridges.Config {
	return bridges.Config{Plugin: testExe(t), Env: append([]string{"GORACE"}, env...), Config: cfg}
}

// start starts the test bridge under name.
func start(t testing.TB, m *bridges.Manager, name string, cfg bridges.Config) sdk.BridgeServer {
	t.Helper()
	b, err := m.Start(t.Context(), name, cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return b
}

// call calls a tool and fails the test if the call or the tool fails.
func call(t testing.TB, b sdk.BridgeServer, tool, args string) json.RawMessage {
	t.Helper()
	res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s failed: %s: %s", tool, res.Error.Code, res.Error.Message)
	}
	return res.Content
}

// pidOf returns the pid of the test bridge's current process.
func pidOf(t testing.TB, b sdk.BridgeServer) int {
	t.Helper()
	var pid int
	if err := json.Unmarshal(call(t, b, "pid", `{}`), &pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

// linkPlugin makes dir/parselbox-bridge-NAME a symbolic link to the test
// binary.
func linkPlugin(t testing.TB, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, bridges.BinaryPrefix+name)
	if err := os.Symlink(testExe(t), path); err != nil {
		t.Fatal(err)
	}
	return path
}
