package sdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// testRedactor knows a token with characters that JSON encoders escape
// ("/", "<", "&"), one secret that contains another, a secret of digits,
// and values it must ignore.
func testRedactor() *sdk.Redactor {
	return sdk.NewRedactor("tok/en<&>12", "  pass-word\n", "pass-word-long", "31415926", "abc", " ab ", "", "tok/en<&>12")
}

func TestRedact(t *testing.T) {
	t.Parallel()
	r := testRedactor()
	for name, tc := range map[string]struct {
		in, want string
	}{
		"secret":                   {"Bearer tok/en<&>12 rejected", "Bearer [REDACTED] rejected"},
		"trimmed secret":           {"pw=pass-word;", "pw=[REDACTED];"},
		"longest first":            {"pass-word-long and pass-word", "[REDACTED] and [REDACTED]"},
		"every occurrence":         {"31415926/31415926", "[REDACTED]/[REDACTED]"},
		"as Go encodes it in JSON": {`body: {"t":"tok/en\u003c\u0026\u003e12"}`, `body: {"t":"[REDACTED]"}`},
		"with an escaped slash":    {`body: {"t":"tok\/en<&>12"}`, `body: {"t":"[REDACTED]"}`},
		"short values ignored":     {"abc ab", "abc ab"},
		"nothing to redact":        {"all clear", "all clear"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := r.Redact(tc.in); got != tc.want {
				t.Errorf("Redact(%q)\n got  %q\n want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRedactJSON(t *testing.T) {
	t.Parallel()
	r := testRedactor()
	for name, tc := range map[string]struct {
		in, want string
	}{
		"Go's encoding": {
			`{"a": "x tok/en\u003c\u0026\u003e12"}`,
			`{"a": "x [REDACTED]"}`},
		"unescaped": {
			`{"a": "x tok/en<&>12", "b": 1.50}`,
			`{"a": "x [REDACTED]", "b": 1.50}`},
		`"\/" escapes`: {
			`{"b": [1, 12345678901234567890, "tok\/en<&>12", {"k\"": null}], "t": true}`,
			`{"b": [1, 12345678901234567890, "[REDACTED]", {"k\"": null}], "t": true}`},
		`"\u" escapes`: {
			`["\u0074ok/en<&>12", "caf\u00e9"]`,
			`["[REDACTED]","café"]`},
		"a key": {
			`{"tok\/en<&>12": 1}`,
			`{"[REDACTED]": 1}`},
		"another escape: rewritten": {
			`{"k": "t\u006fk\/en<&>12", "n": [1.50, true, null]}`,
			`{"k":"[REDACTED]","n":[1.50,true,null]}`},
		"a number": {
			`{"pi": 31415926, "s": "31415926"}`,
			`{"pi":"[REDACTED]","s":"[REDACTED]"}`},
		"in a number": {
			`[314159265]`,
			`["[REDACTED]5"]`},
		"escapes without secrets": {
			`{"a": "line\nbreak", "b": "caf\u00e9", "c": 1.50}`,
			`{"a": "line\nbreak", "b": "caf\u00e9", "c": 1.50}`},
		"an escape that looks like a secret": {
			`"\\u0074ok/en<&>12 is not \u0074ok\/en<&>12"`,
			`"\\u0074ok/en<&>12 is not [REDACTED]"`},
		"no secrets": {
			`{ "a" : [1, 2] }`,
			`{ "a" : [1, 2] }`},
		"not JSON": {
			`oops tok/en<&>12 {`,
			`oops [REDACTED] {`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := string(r.RedactJSON(json.RawMessage(tc.in)))
			if got != tc.want {
				t.Errorf("RedactJSON(%s)\n got  %s\n want %s", tc.in, got, tc.want)
			}
			if json.Valid([]byte(tc.in)) && !json.Valid([]byte(got)) {
				t.Errorf("the result is not JSON: %s", got)
			}
		})
	}
}

func TestRedactorNil(t *testing.T) {
	t.Parallel()
	for name, r := range map[string]*sdk.Redactor{"nil": nil, "no secrets": sdk.NewRedactor(), "only short values": sdk.NewRedactor("ab", "   ")} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := r.Redact("tok/en<&>12"); got != "tok/en<&>12" {
				t.Errorf("Redact: %q", got)
			}
			doc := json.RawMessage(`{"a": "\/x"}`)
			if got := r.RedactJSON(doc); string(got) != string(doc) {
				t.Errorf("RedactJSON: %s", got)
			}
			err := context.Canceled
			if got := r.RedactError(err); got != err {
				t.Errorf("RedactError: %v", got)
			}
			rec := &sdktest.Recorder{}
			r.RedactEvents(rec).Log("line")
			if diff := cmp.Diff([]string{"line"}, rec.Lines()); diff != "" {
				t.Errorf("RedactEvents (-want +got):\n%s", diff)
			}
			res, gotErr := r.CallTool(t.Context(), &sdk.CallToolRequest{Name: "x"}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: json.RawMessage(`"ab"`)}, err
			})
			if string(res.Content) != `"ab"` || gotErr != err {
				t.Errorf("CallTool: %s, %v", res.Content, gotErr)
			}
		})
	}
	if sdk.NewRedactor().RedactEvents(nil) != nil {
		t.Error("RedactEvents(nil) is not nil")
	}
}

