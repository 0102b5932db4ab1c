package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// fakeCallerEnv makes the test binary a stand-in runner whose every
// execution makes one request to the host (as a tool call from Python
// does) and answers with the host's reply (TestServeReusesGoroutines,
// BenchmarkHostServe).
const fakeCallerEnv = "PARSELBOX_FAKE_CALLER"

// callParams are the params of the stand-in's request, shaped as a tool
// call's: the host's handler decodes them.
const callParams = `{"name":"inv.search","args":{"query":"blue widgets","filters":{"price":{"min":1,"max":50},"tags":["a","b","c"],"in_stock":true},"page":{"size":20,"after":null}}}`

func init() {
	if os.Getenv(fakeCallerEnv) == "" {
		return
	}
	in := bufio.NewReader(os.Stdin)
	out := os.Stdout
	var key string
	for next := int64(1); ; next++ {
		line, err := in.ReadBytes('\n')
		if err != nil {
			os.Exit(0)
		}
		var m struct {
			ID     int64           `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil {
			os.Exit(3)
		}
		switch m.Method {
		case "init":
			var p initParams
			_ = json.Unmarshal(m.Params, &p)
			key = p.ChannelKey
			out.WriteString("\n" + key + `{"method":"ready","params":{"pyodide":"x","python":"y","snapshot":true,"boot_ms":1}}` + "\n")
		case "exec":
			out.WriteString(key + `{"id":` + strconv.FormatInt(next, 10) + `,"method":"call","params":` + callParams + "}\n")
			reply, err := in.ReadBytes('\n')
			if err != nil {
				os.Exit(0)
			}
			var r struct {
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal(reply, &r) != nil || len(r.Result) == 0 {
				os.Exit(4)
			}
			out.WriteString(key + `{"id":` + strconv.FormatInt(m.ID, 10) + `,"result":{"output":` + string(r.Result) + `,"stdout":"","stderr":"","error":null,"files":[]}}` + "\n")
		}
	}
}

// decodingHandler decodes a request's params, as the router does a tool
// call's, and answers with a small result.
// seen, when not nil, receives the id of the goroutine of each request.
type decodingHandler struct{ seen chan string }

func (h decodingHandler) ServeSandbox(_ context.Context, _ string, params json.RawMessage) (any, error) {
	if h.seen != nil {
		buf := make([]byte, 64)
		buf = buf[:runtime.Stack(buf, false)] // "goroutine 7 [running]:..."
		h.seen <- string(bytes.Fields(buf)[1])
	}
	var v map[string]any
	if err := json.Unmarshal(params, &v); err != nil {
		return nil, err
	}
	return json.RawMessage(`{"count":2,"items":["x","y"]}`), nil
}

// fakeCaller is a Supervisor of one stand-in runner that calls h.
func fakeCaller(tb testing.TB, h Handler) *Supervisor {
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	p, err := spawn(spawnSpec{
		args:    []string{exe},
		env:     []string{fakeCallerEnv + "=1"},
		log:     hclog.NewNullLogger(),
		handler: h,
		limits:  protocolLimits{maxMessage: DefaultMaxMessageBytes},
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.stop(time.Second) })
	if _, err := p.waitReady(tb.Context()); err != nil {
		tb.Fatal(err)
	}
	return &Supervisor{opts: Options{Grace: 5 * time.Second}, log: hclog.NewNullLogger(), proc: p}
}

// execCall runs one execution of the stand-in: one request to the host.
func execCall(tb testing.TB, s *Supervisor) {
	r, err := s.Exec(context.Background(), "call()", time.Minute)
	if err != nil || string(r.Output) != `{"count":2,"items":["x","y"]}` {
		tb.Fatalf("exec: %+v, %v", r, err)
	}
}

// TestServeReusesGoroutines: a request that follows a served one is served
// on the same goroutine, whose stack has grown, not on a new one.
func TestServeReusesGoroutines(t *testing.T) {
	t.Parallel()
	seen := make(chan string, 2)
	s := fakeCaller(t, decodingHandler{seen: seen})
	execCall(t, s)
	first := <-seen
	deadline := time.Now().Add(2 * time.Minute) // a deadline, not a measure
	for s.proc.workers.Idle() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("idle workers = %d, want 1", s.proc.workers.Idle())
		}
		time.Sleep(time.Millisecond)
	}
	execCall(t, s)
	if second := <-seen; second != first {
		t.Errorf("the second request was served on goroutine %s, the first on %s; want the same", second, first)
	}
}

// BenchmarkHostServe measures an execution that makes one request to the
// host, against a stand-in runner: the host's side of a tool call (the
// reader's dispatch, serving the request, the reply), with no Deno.
//
//	go test ./host/sandbox -run '^$' -bench HostServe -count 10
func BenchmarkHostServe(b *testing.B) {
	s := fakeCaller(b, decodingHandler{})
	for b.Loop() {
		execCall(b, s)
	}
}
