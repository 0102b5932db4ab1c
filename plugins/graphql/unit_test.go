package main

import (
	"encoding/json"
	"github.com/parselbox/parselbox/sdk"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTypeRefString(t *testing.T) {
	t.Parallel()
	named := func(n string) *typeRef { return &typeRef{Kind: "OBJECT", Name: n} }
	for name, tc := range map[string]struct {
		ref  *typeRef
		want string
	}{
		"named":           {named("Country"), "Country"},
		"non-null":        {&typeRef{Kind: "NON_NULL", OfType: named("ID")}, "ID!"},
		"list":            {&typeRef{Kind: "LIST", OfType: named("Country")}, "[Country]"},
		"nested":          {&typeRef{Kind: "NON_NULL", OfType: &typeRef{Kind: "LIST", OfType: &typeRef{Kind: "NON_NULL", OfType: named("Country")}}}, "[Country!]!"},
		"nil":             {nil, "?"},
		"unnamed":         {&typeRef{Kind: "OBJECT"}, "?"},
		"truncated chain": {&typeRef{Kind: "LIST"}, "[?]"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := tc.ref.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseResponse(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		body string
		want *response // nil: not a GraphQL response
	}{
		"data":               {`{"data": {"a": 1}}`, &response{Data: json.RawMessage(`{"a": 1}`)}},
		"data and errors":    {`{"data": null, "errors": [{"message": "x"}]}`, &response{Data: json.RawMessage(`null`), Errors: json.RawMessage(`[{"message": "x"}]`)}},
		"errors only":        {`{"errors": [{"message": "x"}]}`, &response{Errors: json.RawMessage(`[{"message": "x"}]`)}},
		"empty errors":       {`{"data": {}, "errors": []}`, &response{Data: json.RawMessage(`{}`)}},
		"null errors":        {`{"data": 1, "errors": null}`, &response{Data: json.RawMessage(`1`)}},
		"extensions":         {`{"data": 1, "extensions": {"cost": 3}}`, &response{Data: json.RawMessage(`1`), Extensions: json.RawMessage(`{"cost": 3}`)}},
		"empty extensions":   {`{"data": 1, "extensions": {}}`, &response{Data: json.RawMessage(`1`)}},
		"other object":       {`{"status": "ok"}`, nil},
		"array":              {`[{"data": 1}]`, nil},
		"html":               {`<html>oops</html>`, nil},
		"empty":              {``, nil},
		"big numbers intact": {`{"data": {"id": 12345678901234567890}}`, &response{Data: json.RawMessage(`{"id": 12345678901234567890}`)}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, ok := parseResponse([]byte(tc.body))
			if ok != (tc.want != nil) {
				t.Fatalf("parseResponse(%s) ok = %v", tc.body, ok)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRedactor checks which credentials of the config are redacted (how
// they are redacted is package sdk's business).
func TestRedactor(t *testing.T) {
	t.Parallel()
	r := newRedactor(&config{
		Endpoint:    "https://ada:pass-word@api.example.com/graphql?api_key=qk-9999&region=eu",
		TokenConfig: sdk.TokenConfig{Token: sdk.NewSecret("tok/en<&>12")},
		Headers:     map[string]string{"Proxy-Authorization": "Basic dXNlcjpwYXNzLTEyMzQ=", "X-Region": "europe", "X-Key": "abc"},
	})
	for name, tc := range map[string]struct {
		in, want string
		json     bool
	}{
		"token in text":                {in: "Bearer tok/en<&>12 rejected", want: "Bearer [REDACTED] rejected"},
		"basic credential":             {in: "got dXNlcjpwYXNzLTEyMzQ=", want: "got [REDACTED]"},
		"whole header value":           {in: "Basic dXNlcjpwYXNzLTEyMzQ=", want: "[REDACTED]"},
		"decoded basic credential":     {in: "user user:pass-1234 refused", want: "user [REDACTED] refused"},
		"url password":                 {in: "pass-word", want: "[REDACTED]"},
		"basic credential of userinfo": {in: "Authorization: Basic YWRhOnBhc3Mtd29yZA==", want: "Authorization: Basic [REDACTED]"},
		"sensitive query value":        {in: "qk-9999 eu", want: "[REDACTED] eu"},
		"plain header untouched":       {in: "europe", want: "europe"},
		"short secret untouched":       {in: "abc", want: "abc"},
		"token in Go JSON":             {in: `{"a":"x tok/en\u003c\u0026\u003e12"}`, want: `{"a":"x [REDACTED]"}`, json: true},
		"token escaped otherwise":      {in: `{"b": [1, "t\u006fk\/en<&>12"], "t": true}`, want: `{"b":[1,"[REDACTED]"],"t":true}`, json: true},
		"escapes without secrets":      {in: `{"a": "line\nbreak", "b": 1.50}`, want: `{"a": "line\nbreak", "b": 1.50}`, json: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var got string
			if tc.json {
				got = string(r.RedactJSON(json.RawMessage(tc.in)))
			} else {
				got = r.Redact(tc.in)
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestRedactedURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://api.example.com/graphql":                   "https://api.example.com/graphql",
		"https://ada:secret@api.example.com/graphql":        "https://ada@api.example.com/graphql",
		"https://api.example.com/graphql?key=secret#frag":   "https://api.example.com/graphql?…",
		"http://127.0.0.1:8080/v1/graphql":                  "http://127.0.0.1:8080/v1/graphql",
		"http://[::1]:8080/graphql":                         "http://[::1]:8080/graphql",
		"http://user@example.com/graphql?access_token=abcd": "http://user@example.com/graphql?…",
	} {
		if got := redactedURL(in); got != want {
			t.Errorf("redactedURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"one two three", 8, "one two…"},
		{"multi\n  line\ttext", 20, "multi line text"},
		{"héllo wörld", 6, "héllo…"},
	} {
		if got := truncate(tc.in, tc.n); got != tc.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
