package inproc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/host/inproc"
	"github.com/parselbox/parselbox/sdk"
)

// geo exercises argument decoding and results.
type geo struct {
	calls atomic.Int64
}

type Route struct {
	Name   string         `json:"name"`
	Points []Point        `json:"points"`
	Start  *Point         `json:"start,omitempty"`
	Meta   map[string]int `json:"meta,omitempty"`
	Stops  map[string]Point
}

type RouteSummary struct {
	Name   string  `json:"name"`
	Length float64 `json:"length"`
	Start  *Point  `json:"start"`
	Stops  int     `json:"stops"`
}

func (g *geo) Summarize(r Route) RouteSummary {
	g.calls.Add(1)
	var l float64
	for i := 1; i < len(r.Points); i++ {
		l += abs(r.Points[i].X-r.Points[i-1].X) + abs(r.Points[i].Y-r.Points[i-1].Y)
	}
	return RouteSummary{Name: r.Name, Length: l, Start: r.Start, Stops: len(r.Stops)}
}

func (g *geo) Shift(p *Point, dx float64) Point { return Point{p.X + dx, p.Y} }
func (g *geo) Scale(k int8, xs ...float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(k) * x
	}
	return out
}
func (g *geo) Nothing()              {}
func (g *geo) NilPoint() *Point      { return nil }
func (g *geo) HTML() string          { return "<b>&</b>" }
func (g *geo) Bytes() []byte         { return []byte("hi") }
func (g *geo) Fail(msg string) error { return errors.New(msg) }
func (g *geo) Denied() (int, error)  { return 0, sdk.Errorf(sdk.CodePermission, "no entry") }
func (g *geo) Wrapped() error {
	return fmt.Errorf("opening: %w", sdk.Errorf(sdk.CodeNotFound, "no such file"))
}
func (g *geo) Late() error             { return fmt.Errorf("waiting: %w", context.DeadlineExceeded) }
func (g *geo) Boom()                   { panic("boom") }
func (g *geo) BoomErr() int            { panic(errors.New("bad state")) }
func (g *geo) Nil() int                { var m map[string]int; m["x"] = 1; return 0 }
func (g *geo) When(t time.Time) string { return t.UTC().Format(time.DateOnly) }
func (g *geo) Count() int64            { return g.calls.Load() }
func (g *geo) Unencodable() any        { return func() {} }
func (g *geo) ParamNames() map[string][]string {
	return map[string][]string{"Shift": {"point", "dx"}, "Scale": {"k", "xs"}, "Fail": {"message"}, "When": {"when"}}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestCallTool(t *testing.T) {
	t.Parallel()
	b, err := inproc.New("geo", &geo{})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		tool    string
		args    string
		want    string // Content, when the call succeeds
		code    sdk.ErrorCode
		message string
	}{
		"struct with nested structs and pointers": {
			tool: "summarize",
			args: `{"name":"loop","points":[{"x":0,"y":0},{"x":3,"y":4}],"start":{"x":1,"y":2},"Stops":{"a":{"x":1,"y":1}}}`,
			want: `{"name":"loop","length":7,"start":{"x":1,"y":2},"stops":1}`,
		},
		"optional pointer and omitempty left out": {
			tool: "summarize",
			args: `{"name":"x","points":null,"Stops":{}}`,
			want: `{"name":"x","length":0,"start":null,"stops":0}`,
		},
		"pointer plain parameter": {
			tool: "shift",
			args: `{"point":{"x":1,"y":2},"dx":0.5}`,
			want: `{"x":1.5,"y":2}`,
		},
		"variadic": {
			tool: "scale",
			args: `{"k":2,"xs":[1,2.5]}`,
			want: `[2,5]`,
		},
		"variadic left out": {
			tool: "scale",
			args: `{"k":2}`,
			want: `[]`,
		},
		"no result":           {tool: "nothing", want: `null`},
		"empty arguments":     {tool: "nothing", args: `{}`, want: `null`},
		"null arguments":      {tool: "nothing", args: `null`, want: `null`},
		"nil pointer result":  {tool: "nil_point", want: `null`},
		"html is not escaped": {tool: "html", want: `"<b>&</b>"`},
		"bytes are base64":    {tool: "bytes", want: `"aGk="`},
		"decoding time": {
			tool: "when",
			args: `{"when":"2024-02-29T23:00:00-02:00"}`,
			want: `"2024-03-01"`,
		},

		"wrong type of a plain argument": {
			tool:    "shift",
			args:    `{"point":{"x":1,"y":2},"dx":"far"}`,
			code:    sdk.CodeInvalidArgument,
			message: `argument "dx": expected number, got string`,
		},
		"wrong type of a nested field": {
			tool:    "shift",
			args:    `{"point":{"x":"1","y":2},"dx":1}`,
			code:    sdk.CodeInvalidArgument,
			message: `argument "point": field "x": expected number, got string`,
		},
		"wrong type in a parameter object": {
			tool:    "summarize",
			args:    `{"name":"r","points":[{"x":0,"y":0},{"x":true,"y":0}],"Stops":{}}`,
			code:    sdk.CodeInvalidArgument,
			message: `argument "points": field "x": expected number, got boolean`,
		},
		"object for a string": {
			tool:    "summarize",
			args:    `{"name":{"first":"r"},"points":[],"Stops":{}}`,
			code:    sdk.CodeInvalidArgument,
			message: `argument "name": expected string, got object`,
		},
		"fraction for an integer": {
			tool:    "scale",
			args:    `{"k":1.5}`,
			code:    sdk.CodeInvalidArgument,
			message: `argument "k": expected integer, got number 1.5`,
		},
		"integer out of range": {
			tool:    "scale",
			args:    `{"k":300}`,
			code:    sdk.CodeInvalidArgument,
			message: `argument "k": expected integer, got number 300`,
		},
		"bad time": {
			tool:    "when",
			args:    `{"when":"tomorrow"}`,
			code:    sdk.CodeInvalidArgument,
			message: `argument "when": parsing time "tomorrow" as "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow" as "2006"`,
		},
		"missing argument": {
			tool:    "shift",
			args:    `{"dx":1}`,
			code:    sdk.CodeInvalidArgument,
			message: `missing required argument "point"`,
		},
		"missing arguments of a parameter object": {
			tool:    "summarize",
			args:    `{"start":{"x":1,"y":1}}`,
			code:    sdk.CodeInvalidArgument,
			message: `missing required arguments "name", "points", "Stops"`,
		},
		"unknown argument": {
			tool:    "shift",
			args:    `{"point":{"x":1,"y":2},"dx":1,"dy":2}`,
			code:    sdk.CodeInvalidArgument,
			message: `unknown argument "dy" (parameters: point, dx)`,
		},
		"unknown and missing": {
			tool:    "shift",
			args:    `{"pointt":{"x":1,"y":2},"DX":1}`,
			code:    sdk.CodeInvalidArgument,
			message: `unknown arguments "DX", "pointt"; missing required arguments "point", "dx" (parameters: point, dx)`,
		},
		"argument for a tool without parameters": {
			tool:    "nothing",
			args:    `{"x":1}`,
			code:    sdk.CodeInvalidArgument,
			message: `unknown argument "x" (takes no arguments)`,
		},
		"unknown nested field": {
			tool:    "shift",
			args:    `{"point":{"x":1,"y":2,"z":3},"dx":1}`,
			code:    sdk.CodeInvalidArgument,
			message: `argument "point": unknown field "z"`,
		},
		"missing nested field": {
			tool:    "shift",
			args:    `{"point":{"x":1},"dx":1}`,
			code:    sdk.CodeInvalidArgument,
			message: `argument "point": missing required field "y"`,
		},
		"missing field in a slice element": {
			tool:    "summarize",
			args:    `{"name":"r","points":[{"x":0,"y":0},{"x":1}],"Stops":{}}`,
			code:    sdk.CodeInvalidArgument,
			message: `argument "points": missing required field "[1].y"`,
		},
		"missing field in a map value": {
			tool:    "summarize",
			args:    `{"name":"r","points":[],"Stops":{"home":{"y":1}}}`,
			code:    sdk.CodeInvalidArgument,
			message: `argument "Stops": missing required field "[\"home\"].x"`,
		},

		"null for a number": {
			tool:    "shift",
			args:    `{"point":{"x":1,"y":2},"dx":null}`,
			code:    sdk.CodeInvalidArgument,
			message: `argument "dx": expected number, got null`,
		},
		"null for a struct": {
			tool:    "summarize",
			args:    `{"name":"r","points":[],"Stops":{"home":null}}`,
			code:    sdk.CodeInvalidArgument,
			message: `argument "Stops": field "[\"home\"]": expected object, got null`,
		},
		"null for a pointer reaches the method": {
			tool:    "shift",
			args:    `{"point":null,"dx":1}`,
			code:    sdk.CodeInternal,
			message: `panic: runtime error: invalid memory address or nil pointer dereference`,
		},
		"null for a nested field": {
			tool:    "summarize",
			args:    `{"name":"r","points":[{"x":0,"y":null}],"Stops":{}}`,
			code:    sdk.CodeInvalidArgument,
			message: `argument "points": field "[0].y": expected number, got null`,
		},
		"null for a nullable field": {
			tool: "summarize",
			args: `{"name":"r","points":null,"start":null,"meta":null,"Stops":null}`,
			want: `{"name":"r","length":0,"start":null,"stops":0}`,
		},

		"error": {
			tool:    "fail",
			args:    `{"message":"Kaboom!"}`,
			code:    sdk.CodeInternal,
			message: "Kaboom!",
		},
		"tool error keeps its code": {tool: "denied", code: sdk.CodePermission, message: "no entry"},
		"wrapped tool error":        {tool: "wrapped", code: sdk.CodeNotFound, message: "opening: no such file"},
		"deadline":                  {tool: "late", code: sdk.CodeTimeout, message: "waiting: context deadline exceeded"},
		"panic":                     {tool: "boom", code: sdk.CodeInternal, message: "panic: boom"},
		"panic with an error":       {tool: "boom_err", code: sdk.CodeInternal, message: "panic: bad state"},
		"runtime panic":             {tool: "nil", code: sdk.CodeInternal, message: "panic: assignment to entry in nil map"},
		"unencodable result": {
			tool:    "unencodable",
			code:    sdk.CodeInternal,
			message: "encoding result: json: unsupported type: func()",
		},

		"unknown tool": {
			tool:    "teleport",
			code:    sdk.CodeNotFound,
			message: `tool "geo.teleport" not found`,
		},
		"Go name": {
			tool:    "NilPoint",
			code:    sdk.CodeNotFound,
			message: `tool "geo.NilPoint" not found (did you mean "geo.nil_point"?)`,
		},
		"protocol method": {
			tool:    "param_names",
			code:    sdk.CodeNotFound,
			message: `tool "geo.param_names" not found`,
		},
		"the namespace itself": {
			tool:    "",
			code:    sdk.CodeNotFound,
			message: `tool "geo" not found`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			want := &sdk.CallToolResult{Content: json.RawMessage(tt.want)}
			if tt.code != "" {
				want = &sdk.CallToolResult{
					Content: json.RawMessage("null"),
					IsError: true,
					Error:   &sdk.ToolError{Code: tt.code, Message: tt.message},
				}
			}
			if diff := cmp.Diff(want, got, cmp.Transformer("string", func(m json.RawMessage) string { return string(m) })); diff != "" {
				t.Errorf("CallTool(%s, %s) (-want +got):\n%s", tt.tool, tt.args, diff)
			}
		})
	}
}

