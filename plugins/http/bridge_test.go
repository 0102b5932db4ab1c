package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

func TestVerbs(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t)
	b := configured(t, map[string]any{
		"base_url": api.Base, "token": testToken,
		"headers": map[string]any{"X-Client": "parselbox-test", "X-Api-Key": "key-5a7d1c0e93"},
	})
	echoed := func(method, path, body string, headers map[string]any) any {
		h := map[string]any{
			"Accept-Encoding": "gzip", "User-Agent": "Go-http-client/1.1",
			"Authorization": "Bearer " + sdk.Redacted, "X-Api-Key": sdk.Redacted, "X-Client": "parselbox-test",
		}
		for k, v := range headers {
			h[k] = v
		}
		return map[string]any{"method": method, "path": path, "query": map[string]any{}, "headers": h, "body": body}
	}
	for name, tc := range map[string]struct {
		tool, args string
		want       reply
	}{
		"get JSON":                {"get", `{"path": "/pet/2"}`, reply{true, 200, jsonValue(t, `{"id": 2, "name": "kitty", "category": {"id": 2, "name": "Cats"}, "photoUrls": [], "tags": [{"id": 2, "name": "shy"}], "status": "pending"}`)}},
		"path without a slash":    {"get", `{"path": "version"}`, reply{true, 200, map[string]any{"version": "1.0.0"}}},
		"query parameters":        {"get", `{"path": "/pet/findByStatus", "params": {"status": "sold", "limit": 5}}`, reply{true, 200, jsonValue(t, `[{"id": 3, "name": "rex", "category": {"id": 1, "name": "Dogs"}, "photoUrls": [], "tags": [{"id": 1, "name": "friendly"}], "status": "sold"}]`)}},
		"query in the path":       {"get", `{"path": "/pet/findByStatus?status=pending", "params": {"limit": 1}}`, reply{true, 200, jsonValue(t, `[{"id": 2, "name": "kitty", "category": {"id": 2, "name": "Cats"}, "photoUrls": [], "tags": [{"id": 2, "name": "shy"}], "status": "pending"}]`)}},
		"a list repeats":          {"get", `{"path": "/echo", "params": {"tag": ["a", "b"], "n": 1.5, "on": true, "off": null}}`, reply{true, 200, nil}},
		"error status is a value": {"get", `{"path": "/pet/99"}`, reply{false, 404, map[string]any{"code": float64(404), "message": "Pet not found"}}},
		"text":                    {"get", `{"path": "/health"}`, reply{true, 200, "ok"}},
		"bytes":                   {"get", `{"path": "/bytes"}`, reply{true, 200, map[string]any{"__b64__": "iVBOR//+"}}},
		"no content":              {"delete", `{"path": "/nothing"}`, reply{true, 204, nil}},
		"post JSON":               {"post", `{"path": "/echo", "json": {"a": [1, 2.5, "x"]}}`, reply{true, 200, echoed("POST", "/api/v3/echo", `{"a":[1,2.5,"x"]}`, map[string]any{"Content-Type": "application/json", "Content-Length": "17"})}},
		"put text":                {"put", `{"path": "/echo/x", "data": "hello"}`, reply{true, 200, echoed("PUT", "/api/v3/echo/x", "hello", map[string]any{"Content-Type": "text/plain; charset=utf-8", "Content-Length": "5"})}},
		"patch form":              {"patch", `{"path": "/echo", "data": {"a": "1", "b": ["x", "y"]}}`, reply{true, 200, echoed("PATCH", "/api/v3/echo", "a=1&b=x&b=y", map[string]any{"Content-Type": "application/x-www-form-urlencoded", "Content-Length": "11"})}},
		"headers":                 {"get", `{"path": "/echo", "headers": {"X-Trace": "abc", "X-Num": 5}}`, reply{true, 200, echoed("GET", "/api/v3/echo", "", map[string]any{"X-Trace": "abc", "X-Num": "5"})}},
		"configured headers win":  {"get", `{"path": "/echo", "headers": {"Authorization": "Bearer other", "X-Client": "me"}}`, reply{true, 200, echoed("GET", "/api/v3/echo", "", nil)}},
		"same-origin URL":         {"get", `{"path": "` + api.srv.URL + `/api/v3/version"}`, reply{true, 200, map[string]any{"version": "1.0.0"}}},
		"same-origin redirect":    {"get", `{"path": "/redirect/home"}`, reply{true, 200, map[string]any{"version": "1.0.0"}}},
		"redirect elsewhere":      {"get", `{"path": "/redirect/away"}`, reply{false, 302, `<a href="http://elsewhere.invalid/collect">Found</a>.` + "\n\n"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, _ := ok(t, b, tc.tool, tc.args)
			if name == "a list repeats" {
				got.Data = got.Data.(map[string]any)["query"]
				tc.want.Data = map[string]any{"tag": []any{"a", "b"}, "n": []any{"1.5"}, "on": []any{"true"}}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s(%s) (-want +got):\n%s", tc.tool, tc.args, diff)
			}
		})
	}
	t.Run("response headers", func(t *testing.T) {
		t.Parallel()
		_, h := ok(t, b, "get", `{"path": "/redirect/away"}`)
		if h["location"] != "http://elsewhere.invalid/collect" || h["content-type"] != "text/html; charset=utf-8" {
			t.Errorf("headers: %v", h)
		}
	})
	t.Run("credentials", func(t *testing.T) {
		// Every request that reached the server carried the credentials,
		// and none went elsewhere (the server is the only one there is).
		for _, r := range api.requests() {
			if r.Header.Get("Authorization") != "Bearer "+testToken || r.Header.Get("X-Api-Key") != "key-5a7d1c0e93" {
				t.Errorf("%s %s: Authorization %q, X-Api-Key %q", r.Method, r.URL, r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"))
			}
		}
	})
}