func TestRedactError(t *testing.T) {
	t.Parallel()
	r := sdk.NewRedactor("sk-live-123")
	for name, tc := range map[string]struct {
		err  error
		want error
	}{
		"clean error kept":   {context.Canceled, context.Canceled},
		"plain error":        {errors.New("dial sk-live-123: refused"), &sdk.ToolError{Code: sdk.CodeInternal, Message: "dial [REDACTED]: refused"}},
		"tool error's code":  {sdk.Errorf(sdk.CodePermission, "key sk-live-123 revoked"), &sdk.ToolError{Code: sdk.CodePermission, Message: "key [REDACTED] revoked"}},
		"wrapped tool error": {fmt.Errorf("calling: %w", sdk.Errorf(sdk.CodeUnavailable, "sk-live-123")), &sdk.ToolError{Code: sdk.CodeUnavailable, Message: "calling: [REDACTED]"}},
		"cancellation":       {fmt.Errorf("sk-live-123: %w", context.Canceled), &sdk.ToolError{Code: sdk.CodeCancelled, Message: "[REDACTED]: context canceled"}},
		"nil":                {nil, nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := r.RedactError(tc.err)
			if _, typed := tc.want.(*sdk.ToolError); !typed {
				if got != tc.want {
					t.Errorf("got %v, want %v itself", got, tc.want)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRedactorCallTool(t *testing.T) {
	t.Parallel()
	const secret = "sk-live-123/456"
	r := sdk.NewRedactor(secret)
	b := sdk.NewBridge(&sdk.Info{Name: "leaky"}, &sdk.Options{Logger: sdktest.Logger(t)})
	sdk.AddTool(b, &sdk.Tool{Name: "echo"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (map[string]string, error) {
		req.Log("using " + secret)
		req.Progress(1, 2, "half of "+secret)
		return map[string]string{"header": "Bearer " + secret}, nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "fail"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (any, error) {
		return nil, sdk.Errorf(sdk.CodePermission, "key %s revoked", secret)
	})
	sdk.AddTool(b, &sdk.Tool{Name: "panic"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (any, error) {
		panic("bad key " + secret)
	})

	rec := &sdktest.Recorder{}
	req := &sdk.CallToolRequest{Name: "echo", Events: rec}
	res, err := r.CallTool(t.Context(), req, b.CallTool)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"header":"Bearer [REDACTED]"}`, string(res.Content)); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"using [REDACTED]"}, rec.Lines()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]sdktest.Progress{{Progress: 1, Total: 2, Message: "half of [REDACTED]"}}, rec.ProgressReports()); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if req.Events != rec {
		t.Error("CallTool changed the caller's request")
	}

	for name, want := range map[string]*sdk.ToolError{
		"fail":  {Code: sdk.CodePermission, Message: "key [REDACTED] revoked"},
		"panic": {Code: sdk.CodeInternal, Message: `panic: bad key [REDACTED]`},
	} {
		res, err := r.CallTool(t.Context(), &sdk.CallToolRequest{Name: name}, b.CallTool)
		if err != nil || !res.IsError {
			t.Fatalf("%s: %+v, %v", name, res, err)
		}
		if diff := cmp.Diff(want, res.Error); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}

	// A call that returns a Go error (a BridgeServer that is not a
	// *Bridge), and one that panics.
	failing := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return nil, fmt.Errorf("connecting with %s: %w", secret, sdk.Errorf(sdk.CodeUnavailable, "down"))
	}
	res, err = r.CallTool(t.Context(), &sdk.CallToolRequest{Name: "x"}, failing)
	if diff := cmp.Diff(&sdk.ToolError{Code: sdk.CodeUnavailable, Message: "connecting with [REDACTED]: down"}, err); res != nil || diff != "" {
		t.Errorf("Go error: result %+v, error (-want +got):\n%s", res, diff)
	}
	func() {
		defer func() {
			if v := recover(); v != "oops [REDACTED]" {
				t.Errorf("panic value %q", v)
			}
		}()
		_, _ = r.CallTool(t.Context(), &sdk.CallToolRequest{Name: "x"}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			panic(errors.New("oops " + secret))
		})
	}()
}

func TestSecretName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"Authorization": true, "X-Api-Key": true, "access_token": true, "GITHUB_TOKEN": true,
		"client_secret": true, "Cookie": true, "X-Session-Id": true, "DB_PASSWORD": true,
		"passwd": true, "X-Passwort": true, "AWS_CREDENTIALS": true, "X-Signature": true,
		"Content-Type": false, "X-Region": false, "PATH": false, "HOME": false, "page": false,
	} {
		if got := sdk.SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestHeaderSecrets(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		name, value string
		want        []string
	}{
		"bearer":          {"Authorization", "Bearer t0ken-1", []string{"Bearer t0ken-1", "t0ken-1"}},
		"basic":           {"Authorization", "Basic YWRhOnB3LTEyMzQ1", []string{"Basic YWRhOnB3LTEyMzQ1", "YWRhOnB3LTEyMzQ1", "ada:pw-12345", "pw-12345"}},
		"bare value":      {"X-Api-Key", " k-12345 ", []string{"k-12345"}},
		"not a secret":    {"X-Region", "eu west", nil},
		"basic, not b64":  {"Proxy-Authorization", "basic !!", []string{"basic !!", "!!"}},
		"env, no scheme":  {"API_KEY", "sk-999", []string{"sk-999"}},
		"empty value":     {"Cookie", "", nil},
		"cookies":         {"Cookie", `theme=dark; sid="s-12345"`, []string{`theme=dark; sid="s-12345"`, "dark", "s-12345"}},
		"scheme, no cred": {"Authorization", "Negotiate ", []string{"Negotiate"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, sdk.HeaderSecrets(tc.name, tc.value)); diff != "" {
				t.Errorf("HeaderSecrets(%q, %q) (-want +got):\n%s", tc.name, tc.value, diff)
			}
		})
	}
}

func TestURLSecrets(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		url  string
		want []string
	}{
		"userinfo and query": {
			"https://ada:pw-12345@api.example.com/mcp?api_key=k-12345&region=eu",
			[]string{"pw-12345", "YWRhOnB3LTEyMzQ1", "k-12345"}},
		"escaped": {
			"https://ada:p%40ss%2Fw@h/?access%5Ftoken=a%2Bb+c",
			[]string{"p@ss/w", "YWRhOnBAc3Mvdw==", "p%40ss%2Fw", "a%2Bb+c", "a+b c"}},
		"escaped needlessly": {
			"https://ada:p%21ss@h/",
			[]string{"p!ss", "YWRhOnAhc3M=", "p%21ss"}},
		// Without a password the user name is the credential.
		"user only": {"https://ada@h/", []string{"YWRhOg==", "ada"}},
		"key as user": {
			"https://sk_test_4eC39HqLyjWDarjtT1zdp7dc:@api.stripe.com/v1",
			[]string{"c2tfdGVzdF80ZUMzOUhxTHlqV0Rhcmp0VDF6ZHA3ZGM6", "sk_test_4eC39HqLyjWDarjtT1zdp7dc"}},
		"escaped user": {"https://to%6Ben-1@h/", []string{"dG9rZW4tMTo=", "token-1", "to%6Ben-1"}},
		"none":         {"https://h/path?page=2", nil},
		"bad":          {"http://[::1", nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, sdk.URLSecrets(tc.url)); diff != "" {
				t.Errorf("URLSecrets(%q) (-want +got):\n%s", tc.url, diff)
			}
		})
	}
}

// A bridge whose tools talk to a server with a credential runs every call
// through a Redactor, so that a server that echoes the credential does not
// show it to the sandbox.
func ExampleRedactor() {
	const apiKey = "sk-live-5f2e" // from the bridge's configuration
	redactor := sdk.NewRedactor(sdk.HeaderSecrets("X-Api-Key", apiKey)...)

	b := sdk.NewBridge(&sdk.Info{Name: "weather"}, nil)
	sdk.AddTool(b, &sdk.Tool{Name: "forecast"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (any, error) {
		// A server that answers with the request's headers.
		return map[string]string{"X-Api-Key": apiKey}, nil
	})
	sdk.AddTool(b, &sdk.Tool{Name: "alerts"}, func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (any, error) {
		return nil, sdk.Errorf(sdk.CodePermission, "key %s has no access to alerts", apiKey)
	})

	for _, tool := range []string{"forecast", "alerts"} {
		res, _ := redactor.CallTool(context.Background(), &sdk.CallToolRequest{Name: tool}, b.CallTool)
		if res.IsError {
			fmt.Println(res.Error.Code, res.Error.Message)
			continue
		}
		fmt.Println(string(res.Content))
	}
	// Output:
	// {"X-Api-Key":"[REDACTED]"}
	// permission key [REDACTED] has no access to alerts
}

func TestSameOrigin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"https://api.example.com/v1", "https://API.example.com:443/other?x=1", true},
		{"http://h/a", "http://h:80/b", true},
		{"https://h/", "http://h/", false},
		{"https://h/", "https://h:8443/", false},
		{"https://h/", "https://h.evil/", false},
		{"https://user:pw@h/", "https://h/", true},
		{"http://[::1]:8080/", "http://[::1]:8080/mcp", true},
		{"http://[::1]/", "http://[::1]:8080/", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := sdk.SameOrigin(a, b); got != tc.want {
			t.Errorf("SameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