func TestCallToolMalformed(t *testing.T) {
	t.Parallel()
	b, err := inproc.New("geo", &geo{})
	if err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string]string{
		"array":   `[1, 2]`,
		"invalid": `{"x":`,
		"string":  `"x"`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "nothing", Arguments: json.RawMessage(args)})
			if err == nil {
				t.Errorf("CallTool(%s) = %+v, want an error", args, res)
			}
		})
	}
	if _, err := b.CallTool(t.Context(), nil); err == nil {
		t.Error("CallTool(nil) succeeded")
	}
}

// waiter has methods that take a context.
type waiter struct {
	started chan struct{}
}

type ctxKey struct{}

func (w *waiter) Wait(ctx context.Context) error {
	close(w.started)
	<-ctx.Done()
	return ctx.Err()
}

func (w *waiter) Value(ctx context.Context) string {
	s, _ := ctx.Value(ctxKey{}).(string)
	return s
}

func (w *waiter) Build(ctx context.Context, target string) (string, error) {
	req := inproc.Request(ctx)
	req.Log("building " + target)
	req.Progress(1, 2, "half")
	req.Log("done")
	return req.TaskID, nil
}

func (w *waiter) Direct(ctx context.Context, req *sdk.CallToolRequest, in struct {
	Line string `json:"line"`
}) error {
	if inproc.Request(ctx) != req {
		return errors.New("the context carries another request")
	}
	req.Log(in.Line)
	return nil
}