func TestVerbErrors(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t)
	b := configured(t, map[string]any{"base_url": api.Base, "token": testToken})
	for name, tc := range map[string]struct {
		tool, args string
		want       sdk.ToolError
	}{
		"other host": {"get", `{"path": "http://elsewhere.invalid/x"}`, sdk.ToolError{Code: sdk.CodePermission,
			Message: `"http://elsewhere.invalid/x" is not on this API's origin ` + api.srv.URL + `: the bridge sends requests (and its credentials) only there; give a path such as "/items/1"`}},
		"scheme-relative URL": {"post", `{"path": "//elsewhere.invalid/x", "json": {}}`, sdk.ToolError{Code: sdk.CodePermission,
			Message: `"//elsewhere.invalid/x" is not on this API's origin ` + api.srv.URL + `: the bridge sends requests (and its credentials) only there; give a path such as "/items/1"`}},
		"json and data":          {"post", `{"path": "/echo", "json": {}, "data": "x"}`, sdk.ToolError{Code: sdk.CodeInvalidArgument, Message: "give json= or data=, not both"}},
		"nested params":          {"get", `{"path": "/echo", "params": {"a": {"b": 1}}}`, sdk.ToolError{Code: sdk.CodeInvalidArgument, Message: "params: a: want a string, number, boolean or list, not a dict"}},
		"bad header name":        {"get", `{"path": "/echo", "headers": {"a b": "c"}}`, sdk.ToolError{Code: sdk.CodeInvalidArgument, Message: `headers: "a b" is not a valid header name`}},
		"data not text":          {"post", `{"path": "/echo", "data": 5}`, sdk.ToolError{Code: sdk.CodeInvalidArgument, Message: "data: want a string or a dict of form fields: want a dict of form fields"}},
		"line break in a header": {"get", `{"path": "/echo", "headers": {"X-A": "a\r\nX-B: b"}}`, sdk.ToolError{Code: sdk.CodeInvalidArgument, Message: "headers: X-A: a header value cannot hold a line break"}},
		"unknown argument":       {"get", `{"path": "/echo", "jsn": {}}`, sdk.ToolError{Code: sdk.CodeInvalidArgument, Message: `unknown argument "jsn" (parameters: path, params, headers, json, data)`}},
		"no spec":                {"search", `{"query": "pets"}`, sdk.ToolError{Code: sdk.CodeInvalidArgument, Message: "search needs an OpenAPI document: this bridge has no spec configured"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := failure(t, b, tc.tool, tc.args)
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("%s(%s) (-want +got):\n%s", tc.tool, tc.args, diff)
			}
		})
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("the server got %d requests, want none", n)
	}
}

