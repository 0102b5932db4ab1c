package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

type addIn struct {
	A int `json:"a" jsonschema:"the first addend"`
	B int `json:"b" jsonschema:"the second addend"`
}

type readIn struct {
	Path  string `json:"path" jsonschema:"file to read"`
	Limit int    `json:"limit,omitempty" jsonschema:"bytes to read at most"`
	Opts  *struct {
		Depth int `json:"depth"`
	} `json:"opts,omitempty"`
}

type empty struct{}

// newTestBridge returns a bridge with tools that exercise the SDK's call
// path.
func newTestBridge() *sdk.Bridge {
	b := sdk.NewBridge(&sdk.Info{Name: "test", Version: "v1.2.3", Description: "a test bridge"},
		&sdk.Options{Logger: hclog.NewNullLogger()})
	b.AddNamespace(&sdk.NamespaceInfo{Path: "files", Description: "file tools"})
	sdk.AddTool(b, &sdk.Tool{Name: "add", Description: "add two numbers"},
		func(ctx context.Context, req *sdk.CallToolRequest, in addIn) (int, error) {
			return in.A + in.B, nil
		})
	sdk.AddTool(b, &sdk.Tool{Name: "files.read", Description: "read a file"},
		func(ctx context.Context, req *sdk.CallToolRequest, in readIn) (map[string]any, error) {
			return map[string]any{"path": in.Path, "limit": in.Limit}, nil
		})
	sdk.AddTool(b, &sdk.Tool{Name: "files.remote.list"},
		func(ctx context.Context, req *sdk.CallToolRequest, in empty) ([]string, error) {
			return []string{"a", "b"}, nil
		})
	sdk.AddTool(b, &sdk.Tool{Name: "fail"},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct {
			Code string `json:"code"`
		}) (any, error) {
			if in.Code == "" {
				return nil, errors.New("plain failure")
			}
			return nil, fmt.Errorf("wrapped: %w", sdk.Errorf(sdk.ErrorCode(in.Code), "typed failure"))
		})
	sdk.AddTool(b, &sdk.Tool{Name: "boom"},
		func(ctx context.Context, req *sdk.CallToolRequest, in empty) (any, error) {
			panic("kaboom")
		})
	sdk.AddTool(b, &sdk.Tool{Name: "wait"},
		func(ctx context.Context, req *sdk.CallToolRequest, in empty) (any, error) {
			req.Log("waiting")
			<-ctx.Done()
			return nil, ctx.Err()
		})
	sdk.AddTool(b, &sdk.Tool{Name: "bytes"},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct {
			Data []byte          `json:"data"`
			Raw  json.RawMessage `json:"raw"`
		}) (json.RawMessage, error) {
			return json.Marshal(map[string]any{"data": string(in.Data), "raw": in.Raw})
		})
	b.AddTool(&sdk.Tool{
		Name:        "raw",
		Description: "echoes its arguments",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"z":{},"y":{}}}`),
	}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: req.Arguments}, nil
	})
	return b
}

// servers returns the ways to reach a bridge: directly, and over gRPC.
func servers() map[string]func(testing.TB, *sdk.Bridge) sdk.BridgeServer {
	return map[string]func(testing.TB, *sdk.Bridge) sdk.BridgeServer{
		"direct": func(_ testing.TB, b *sdk.Bridge) sdk.BridgeServer { return b },
		"grpc": func(t testing.TB, b *sdk.Bridge) sdk.BridgeServer {
			return sdktest.NewHarness(t, b)
		},
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	for name, serve := range servers() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d, err := serve(t, newTestBridge()).Describe(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if d.Name != "test" || d.Version != "v1.2.3" || d.Description != "a test bridge" {
				t.Errorf("identity = %q %q %q", d.Name, d.Version, d.Description)
			}
			if diff := cmp.Diff([]sdk.NamespaceInfo{{Path: "files", Description: "file tools"}}, d.Namespaces); diff != "" {
				t.Errorf("namespaces (-want +got):\n%s", diff)
			}
			var names []string
			tools := map[string]sdk.ToolInfo{}
			for _, tool := range d.Tools {
				names = append(names, tool.Name)
				tools[tool.Name] = tool
			}
			if diff := cmp.Diff([]string{"add", "files.read", "files.remote.list", "fail", "boom", "wait", "bytes", "raw"}, names); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}

			read := tools["files.read"]
			if read.Description != "read a file" {
				t.Errorf("description = %q", read.Description)
			}
			if diff := cmp.Diff([]string{"path", "limit", "opts"}, read.Params); diff != "" {
				t.Errorf("params (-want +got):\n%s", diff)
			}
			var schema struct {
				Type       string `json:"type"`
				Required   []string
				Properties map[string]struct {
					Type        any    `json:"type"`
					Description string `json:"description"`
				}
				AdditionalProperties any `json:"additionalProperties"`
			}
			if err := json.Unmarshal(read.InputSchema, &schema); err != nil {
				t.Fatal(err)
			}
			if schema.Type != "object" || schema.Properties["path"].Description != "file to read" ||
				schema.Properties["limit"].Type != "integer" || schema.AdditionalProperties != false {
				t.Errorf("input schema = %s", read.InputSchema)
			}
			if diff := cmp.Diff([]string{"path"}, schema.Required); diff != "" {
				t.Errorf("required (-want +got):\n%s", diff)
			}
			// Properties are in field order in the schema's JSON too.
			if i, j := strings.Index(string(read.InputSchema), `"path"`), strings.Index(string(read.InputSchema), `"limit"`); i > j {
				t.Errorf("properties out of order: %s", read.InputSchema)
			}
			if got := string(tools["add"].OutputSchema); got != `{"type":"integer"}` {
				t.Errorf("output schema of add = %s", got)
			}
			if got := string(tools["bytes"].InputSchema); got != `{"type":"object","properties":{"data":{"type":["null","string"],"contentEncoding":"base64"},"raw":true},"required":["data","raw"],"additionalProperties":false}` {
				t.Errorf("input schema of bytes = %s", got)
			}
			if got := string(tools["bytes"].OutputSchema); got != `true` {
				t.Errorf("output schema of bytes = %s", got)
			}
			if diff := cmp.Diff([]string{"z", "y"}, tools["raw"].Params); diff != "" {
				t.Errorf("params of raw tool (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCallTool(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		name    string
		args    string
		want    string        // JSON content, when the call succeeds
		code    sdk.ErrorCode // when it fails
		message string        // substring of the failure's message
		// A malformed request is no call: CallTool returns the failure as
		// its error (a *sdk.ToolError), not as a result.
		malformed bool
	}{
		"typed":               {name: "add", args: `{"a":1,"b":2}`, want: `3`},
		"nested namespace":    {name: "files.remote.list", args: `{}`, want: `["a","b"]`},
		"optional omitted":    {name: "files.read", args: `{"path":"x"}`, want: `{"limit":0,"path":"x"}`},
		"no arguments":        {name: "files.remote.list", args: ``, want: `["a","b"]`},
		"raw":                 {name: "raw", args: `{"z":1}`, want: `{"z":1}`},
		"unknown tool":        {name: "nope", args: `{}`, code: sdk.CodeNotFound, message: `tool "nope" not found`},
		"wrong type":          {name: "add", args: `{"a":"one","b":2}`, code: sdk.CodeInvalidArgument, message: `argument "a": expected integer, got string`},
		"wrong nested type":   {name: "files.read", args: `{"path":"x","opts":{"depth":"deep"}}`, code: sdk.CodeInvalidArgument, message: `argument "opts": field "depth": expected integer, got string`},
		"missing required":    {name: "add", args: `{"a":1}`, code: sdk.CodeInvalidArgument, message: `missing required argument "b"`},
		"unknown argument":    {name: "add", args: `{"a":1,"b":2,"c":3}`, code: sdk.CodeInvalidArgument, message: `unknown argument "c" (parameters: a, b)`},
		"null for a string":   {name: "files.read", args: `{"path":null}`, code: sdk.CodeInvalidArgument, message: `argument "path": expected string, got null`},
		"nested null":         {name: "files.read", args: `{"path":"x","opts":{"depth":null}}`, code: sdk.CodeInvalidArgument, message: `argument "opts": field "depth": expected integer, got null`},
		"not an object":       {name: "add", args: `[1,2]`, code: sdk.CodeInvalidArgument, message: `arguments must be a JSON object, not an array`, malformed: true},
		"not JSON":            {name: "add", args: `{`, code: sdk.CodeInvalidArgument, message: `not valid JSON`, malformed: true},
		"plain error":         {name: "fail", args: `{"code":""}`, code: sdk.CodeInternal, message: "plain failure"},
		"typed error":         {name: "fail", args: `{"code":"permission"}`, code: sdk.CodePermission, message: "wrapped: typed failure"},
		"panic":               {name: "boom", args: `{}`, code: sdk.CodeInternal, message: `panic: kaboom`},
		"fractional integer":  {name: "add", args: `{"a":1.5,"b":2}`, code: sdk.CodeInvalidArgument, message: `argument "a"`},
		"extra on raw is ok":  {name: "raw", args: `{"q":1}`, want: `{"q":1}`},
		"bytes and raw JSON":  {name: "bytes", args: `{"data":"aGk=","raw":[1,{"x":null}]}`, want: `{"data":"hi","raw":[1,{"x":null}]}`},
		"bytes not base64":    {name: "bytes", args: `{"data":"!!","raw":1}`, code: sdk.CodeInvalidArgument, message: `argument "data"`},
		"typed code survives": {name: "fail", args: `{"code":"timeout"}`, code: sdk.CodeTimeout, message: "typed failure"},
	}
	for server, serve := range servers() {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			b := serve(t, newTestBridge())
			for name, tc := range tests {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: tc.name, Arguments: json.RawMessage(tc.args)})
					if tc.malformed {
						var te *sdk.ToolError
						if !errors.As(err, &te) || te.Code != tc.code || !strings.Contains(te.Message, tc.message) {
							t.Errorf("CallTool = %+v, %v; want a %s error containing %q", res, err, tc.code, tc.message)
						}
						return
					}
					if err != nil {
						t.Fatalf("CallTool: %v", err)
					}
					if tc.code == "" {
						if res.IsError {
							t.Fatalf("failed: %+v", res.Error)
						}
						if got := string(res.Content); got != tc.want {
							t.Errorf("content = %s, want %s", got, tc.want)
						}
						return
					}
					if !res.IsError || res.Error == nil {
						t.Fatalf("succeeded with %s, want %s failure", res.Content, tc.code)
					}
					if res.Error.Code != tc.code || !strings.Contains(res.Error.Message, tc.message) {
						t.Errorf("error = %s %q, want %s containing %q", res.Error.Code, res.Error.Message, tc.code, tc.message)
					}
				})
			}
		})
	}
}

func TestPanicLeavesBridgeUp(t *testing.T) {
	t.Parallel()
	b := sdktest.NewHarness(t, newTestBridge())
	for range 3 {
		res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "boom"})
		if err != nil || !res.IsError || res.Error.Code != sdk.CodeInternal {
			t.Fatalf("boom = %+v, %v", res, err)
		}
	}
	res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "add", Arguments: []byte(`{"a":2,"b":2}`)})
	if err != nil || string(res.Content) != "4" {
		t.Fatalf("add after panics = %+v, %v", res, err)
	}
}

// TestCallStream checks what travels on a call's stream besides arguments
// and result: events out, messages in (in order), and cancellation.
func TestCallStream(t *testing.T) {
	t.Parallel()
	b := sdk.NewBridge(&sdk.Info{Name: "stream"}, nil)
	sdk.AddTool(b, &sdk.Tool{Name: "collect"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct {
		N int `json:"n"`
	}) ([]string, error) {
		var got []string
		for i := range in.N {
			req.Progress(float64(i), float64(in.N), "waiting")
			select {
			case msg := <-req.Messages():
				got = append(got, string(msg))
				req.Log("got " + string(msg))
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return got, nil
	})

	for server, serve := range servers() {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			c := serve(t, b)

			t.Run("messages in order, events out", func(t *testing.T) {
				t.Parallel()
				const n = 100
				inbox := make(chan json.RawMessage, n)
				for i := range n {
					inbox <- json.RawMessage(fmt.Sprint(i))
				}
				close(inbox)
				rec := &sdktest.Recorder{}
				res, err := c.CallTool(t.Context(), &sdk.CallToolRequest{
					Name: "collect", Arguments: []byte(fmt.Sprintf(`{"n":%d}`, n)), Events: rec, Inbox: inbox,
				})
				if err != nil || res.IsError {
					t.Fatalf("collect = %+v, %v", res, err)
				}
				var got []string
				if err := json.Unmarshal(res.Content, &got); err != nil {
					t.Fatal(err)
				}
				var want, wantLines []string
				for i := range n {
					want = append(want, fmt.Sprint(i))
					wantLines = append(wantLines, fmt.Sprintf("got %d", i))
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("messages (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(wantLines, rec.Lines()); diff != "" {
					t.Errorf("log (-want +got):\n%s", diff)
				}
				if p := rec.ProgressReports(); len(p) != n || p[n-1] != (sdktest.Progress{Progress: n - 1, Total: n, Message: "waiting"}) {
					t.Errorf("progress = %v", p)
				}
			})

			t.Run("cancel", func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithCancel(t.Context())
				rec := &sdktest.Recorder{}
				// The tool is blocked on its inbox until the cancel.
				done := make(chan struct{})
				var res *sdk.CallToolResult
				var err error
				go func() {
					defer close(done)
					res, err = c.CallTool(ctx, &sdk.CallToolRequest{Name: "collect", Arguments: []byte(`{"n":1}`), Events: rec})
				}()
				for len(rec.ProgressReports()) == 0 {
					<-rec.Changed()
				}
				cancel()
				<-done
				if err != nil || !res.IsError || res.Error.Code != sdk.CodeCancelled {
					t.Fatalf("cancelled call = %+v, %v", res, err)
				}
			})
		})
	}
}

// fakeHost is a HostClient with a func field.
type fakeHost struct {
	callTool func(ctx context.Context, path string, args json.RawMessage) (*sdk.CallToolResult, error)
}

func (h *fakeHost) CallTool(ctx context.Context, path string, args json.RawMessage) (*sdk.CallToolResult, error) {
	return h.callTool(ctx, path, args)
}

func TestConfigureAndHostCallback(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var configs []string
	var b *sdk.Bridge
	b = sdk.NewBridge(&sdk.Info{Name: "cfg"}, &sdk.Options{
		Configure: func(ctx context.Context, req *sdk.ConfigureRequest) error {
			mu.Lock()
			configs = append(configs, string(req.Config))
			mu.Unlock()
			var cfg struct {
				Prefix string `json:"prefix"`
			}
			if err := json.Unmarshal(req.Config, &cfg); err != nil {
				return fmt.Errorf("decoding config: %w", err)
			}
			if cfg.Prefix == "" {
				return sdk.Errorf(sdk.CodeInvalidArgument, "prefix is required")
			}
			// Tools can depend on the configuration.
			sdk.AddTool(b, &sdk.Tool{Name: cfg.Prefix + ".relay"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct {
				Path string `json:"path"`
			}) (json.RawMessage, error) {
				if b.Host() == nil {
					return nil, errors.New("no host")
				}
				res, err := b.Host().CallTool(ctx, in.Path, json.RawMessage(`{"x":1}`))
				if err != nil {
					return nil, err
				}
				return res.Content, nil
			})
			return nil
		},
	})
	host := &fakeHost{callTool: func(ctx context.Context, path string, args json.RawMessage) (*sdk.CallToolResult, error) {
		if path == "denied.tool" {
			return nil, sdk.Errorf(sdk.CodePermission, "refused by hook")
		}
		return &sdk.CallToolResult{Content: json.RawMessage(fmt.Sprintf(`{"path":%q,"args":%s}`, path, args))}, nil
	}}
	for server, serve := range servers() {
		t.Run(server, func(t *testing.T) {
			c := serve(t, b)
			err := c.Configure(t.Context(), &sdk.ConfigureRequest{Config: json.RawMessage(`{}`)})
			var te *sdk.ToolError
			if !errors.As(err, &te) || te.Code != sdk.CodeInvalidArgument || te.Message != "prefix is required" {
				t.Fatalf("Configure({}) = %v, want invalid_argument: prefix is required", err)
			}
			if err := c.Configure(t.Context(), &sdk.ConfigureRequest{Config: json.RawMessage(`{"prefix":"p"}`), Host: host}); err != nil {
				t.Fatal(err)
			}
			d, err := c.Describe(t.Context())
			if err != nil || len(d.Tools) != 1 || d.Tools[0].Name != "p.relay" {
				t.Fatalf("Describe = %+v, %v", d, err)
			}
			res, err := c.CallTool(t.Context(), &sdk.CallToolRequest{Name: "p.relay", Arguments: []byte(`{"path":"other.tool"}`)})
			if err != nil || res.IsError || string(res.Content) != `{"path":"other.tool","args":{"x":1}}` {
				t.Fatalf("relay = %+v, %v", res, err)
			}
			res, err = c.CallTool(t.Context(), &sdk.CallToolRequest{Name: "p.relay", Arguments: []byte(`{"path":"denied.tool"}`)})
			if err != nil || !res.IsError || res.Error.Code != sdk.CodePermission || res.Error.Message != "refused by hook" {
				t.Fatalf("relay to a refused tool = %+v (%+v), %v", res, res.Error, err)
			}
		})
	}
}

func TestShutdown(t *testing.T) {
	t.Parallel()
	called := make(chan struct{}, 1)
	b := sdk.NewBridge(&sdk.Info{Name: "s"}, &sdk.Options{Shutdown: func(ctx context.Context) error {
		called <- struct{}{}
		return nil
	}})
	c := sdktest.NewHarness(t, b)
	if err := c.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-called:
	default:
		t.Fatal("Options.Shutdown was not called")
	}
}

func TestAddToolPanics(t *testing.T) {
	t.Parallel()
	noop := func(context.Context, *sdk.CallToolRequest, empty) (any, error) { return nil, nil }
	tests := map[string]func(b *sdk.Bridge){
		"empty segment": func(b *sdk.Bridge) { sdk.AddTool(b, &sdk.Tool{Name: "a..b"}, noop) },
		"space":         func(b *sdk.Bridge) { sdk.AddTool(b, &sdk.Tool{Name: "a b"}, noop) },
		"tool under a tool": func(b *sdk.Bridge) {
			sdk.AddTool(b, &sdk.Tool{Name: "t"}, noop)
			sdk.AddTool(b, &sdk.Tool{Name: "t.x"}, noop)
		},
		"tool over a tool": func(b *sdk.Bridge) {
			sdk.AddTool(b, &sdk.Tool{Name: "t.x"}, noop)
			sdk.AddTool(b, &sdk.Tool{Name: "t"}, noop)
		},
		"tool is a namespace": func(b *sdk.Bridge) {
			b.AddNamespace(&sdk.NamespaceInfo{Path: "n"})
			sdk.AddTool(b, &sdk.Tool{Name: "n"}, noop)
		},
		"namespace is a tool": func(b *sdk.Bridge) {
			sdk.AddTool(b, &sdk.Tool{Name: "n"}, noop)
			b.AddNamespace(&sdk.NamespaceInfo{Path: "n"})
		},
		"scalar input": func(b *sdk.Bridge) {
			sdk.AddTool(b, &sdk.Tool{Name: "s"}, func(context.Context, *sdk.CallToolRequest, string) (any, error) { return nil, nil })
		},
		"unsupported output": func(b *sdk.Bridge) {
			sdk.AddTool(b, &sdk.Tool{Name: "s"}, func(context.Context, *sdk.CallToolRequest, empty) (func(), error) { return nil, nil })
		},
		"raw schema not an object": func(b *sdk.Bridge) {
			b.AddTool(&sdk.Tool{Name: "r", InputSchema: json.RawMessage(`[]`)}, nil)
		},
	}
	for name, add := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			add(sdk.NewBridge(&sdk.Info{Name: "p"}, nil))
		})
	}
}

// Log lines and error messages with invalid UTF-8 (raw bytes from a
// command's output) reach the host with replacement characters; protobuf
// would refuse them and fail the whole call otherwise.
func TestInvalidUTF8(t *testing.T) {
	t.Parallel()
	b := sdk.NewBridge(&sdk.Info{Name: "bytes"}, nil)
	sdk.AddTool(b, &sdk.Tool{Name: "raw"}, func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (string, error) {
		req.Log("line \xff\xfe end")
		req.Progress(1, 2, "half \xff")
		return "", sdk.Errorf(sdk.CodeInternal, "failed: \xc3\x28")
	})
	h := sdktest.NewHarness(t, b)
	rec := &sdktest.Recorder{}
	res, err := h.CallTool(t.Context(), &sdk.CallToolRequest{Name: "raw", Arguments: []byte(`{}`), Events: rec})
	if err != nil {
		t.Fatalf("call failed: %v", err)
	}
	if !res.IsError || res.Error.Message != "failed: \uFFFD(" {
		t.Errorf("error = %+v", res.Error)
	}
	if lines := rec.Lines(); len(lines) != 1 || lines[0] != "line \uFFFD end" {
		t.Errorf("log = %q", lines)
	}
}