func (w *waiter) Echo(ctx context.Context) ([]string, error) {
	var got []string
	for {
		select {
		case m, ok := <-inproc.Request(ctx).Messages():
			if !ok {
				return got, nil
			}
			got = append(got, string(m))
		case <-ctx.Done():
			return got, ctx.Err()
		}
	}
}

func TestCallToolContextCancel(t *testing.T) {
	t.Parallel()
	w := &waiter{started: make(chan struct{})}
	b, err := inproc.New("w", w)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-w.started
		cancel()
	}()
	res, err := b.CallTool(ctx, &sdk.CallToolRequest{Name: "wait"})
	if err != nil {
		t.Fatal(err)
	}
	want := &sdk.ToolError{Code: sdk.CodeCancelled, Message: "context canceled"}
	if diff := cmp.Diff(want, res.Error); diff != "" {
		t.Errorf("Error (-want +got):\n%s", diff)
	}

	// A call on a context that is already done does not start.
	res, err = b.CallTool(ctx, &sdk.CallToolRequest{Name: "value"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, res.Error); diff != "" {
		t.Errorf("Error after cancel (-want +got):\n%s", diff)
	}
}

func TestCallToolContextValues(t *testing.T) {
	t.Parallel()
	b, err := inproc.New("w", &waiter{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.WithValue(t.Context(), ctxKey{}, "from the host")
	res, err := b.CallTool(ctx, &sdk.CallToolRequest{Name: "value"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Content), `"from the host"`; got != want {
		t.Errorf("Content = %s, want %s", got, want)
	}
}

// sink records what a call reports.
type sink struct {
	mu     sync.Mutex
	events []string
}

func (s *sink) Log(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, "log: "+line)
}

func (s *sink) Progress(progress, total float64, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, fmt.Sprintf("progress: %g/%g %s", progress, total, message))
}

func TestRequestEvents(t *testing.T) {
	t.Parallel()
	b, err := inproc.New("w", &waiter{})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		tool    string
		args    string
		want    string
		events  []string
		noEvent bool
	}{
		"through the context": {
			tool:   "build",
			args:   `{"arg0":"docs"}`,
			want:   `"t1"`,
			events: []string{"log: building docs", "progress: 1/2 half", "log: done"},
		},
		"as a parameter": {
			tool:   "direct",
			args:   `{"line":"hello"}`,
			want:   `null`,
			events: []string{"log: hello"},
		},
		"nobody listens": {
			tool:    "build",
			args:    `{"arg0":"docs"}`,
			want:    `"t1"`,
			noEvent: true,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := &sink{}
			req := &sdk.CallToolRequest{Name: tt.tool, Arguments: json.RawMessage(tt.args), TaskID: "t1"}
			if !tt.noEvent {
				req.Events = s
			}
			res, err := b.CallTool(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("CallTool: %s", res.Error.Message)
			}
			if got := string(res.Content); got != tt.want {
				t.Errorf("Content = %s, want %s", got, tt.want)
			}
			if diff := cmp.Diff(tt.events, s.events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestMessages(t *testing.T) {
	t.Parallel()
	b, err := inproc.New("w", &waiter{})
	if err != nil {
		t.Fatal(err)
	}
	inbox := make(chan json.RawMessage, 2)
	inbox <- json.RawMessage(`"a"`)
	inbox <- json.RawMessage(`{"b":1}`)
	close(inbox)
	res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "echo", Inbox: inbox})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Content), `["\"a\"","{\"b\":1}"]`; got != want {
		t.Errorf("Content = %s, want %s", got, want)
	}
}

func TestRequestOutsideCall(t *testing.T) {
	t.Parallel()
	if req := inproc.Request(t.Context()); req != nil {
		t.Errorf("Request = %v, want nil", req)
	}
	inproc.Request(t.Context()).Log("no-op") // must not panic

	// WithRequest lets a method be tested on its own.
	s := &sink{}
	ctx := inproc.WithRequest(t.Context(), &sdk.CallToolRequest{Events: s})
	if _, err := (&waiter{}).Build(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if len(s.events) != 3 {
		t.Errorf("events = %q, want 3", s.events)
	}
}

func TestCallToolConcurrent(t *testing.T) {
	t.Parallel()
	g := &geo{}
	b, err := inproc.New("geo", g)
	if err != nil {
		t.Fatal(err)
	}
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := range n {
		wg.Go(func() {
			args := fmt.Sprintf(`{"name":"r%d","points":[{"x":0,"y":0},{"x":%d,"y":0}],"Stops":{}}`, i, i)
			res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "summarize", Arguments: json.RawMessage(args)})
			switch {
			case err != nil:
				errs <- err.Error()
			case res.IsError:
				errs <- res.Error.Message
			default:
				want := fmt.Sprintf(`{"name":"r%d","length":%d,"start":null,"stops":0}`, i, i)
				if string(res.Content) != want {
					errs <- fmt.Sprintf("got %s, want %s", res.Content, want)
				}
			}
			if _, err := b.Describe(t.Context()); err != nil {
				errs <- err.Error()
			}
		})
	}
	wg.Wait()
	close(errs)
	var all []string
	for e := range errs {
		all = append(all, e)
	}
	if len(all) > 0 {
		t.Fatalf("%d calls failed:\n%s", len(all), strings.Join(all, "\n"))
	}
	if got := g.calls.Load(); got != n {
		t.Errorf("calls = %d, want %d", got, n)
	}
}

// Methods run concurrently: one call blocking does not hold up another.
func TestCallToolNoGlobalLock(t *testing.T) {
	t.Parallel()
	w := &waiter{started: make(chan struct{})}
	b, err := inproc.New("w", w)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.CallTool(ctx, &sdk.CallToolRequest{Name: "wait"})
	}()
	<-w.started
	res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "value"})
	if err != nil || res.IsError {
		t.Errorf("CallTool while another runs = %+v, %v", res, err)
	}
	cancel()
	<-done
}