func TestTransportErrors(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	down := configured(t, map[string]any{"base_url": "http://" + closed + "/v1", "token": testToken})
	slow := configured(t, map[string]any{"base_url": api.Base, "token": testToken, "timeout": "50ms"})

	e := failure(t, down, "get", `{"path": "/pets"}`)
	if e.Code != sdk.CodeUnavailable || !strings.HasPrefix(e.Message, "GET http://"+closed+"/v1/pets: cannot reach "+closed+": ") {
		t.Errorf("connection refused: %+v", e)
	}
	e = failure(t, slow, "get", `{"path": "/slow"}`)
	if want := (&sdk.ToolError{Code: sdk.CodeTimeout, Message: "GET " + api.Base + "/slow: no response within 50ms"}); !cmp.Equal(want, e) {
		t.Errorf("timeout: got %+v, want %+v", e, want)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	b := newBridge()
	if err := b.Configure(t.Context(), &sdk.ConfigureRequest{Config: json.RawMessage(`{"base_url": "` + srv.URL + `"}`)}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan *sdk.CallToolResult)
	go func() {
		res, _ := b.CallTool(ctx, &sdk.CallToolRequest{Name: "get", Arguments: json.RawMessage(`{"path": "/wait"}`)})
		done <- res
	}()
	<-started
	cancel()
	res := <-done
	want := &sdk.CallToolResult{Content: json.RawMessage("null"), IsError: true, Error: &sdk.ToolError{Code: sdk.CodeCancelled, Message: "GET " + srv.URL + "/wait: cancelled"}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTaskLog(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t)
	b := configured(t, map[string]any{"base_url": api.Base, "token": testToken, "spec": specFile(t, "petstore-3.0.yaml")})
	rec := &sdktest.Recorder{}
	for _, req := range []*sdk.CallToolRequest{
		{Name: "get", Arguments: json.RawMessage(`{"path": "/pet/1"}`), TaskID: "t1", Events: rec},
		{Name: "getPetById", Arguments: json.RawMessage(`{"petId": 9}`), TaskID: "t2", Events: rec},
	} {
		if res, err := b.CallTool(t.Context(), req); err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", req.Name, err, res)
		}
	}
	want := []string{"GET " + api.Base + "/pet/1 → 200 OK", "GET " + api.Base + "/pet/9 → 404 Not Found"}
	if diff := cmp.Diff(want, rec.Lines()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

func TestRedaction(t *testing.T) {
	t.Parallel()
	base, _ := parseBaseURL("https://ada:pass-9d2f41@api.example.com")
	c := newClient(base, &config{
		TokenConfig: sdk.TokenConfig{Token: sdk.NewSecret(testToken)},
		Headers:     map[string]string{"X-Api-Key": "key-5a7d1c0e93", "Cookie": "sid=cookie-77ab1", "X-Version": "2022-11-28", "X-Short-Token": "abc"},
	})
	in := `{"echo": "Bearer ` + testToken + `", "` + testToken + `": ["key-5a7d1c0e93", "sid=cookie-77ab1; x", "YWRhOnBhc3MtOWQyZjQx", "2022-11-28", "abc"], "n": 1}`
	want := jsonValue(t, `{"echo": "Bearer [REDACTED]", "[REDACTED]": ["[REDACTED]", "[REDACTED]; x", "[REDACTED]", "2022-11-28", "abc"], "n": 1}`)
	if diff := cmp.Diff(want, jsonValue(t, string(c.redact.RedactJSON(json.RawMessage(in))))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := c.redact.Redact("dial pass-9d2f41@host"); got != "dial [REDACTED]@host" {
		t.Errorf("redact: %q", got)
	}
}

// A base URL whose user name is its only credential ("https://KEY@host",
// as GitHub tokens and Stripe keys are written): the user name is
// redacted, as well as the Basic header Go sends for it.
func TestRedactionUserOnly(t *testing.T) {
	t.Parallel()
	base, _ := parseBaseURL("https://ghp-key-4c1b7e9d@api.example.com")
	c := newClient(base, &config{})
	in := `{"user": "ghp-key-4c1b7e9d", "auth": "Basic Z2hwLWtleS00YzFiN2U5ZDo="}`
	want := jsonValue(t, `{"user": "[REDACTED]", "auth": "Basic [REDACTED]"}`)
	if diff := cmp.Diff(want, jsonValue(t, string(c.redact.RedactJSON(json.RawMessage(in))))); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestDescription(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t)
	for name, tc := range map[string]struct {
		cfg   map[string]any
		want  string
		tools []string
	}{
		"no spec": {map[string]any{"base_url": api.Base}, "HTTP API: " + api.Base + ".\n" +
			"Methods: get(path, params=), post(path, json=), put(path, json=), patch(path, json=), delete(path); each also takes headers= (and data= for a text or form body).\n" +
			"Results are {ok, status, data, headers}; an error status is a result with ok False, not an exception.",
			[]string{"get", "delete", "post", "put", "patch", "search"}},
		"spec": {map[string]any{"base_url": api.Base, "spec": specFile(t, "petstore-3.0.yaml")}, "HTTP API: Swagger Petstore (" + api.Base + ") — 10 endpoints.\n" +
			"Methods: get(path, params=), post(path, json=), put(path, json=), patch(path, json=), delete(path); each also takes headers= (and data= for a text or form body).\n" +
			"Results are {ok, status, data, headers}; an error status is a result with ok False, not an exception.\n" +
			"Use search(pattern) to find endpoints by path, method, or summary. Each endpoint is also a method named by its operationId, its arguments checked against the spec before the request is sent: help() on it shows them.",
			[]string{"get", "delete", "post", "put", "patch", "search", "health-check", "addPet", "updatePet", "findPetsByStatus", "findPetsByTags", "getPetById", "deletePet", "getInventory", "placeOrder", "get_version"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d, err := configured(t, tc.cfg).Describe(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, d.Description); diff != "" {
				t.Errorf("description (-want +got):\n%s", diff)
			}
			var names []string
			for _, tool := range d.Tools {
				names = append(names, tool.Name)
			}
			if diff := cmp.Diff(tc.tools, names); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReconfigure(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t)
	b := newBridge()
	for _, cfg := range []string{
		`{"base_url": "` + api.Base + `", "spec": "` + specFile(t, "petstore-3.0.yaml") + `"}`,
		`{"base_url": "` + api.Base + `"}`,
	} {
		if err := b.Configure(t.Context(), &sdk.ConfigureRequest{Config: json.RawMessage(cfg)}); err != nil {
			t.Fatal(err)
		}
	}
	d, _ := b.Describe(t.Context())
	if slices.ContainsFunc(d.Tools, func(tool sdk.ToolInfo) bool { return tool.Name == "getPetById" }) {
		t.Errorf("the operations of the first spec are still there: %v", d.Tools)
	}
}

// A base URL whose user name is the credential (Stripe's key:, with an
// empty password) stays out of the error of a request that times out in
// the transport (here the TLS handshake, against a server that accepts the
// connection and says nothing): Go's own message for it quotes the URL,
// user name included.
func TestTransportTimeoutHidesUserinfo(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	const key = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
	b := configured(t, map[string]any{"base_url": "https://" + key + ":@" + ln.Addr().String() + "/v1"})
	e := failure(t, b, "get", `{"path": "/charges"}`)
	if e.Code != sdk.CodeTimeout || strings.Contains(e.Message, key) {
		t.Errorf("TLS handshake timeout: %+v", e)
	}
}
