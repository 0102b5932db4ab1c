package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/net/http/httpguts"

	"github.com/parselbox/parselbox/sdk"
)

const version = "v0.1.0"

// bridge is the HTTP bridge: the verb tools and search always, and one tool
// per operation of the configured OpenAPI document. It wraps *sdk.Bridge to
// describe itself with the configured API (the SDK's Info is fixed when the
// bridge is made).
type bridge struct {
	*sdk.Bridge

	mu  sync.Mutex // serializes configure
	api atomic.Pointer[api]
}

// api is one configuration: where requests go, with which credentials, and
// the indexed spec (nil without one).
type api struct {
	client *client
	spec   *spec
	byTool map[string]*operation
}

// builtin are the tools every configuration has.
var builtin = []string{"get", "post", "put", "patch", "delete", "search"}

// ownRedaction has the bridge remove its credentials from what it returns
// itself, as a second layer: the host removes them anyway (they are
// reported from Configure). The tests turn it off to prove the host's.
var ownRedaction = true

func newBridge() *bridge {
	b := &bridge{}
	opts := &sdk.Options{Configure: b.configure}
	if ownRedaction {
		opts.Middleware = []sdk.Middleware{sdk.RedactMiddleware(b.redactor)}
	}
	b.Bridge = sdk.NewBridge(&sdk.Info{
		Name: "http", Version: version,
		Description: "HTTP API (not configured yet).",
	}, opts)
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		sdk.AddTool(b.Bridge, &sdk.Tool{Name: strings.ToLower(m), Description: verbDoc(m)},
			func(ctx context.Context, call *sdk.CallToolRequest, in readArgs) (response, error) {
				return b.raw(ctx, call, m, in)
			})
	}
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch} {
		sdk.AddTool(b.Bridge, &sdk.Tool{Name: strings.ToLower(m), Description: verbDoc(m)},
			func(ctx context.Context, call *sdk.CallToolRequest, in writeArgs) (response, error) {
				return b.raw(ctx, call, m, readArgs{in.Path, in.Params, in.Headers, in.JSON, in.Data})
			})
	}
	sdk.AddTool(b.Bridge, &sdk.Tool{Name: "search", Description: searchDoc}, b.search)
	return b
}

func verbDoc(method string) string {
	return fmt.Sprintf("Send a %s request to a path under the API's base URL, as given (not checked against the spec). "+
		"Returns {ok, status, data, headers}: data is parsed JSON, text, or bytes; an error status is a result with ok False.", method)
}

const searchDoc = `Find the API's operations. search("pets by status") matches words of paths and summaries; ` +
	`search("GET /pet/*") a method and a glob on the path; search("^/store|order") a regular expression. ` +
	`Each hit names its method, path, summary, tool (call it as a method of this namespace) and parameters.`

// readArgs are get's and delete's: path, then query parameters.
type readArgs struct {
	Path    string                     `json:"path" jsonschema:"a path under the base URL, such as /items/1 (a full URL only on the API's own origin)"`
	Params  map[string]json.RawMessage `json:"params,omitempty" jsonschema:"query parameters; a list repeats the parameter"`
	Headers map[string]json.RawMessage `json:"headers,omitempty" jsonschema:"more request headers"`
	JSON    json.RawMessage            `json:"json,omitempty" jsonschema:"a JSON request body"`
	Data    json.RawMessage            `json:"data,omitempty" jsonschema:"a request body: a string sent as is, or a dict sent as a form"`
}

// writeArgs are post's, put's and patch's: path, then the body.
type writeArgs struct {
	Path    string                     `json:"path" jsonschema:"a path under the base URL, such as /items (a full URL only on the API's own origin)"`
	JSON    json.RawMessage            `json:"json,omitempty" jsonschema:"a JSON request body"`
	Data    json.RawMessage            `json:"data,omitempty" jsonschema:"a request body: a string sent as is, or a dict sent as a form"`
	Params  map[string]json.RawMessage `json:"params,omitempty" jsonschema:"query parameters; a list repeats the parameter"`
	Headers map[string]json.RawMessage `json:"headers,omitempty" jsonschema:"more request headers"`
}

// configure applies the bridge's configuration: it loads the spec, and
// replaces the operation tools of an earlier configuration.
func (b *bridge) configure(ctx context.Context, req *sdk.ConfigureRequest) error {
	cfg, err := parseConfig(req)
	if err != nil {
		return err
	}
	a := &api{byTool: map[string]*operation{}}
	var creds *client // the spec is fetched with credentials only from base_url's origin
	if cfg.BaseURL != "" {
		u, _ := parseBaseURL(cfg.BaseURL) // checked by parseConfig
		a.client = newClient(u, cfg)
		creds = a.client
	}
	if cfg.Spec != "" {
		doc, at, err := loadSpec(ctx, cfg.Spec, creds)
		if err != nil {
			return err
		}
		if a.client == nil {
			u, err := serverURL(doc, at)
			if err != nil {
				return &sdk.ConfigError{Message: err.Error()}
			}
			a.client = newClient(u, cfg)
		}
		a.spec = newSpec(doc, a.client.headers, builtin)
	}

	req.AddSecrets(a.client.secrets...)

	b.mu.Lock()
	defer b.mu.Unlock()
	if old := b.api.Load(); old != nil {
		for name := range old.byTool {
			b.RemoveTool(name)
		}
	}
	if a.spec != nil {
		for _, op := range a.spec.ops {
			a.byTool[op.tool] = op
			b.Bridge.AddTool(op.toolInfo(), b.operationHandler(op.tool))
		}
	}
	b.api.Store(a)
	b.Logger().Debug("configured", "base_url", display(a.client.base), "operations", len(a.byTool))
	return nil
}

