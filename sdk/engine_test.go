package sdk_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

type fireIn struct {
	Target string   `json:"target"`
	Power  int      `json:"power" default:"100"`
	Mode   string   `json:"mode" default:"burst"`
	Tags   []string `json:"tags" default:"[\"a\", \"b\"]"`
	Aim    *struct {
		X int `json:"x"`
		Y int `json:"y" default:"7"`
	} `json:"aim,omitempty"`
}

// Defaults declared with a struct tag are in the schema, not required, and
// applied before the handler runs, in-process and over gRPC alike.
func TestDefaults(t *testing.T) {
	t.Parallel()
	b := sdk.NewBridge(&sdk.Info{Name: "d"}, &sdk.Options{Logger: hclog.NewNullLogger()})
	sdk.AddTool(b, &sdk.Tool{Name: "fire"}, func(_ context.Context, _ *sdk.CallToolRequest, in fireIn) (fireIn, error) {
		return in, nil
	})
	for server, serve := range servers() {
		t.Run(server, func(t *testing.T) {
			t.Parallel()
			c := serve(t, b)
			d, _ := c.Describe(t.Context())
			var schema struct {
				Properties map[string]struct {
					Default json.RawMessage `json:"default"`
				} `json:"properties"`
				Required []string `json:"required"`
			}
			if err := json.Unmarshal(d.Tools[0].InputSchema, &schema); err != nil {
				t.Fatal(err)
			}
			if got := string(schema.Properties["power"].Default); got != "100" {
				t.Errorf("default of power = %s", got)
			}
			if got := string(schema.Properties["mode"].Default); got != `"burst"` {
				t.Errorf("default of mode = %s", got)
			}
			if strings.Join(schema.Required, ",") != "target" {
				t.Errorf("required = %v", schema.Required)
			}
			for args, want := range map[string]string{
				`{"target":"x"}`:                           `{"target":"x","power":100,"mode":"burst","tags":["a","b"]}`,
				`{"target":"x","power":0,"tags":null}`:     `{"target":"x","power":0,"mode":"burst","tags":null}`,
				`{"target":"x","aim":{"x":1}}`:             `{"target":"x","power":100,"mode":"burst","tags":["a","b"],"aim":{"x":1,"y":7}}`,
				`{"target":"x","mode":"single","power":5}`: `{"target":"x","power":5,"mode":"single","tags":["a","b"]}`,
			} {
				res, err := c.CallTool(t.Context(), &sdk.CallToolRequest{Name: "fire", Arguments: json.RawMessage(args)})
				if err != nil || res.IsError {
					t.Fatalf("fire(%s) = %+v, %v", args, res, err)
				}
				if got := string(res.Content); got != want {
					t.Errorf("fire(%s) = %s, want %s", args, got, want)
				}
			}
		})
	}
}

func TestDefaultThatDoesNotFitPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `default "many"`) {
			t.Errorf("panic = %v", r)
		}
	}()
	b := sdk.NewBridge(&sdk.Info{Name: "d"}, nil)
	sdk.AddTool(b, &sdk.Tool{Name: "f"}, func(context.Context, *sdk.CallToolRequest, struct {
		N int `json:"n" default:"many"`
	}) (int, error) {
		return 0, nil
	})
}

// Middleware sees every call, the first outermost, unknown tools included,
// and its error becomes a failed result.
func TestMiddleware(t *testing.T) {
	t.Parallel()
	var trail []string
	mw := func(name string) sdk.Middleware {
		return func(next sdk.ToolHandler) sdk.ToolHandler {
			return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				trail = append(trail, name+">"+req.Name)
				res, err := next(ctx, req)
				trail = append(trail, name+"<")
				return res, err
			}
		}
	}
	b := sdk.NewBridge(&sdk.Info{Name: "m"}, &sdk.Options{Middleware: []sdk.Middleware{mw("outer"), mw("inner")}})
	sdk.AddTool(b, &sdk.Tool{Name: "ok"}, func(context.Context, *sdk.CallToolRequest, struct{}) (string, error) {
		trail = append(trail, "tool")
		return "done", nil
	})
	res, _ := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "ok"})
	res2, _ := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "nope"})
	want := "outer>ok inner>ok tool inner< outer< outer>nope inner>nope inner< outer<"
	if got := strings.Join(trail, " "); got != want {
		t.Errorf("trail = %s, want %s", got, want)
	}
	if string(res.Content) != `"done"` || !res2.IsError || res2.Error.Code != sdk.CodeNotFound {
		t.Errorf("results = %+v, %+v", res, res2.Error)
	}
}

// A tool named "" is the namespace itself; AddFunc registers plain
// functions, a variadic one included.
func TestCallableAndAddFunc(t *testing.T) {
	t.Parallel()
	b := sdk.NewBridge(&sdk.Info{Name: "calc"}, &sdk.Options{Logger: hclog.NewNullLogger()})
	sdk.AddTool(b, &sdk.Tool{Name: "", Description: "the namespace itself"}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		X int `json:"x"`
	}) (int, error) {
		return in.X * 2, nil
	})
	if err := b.AddFunc(&sdk.Tool{Name: "sum", Params: []string{"label", "xs"}}, func(label string, xs ...int) string {
		n := 0
		for _, x := range xs {
			n += x
		}
		return label + "=" + strings.Repeat("|", n)
	}); err != nil {
		t.Fatal(err)
	}
	if err := b.AddFunc(&sdk.Tool{Name: "bad"}, func(x int, ctx context.Context) {}); err == nil || err.Error() != "context.Context must be the first parameter" {
		t.Errorf("AddFunc of a bad shape = %v", err)
	}
	c := sdktest.NewHarness(t, b)
	d, _ := c.Describe(t.Context())
	if len(d.Tools) != 2 || d.Tools[0].Name != "" || !d.Tools[1].Variadic || strings.Join(d.Tools[1].Params, ",") != "label,xs" {
		t.Errorf("tools = %+v", d.Tools)
	}
	for name, tc := range map[string]struct{ tool, args, want string }{
		"callable":      {"", `{"x":21}`, `42`},
		"variadic":      {"sum", `{"label":"n","xs":[1,2]}`, `"n=|||"`},
		"variadic none": {"sum", `{"label":"n"}`, `"n="`},
	} {
		res, err := c.CallTool(t.Context(), &sdk.CallToolRequest{Name: tc.tool, Arguments: json.RawMessage(tc.args)})
		if err != nil || res.IsError || string(res.Content) != tc.want {
			t.Errorf("%s: %+v %+v %v", name, res, res.Error, err)
		}
	}
}
