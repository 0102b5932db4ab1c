package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"
)

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
	s := fakeRunner(t, "call", decodingHandler{seen: seen})
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
	s := fakeRunner(b, "call", decodingHandler{})
	for b.Loop() {
		execCall(b, s)
	}
}