// Describe describes the bridge with the configured API in its doc text.
func (b *bridge) Describe(ctx context.Context) (*sdk.Description, error) {
	d, err := b.Bridge.Describe(ctx)
	if err != nil {
		return nil, err
	}
	if a := b.api.Load(); a != nil {
		d.Description = a.doc()
	}
	return d, nil
}

// doc is help(ns)'s description, after the original bridge's.
func (a *api) doc() string {
	var s strings.Builder
	base := display(a.client.base)
	if a.spec != nil && a.spec.title != "" {
		fmt.Fprintf(&s, "HTTP API: %s (%s)", a.spec.title, base)
	} else {
		fmt.Fprintf(&s, "HTTP API: %s", base)
	}
	if a.spec != nil {
		fmt.Fprintf(&s, " — %d endpoints", len(a.spec.ops))
	}
	s.WriteString(".\nMethods: get(path, params=), post(path, json=), put(path, json=), patch(path, json=), delete(path); " +
		"each also takes headers= (and data= for a text or form body).")
	s.WriteString("\nResults are {ok, status, data, headers}; an error status is a result with ok False, not an exception.")
	if a.spec != nil {
		s.WriteString("\nUse search(pattern) to find endpoints by path, method, or summary. " +
			"Each endpoint is also a method named by its operationId, its arguments checked against the spec before the request is sent: " +
			"help() on it shows them.")
	}
	return s.String()
}

// current is the configured API, or an error before Configure.
func (b *bridge) current() (*api, error) {
	a := b.api.Load()
	if a == nil {
		return nil, sdk.Errorf(sdk.CodeUnavailable, "the http bridge is not configured")
	}
	return a, nil
}

// raw sends a request as given: in holds the arguments of any verb tool
// (post's, put's and patch's too, in the fields of get's).
func (b *bridge) raw(ctx context.Context, call *sdk.CallToolRequest, method string, in readArgs) (response, error) {
	a, err := b.current()
	if err != nil {
		return response{}, err
	}
	u, err := a.client.resolve(in.Path)
	if err != nil {
		return response{}, err
	}
	if len(in.Params) > 0 {
		q := u.Query()
		for name, v := range in.Params {
			vals, err := queryValues(v)
			if err != nil {
				return response{}, sdk.Errorf(sdk.CodeInvalidArgument, "params: %s: %v", name, err)
			}
			q[name] = append(q[name], vals...)
		}
		u.RawQuery = q.Encode()
	}
	var body []byte
	var contentType string
	hasJSON, hasData := len(in.JSON) > 0 && !isNull(in.JSON), len(in.Data) > 0 && !isNull(in.Data)
	switch {
	case hasJSON && hasData:
		return response{}, sdk.Errorf(sdk.CodeInvalidArgument, "give json= or data=, not both")
	case hasJSON:
		body, contentType, _ = encodeBody("application/json", in.JSON)
	case hasData:
		var s string
		if json.Unmarshal(in.Data, &s) == nil {
			body, contentType = []byte(s), "text/plain; charset=utf-8"
		} else if body, contentType, err = encodeBody("application/x-www-form-urlencoded", in.Data); err != nil {
			return response{}, sdk.Errorf(sdk.CodeInvalidArgument, "data: want a string or a dict of form fields: %v", err)
		}
	}
	r, err := newRequest(ctx, method, u, body, contentType)
	if err != nil {
		return response{}, err
	}
	for name, v := range in.Headers {
		if !httpguts.ValidHeaderFieldName(name) {
			return response{}, sdk.Errorf(sdk.CodeInvalidArgument, "headers: %q is not a valid header name", name)
		}
		s, err := headerValue(name, v)
		if err != nil {
			return response{}, err
		}
		r.Header.Set(name, s)
	}
	return a.client.send(ctx, call, r)
}

// operationHandler calls the operation that the tool is named for in the
// current configuration.
func (b *bridge) operationHandler(tool string) sdk.ToolHandler {
	return func(ctx context.Context, call *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		a, err := b.current()
		if err != nil {
			return nil, err
		}
		op := a.byTool[tool]
		if op == nil {
			return nil, sdk.Errorf(sdk.CodeNotFound, "%s: no such operation in the current spec", tool)
		}
		r, err := op.request(ctx, a.client, call.Arguments)
		if err != nil {
			return nil, err
		}
		res, err := a.client.send(ctx, call, r)
		if err != nil {
			return nil, err
		}
		content, err := json.Marshal(res)
		if err != nil {
			return nil, sdk.Errorf(sdk.CodeInternal, "%s: encoding the result: %v", tool, err)
		}
		return &sdk.CallToolResult{Content: content}, nil
	}
}

type searchArgs struct {
	Query string `json:"query" jsonschema:"words, a glob on the path, or a regular expression; may start with a method: \"GET /pet/*\""`
}

func (b *bridge) search(_ context.Context, _ *sdk.CallToolRequest, in searchArgs) ([]searchHit, error) {
	a, err := b.current()
	if err != nil {
		return nil, err
	}
	if a.spec == nil {
		return nil, sdk.Errorf(sdk.CodeInvalidArgument, "search needs an OpenAPI document: this bridge has no spec configured")
	}
	return a.spec.search(in.Query), nil
}

// redactor is the current configuration's redactor (nil, which redacts
// nothing, before Configure).
func (b *bridge) redactor() *sdk.Redactor {
	if a := b.api.Load(); a != nil {
		return a.client.redact
	}
	return nil
}

// Interface guards.
var (
	_ sdk.BridgeServer = (*bridge)(nil)
	_ sdk.Shutdowner   = (*bridge)(nil)
)
