package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/parselbox/parselbox/sdk"
)

// A bridge decodes its configuration block strictly, with defaults, and
// reports the credentials in it to the host.
func ExampleDecodeConfig() {
	type config struct {
		BaseURL         string       `json:"base_url"`
		Timeout         sdk.Duration `json:"timeout" default:"30s"`
		sdk.TokenConfig              // token, or token_env
	}
	os.Setenv("EXAMPLE_API_TOKEN", "tok-5f1e8a")
	req := &sdk.ConfigureRequest{Config: json.RawMessage(`{"base_url": "https://api.example.com", "token_env": "EXAMPLE_API_TOKEN"}`)}
	cfg, err := sdk.DecodeConfig[config](req)
	if err != nil {
		panic(err)
	}
	fmt.Println(cfg.BaseURL, cfg.Timeout, cfg.Token) // the token never prints
	fmt.Println(len(req.Secrets()), "secret reported to the host")

	_, err = sdk.DecodeConfig[config](&sdk.ConfigureRequest{Config: json.RawMessage(`{"base_url": "x", "timout": 5}`)})
	var ce *sdk.ConfigError
	if errors.As(err, &ce) {
		fmt.Printf("key %s: %s\n", ce.Key, ce.Message)
	}
	// Output:
	// https://api.example.com 30s [REDACTED]
	// 1 secret reported to the host
	// key timout: unknown key (did you mean "timeout"?)
}

// A Secret prints, logs and encodes as [REDACTED]; Value is for the request
// that needs it.
func ExampleSecret() {
	s := sdk.NewSecret("hunter2-shh")
	b, _ := json.Marshal(struct{ Password sdk.Secret }{s})
	fmt.Println(s, string(b), len(s.Value()))
	// Output: [REDACTED] {"Password":"[REDACTED]"} 11
}

// A Duration is a number of seconds or a Go duration string.
func ExampleDuration() {
	var d struct {
		A, B sdk.Duration
	}
	_ = json.Unmarshal([]byte(`{"A": 1.5, "B": "2m"}`), &d)
	fmt.Println(d.A, d.B.D().Seconds())
	// Output: 1.5s 120
}

// A default in a struct tag is in the tool's schema, and applied when the
// caller leaves the argument out: in Python, fire("moon") is
// fire(target="moon", power=100).
func ExampleAddTool_defaults() {
	type fireIn struct {
		Target string `json:"target"`
		Power  int    `json:"power" default:"100"`
	}
	b := sdk.NewBridge(&sdk.Info{Name: "ship"}, nil)
	sdk.AddTool(b, &sdk.Tool{Name: "fire"}, func(_ context.Context, _ *sdk.CallToolRequest, in fireIn) (string, error) {
		return fmt.Sprintf("%s at %d", in.Target, in.Power), nil
	})
	d, _ := b.Describe(context.Background())
	fmt.Println(string(d.Tools[0].InputSchema))
	res, _ := b.CallTool(context.Background(), &sdk.CallToolRequest{Name: "fire", Arguments: json.RawMessage(`{"target":"moon"}`)})
	fmt.Println(string(res.Content))
	// Output:
	// {"type":"object","properties":{"target":{"type":"string"},"power":{"type":"integer","default":100}},"required":["target"],"additionalProperties":false}
	// "moon at 100"
}

// The tool named "" is the namespace itself: with the bridge configured as
// namespace "double", Python calls double(21).
func ExampleAddTool_callableNamespace() {
	b := sdk.NewBridge(&sdk.Info{Name: "double"}, nil)
	sdk.AddTool(b, &sdk.Tool{Name: "", Description: "Twice x."}, func(_ context.Context, _ *sdk.CallToolRequest, in struct {
		X int `json:"x"`
	}) (int, error) {
		return 2 * in.X, nil
	})
	res, _ := b.CallTool(context.Background(), &sdk.CallToolRequest{Name: "", Arguments: json.RawMessage(`{"x":21}`)})
	fmt.Println(string(res.Content))
	// Output: 42
}

// AddFunc registers a plain Go function; its parameters are named by
// Params, and a variadic one takes the remaining positional arguments in
// Python (total("x", 1, 2, 3)).
func ExampleBridge_AddFunc() {
	b := sdk.NewBridge(&sdk.Info{Name: "calc"}, nil)
	err := b.AddFunc(&sdk.Tool{Name: "total", Params: []string{"label", "xs"}}, func(label string, xs ...float64) string {
		sum := 0.0
		for _, x := range xs {
			sum += x
		}
		return fmt.Sprintf("%s: %g", label, sum)
	})
	if err != nil {
		panic(err)
	}
	d, _ := b.Describe(context.Background())
	fmt.Println(d.Tools[0].Params, d.Tools[0].Variadic)
	res, _ := b.CallTool(context.Background(), &sdk.CallToolRequest{Name: "total", Arguments: json.RawMessage(`{"label":"sum","xs":[1,2,3.5]}`)})
	fmt.Println(string(res.Content))
	// Output:
	// [label xs] true
	// "sum: 6.5"
}

// Middleware wraps every call of a bridge: here one that logs the tool's
// name, and the SDK's redaction as a bridge's own second layer.
func ExampleOptions_middleware() {
	logCalls := func(next sdk.ToolHandler) sdk.ToolHandler {
		return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			fmt.Println("calling", req.Name)
			return next(ctx, req)
		}
	}
	red := sdk.NewRedactor("s3cr3t-key")
	b := sdk.NewBridge(&sdk.Info{Name: "echo"}, &sdk.Options{
		Middleware: []sdk.Middleware{logCalls, sdk.RedactMiddleware(func() *sdk.Redactor { return red })},
	})
	sdk.AddTool(b, &sdk.Tool{Name: "env"}, func(context.Context, *sdk.CallToolRequest, struct{}) (string, error) {
		return "KEY=s3cr3t-key", nil
	})
	res, _ := b.CallTool(context.Background(), &sdk.CallToolRequest{Name: "env"})
	fmt.Println(string(res.Content))
	// Output:
	// calling env
	// "KEY=[REDACTED]"
}

// A Redactor finds a secret in its common encodings too.
func ExampleRedactor_encodings() {
	r := sdk.NewRedactor("ghp_abc123def456")
	for _, s := range []string{
		"Authorization: Bearer ghp_abc123def456",
		"token=ghp_abc123def456&x=1",
		"Z2hwX2FiYzEyM2RlZjQ1Ng==",                   // base64
		"6768705f616263313233646566343536",           // hex
		"QXV0aG9yaXphdGlvbjogZ2hwX2FiYzEyM2RlZjQ1Ng", // inside a longer base64 payload
	} {
		fmt.Println(strings.Contains(r.Redact(s), sdk.Redacted))
	}
	// Output:
	// true
	// true
	// true
	// true
	// true
}
