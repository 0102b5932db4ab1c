package sdk_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/parselbox/parselbox/sdk"
)

type greetIn struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

func greet(ctx context.Context, req *sdk.CallToolRequest, in greetIn) (string, error) {
	return "hello, " + in.Name, nil
}

// A bridge declares typed tools; in main it would call sdk.Serve(b). Here it
// is called directly, as the host's in-process tests do.
func Example() {
	b := sdk.NewBridge(&sdk.Info{Name: "greeter", Version: "v0.1.0"}, nil)
	sdk.AddTool(b, &sdk.Tool{Name: "greet", Description: "Say hello."}, greet)

	res, err := b.CallTool(context.Background(), &sdk.CallToolRequest{
		Name:      "greet",
		Arguments: json.RawMessage(`{"name":"ada"}`),
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(res.Content))
	// Output: "hello, ada"
}

// The schema of a tool's parameters is derived from its input type: field
// order, JSON names, descriptions from `jsonschema` tags, and required
// fields (those without omitempty).
func ExampleAddTool() {
	type readIn struct {
		Path  string `json:"path" jsonschema:"file to read"`
		Limit int    `json:"limit,omitempty" jsonschema:"bytes to read at most"`
	}
	b := sdk.NewBridge(&sdk.Info{Name: "files"}, nil)
	b.AddNamespace(&sdk.NamespaceInfo{Path: "local", Description: "Files on this machine."})
	sdk.AddTool(b, &sdk.Tool{Name: "local.read", Description: "Read a file."},
		func(ctx context.Context, req *sdk.CallToolRequest, in readIn) (string, error) {
			return "", nil
		})

	d, _ := b.Describe(context.Background())
	tool := d.Tools[0]
	fmt.Println(tool.Name, tool.Params)
	fmt.Println(string(tool.InputSchema))
	// Output:
	// local.read [path limit]
	// {"type":"object","properties":{"path":{"type":"string","description":"file to read"},"limit":{"type":"integer","description":"bytes to read at most"}},"required":["path"],"additionalProperties":false}
}

// Arguments that do not fit the parameters fail the call with
// CodeInvalidArgument, naming the argument, before the tool runs.
func ExampleAddTool_invalidArguments() {
	b := sdk.NewBridge(&sdk.Info{Name: "greeter"}, nil)
	sdk.AddTool(b, &sdk.Tool{Name: "greet"}, greet)

	for _, args := range []string{`{"name":42}`, `{}`, `{"name":"ada","nmae":"x"}`} {
		res, _ := b.CallTool(context.Background(), &sdk.CallToolRequest{Name: "greet", Arguments: json.RawMessage(args)})
		fmt.Printf("%s: %s\n", res.Error.Code, res.Error.Message)
	}
	// Output:
	// invalid_argument: argument "name": expected string, got number
	// invalid_argument: missing required argument "name"
	// invalid_argument: unknown argument "nmae" (parameters: name)
}

// A tool fails with a typed error; the code becomes the Python exception
// raised in the sandbox (here PermissionError).
func ExampleErrorf() {
	b := sdk.NewBridge(&sdk.Info{Name: "vault"}, nil)
	sdk.AddTool(b, &sdk.Tool{Name: "open"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (any, error) {
		return nil, sdk.Errorf(sdk.CodePermission, "the vault is sealed")
	})

	res, _ := b.CallTool(context.Background(), &sdk.CallToolRequest{Name: "open"})
	fmt.Println(res.IsError, res.Error.Code, res.Error.Message)
	// Output: true permission the vault is sealed
}

// A long-running tool reports progress, reads messages sent into the call,
// and stops when its context is cancelled.
func ExampleCallToolRequest_Messages() {
	b := sdk.NewBridge(&sdk.Info{Name: "worker"}, nil)
	sdk.AddTool(b, &sdk.Tool{Name: "work"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (int, error) {
		n := 0
		for {
			select {
			case msg := <-req.Messages():
				n++
				req.Log("got: " + string(msg))
			case <-ctx.Done():
				return n, nil
			}
		}
	})

	ctx, cancel := context.WithCancel(context.Background())
	inbox := make(chan json.RawMessage)
	done := make(chan *sdk.CallToolResult)
	go func() {
		res, _ := b.CallTool(ctx, &sdk.CallToolRequest{Name: "work", Events: printer{}, Inbox: inbox})
		done <- res
	}()
	inbox <- json.RawMessage(`"first"`)
	inbox <- json.RawMessage(`"second"`) // received: the tool logs it before it looks at ctx again
	cancel()
	fmt.Println("result:", string((<-done).Content))
	// Output:
	// log: got: "first"
	// log: got: "second"
	// result: 2
}

// printer is an sdk.EventSink that prints.
type printer struct{}

func (printer) Log(line string)                     { fmt.Println("log:", line) }
func (printer) Progress(p, total float64, _ string) { fmt.Println("progress:", p, total) }
