package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	"golang.org/x/net/http/httpguts"

	"github.com/parselbox/parselbox/sdk"
)

// version is the bridge's implementation version.
const version = "v0.1.0"

// config is the bridge's `config` block; see doc.go.
type config struct {
	Endpoint string            `json:"endpoint"`
	Headers  map[string]string `json:"headers"`
	sdk.TokenConfig
	// Timeout bounds one request; 0 means no limit.
	Timeout sdk.Duration `json:"timeout" default:"60s"`
}

// parseConfig decodes and checks a config block, and reports its
// credentials to the host (req.AddSecrets). Its errors are
// *sdk.ConfigError naming the key, and never quote the values of token or
// headers.
func parseConfig(req *sdk.ConfigureRequest) (*config, error) {
	c, err := sdk.DecodeConfig[config](req)
	if err != nil {
		return nil, err
	}
	bad := func(key, format string, args ...any) error {
		return &sdk.ConfigError{Key: key, Message: fmt.Sprintf(format, args...)}
	}
	if c.Endpoint == "" {
		return nil, bad("endpoint", "required: the URL of the GraphQL API, e.g. https://api.example.com/graphql")
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, bad("endpoint", "%s is not an http:// or https:// URL", redactedURL(c.Endpoint))
	}
	token := c.Token.Value()
	for _, name := range slices.Sorted(maps.Keys(c.Headers)) {
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, bad("headers", "%q is not a valid header name", name)
		}
		if !httpguts.ValidHeaderFieldValue(c.Headers[name]) {
			return nil, bad("headers."+name, "the value of %q contains a line break or control character", name)
		}
		if token != "" && strings.EqualFold(name, "Authorization") {
			return nil, bad("headers."+name, "set a token or headers.Authorization, not both")
		}
	}
	if token != "" && !httpguts.ValidHeaderFieldValue(token) {
		return nil, bad("token", "the token contains a line break or control character")
	}
	req.AddSecrets(secretsOf(&c)...)
	return &c, nil
}

// bridge is the GraphQL bridge: an sdk.Bridge whose description names the
// configured endpoint and whose every result, error and log line passes
// through the redactor, so that no credential reaches the sandbox.
type bridge struct {
	*sdk.Bridge

	state atomic.Pointer[state] // nil until configured
}

// state is what one Configure sets up.
type state struct {
	client *client
	redact *sdk.Redactor

	sem    chan struct{} // held while introspecting; guards schema
	schema *schema       // cached introspection, nil until the first success
}

func newBridge() *bridge {
	b := &bridge{}
	b.Bridge = sdk.NewBridge(&sdk.Info{Name: "graphql", Version: version, Description: describeBridge("")}, &sdk.Options{
		Configure: b.configure,
		// The host removes the credentials from everything the bridge
		// returns; the bridge does too, as a second layer.
		Middleware: []sdk.Middleware{sdk.RedactMiddleware(b.redactor)},
	})
	sdk.AddTool(b.Bridge, &sdk.Tool{Name: "graphql", Description: graphqlDoc, InputSchema: graphqlSchema}, b.graphql)
	sdk.AddTool(b.Bridge, &sdk.Tool{Name: "search", Description: searchDoc}, b.search)
	sdk.AddTool(b.Bridge, &sdk.Tool{Name: "describe", Description: describeDoc, InputSchema: describeSchema}, b.describe)
	return b
}

// configure sets up the client. It does not contact the server: the schema
// is introspected on first use, so a server that is down now does not keep
// the bridge (and the sandbox) from starting.
func (b *bridge) configure(_ context.Context, req *sdk.ConfigureRequest) error {
	c, err := parseConfig(req)
	if err != nil {
		return err
	}
	r := newRedactor(c)
	st := &state{client: newClient(c, r), redact: r, sem: make(chan struct{}, 1)}
	b.state.Store(st)
	b.Logger().Debug("configured", "endpoint", st.client.label)
	return nil
}

func (b *bridge) current() (*state, error) {
	st := b.state.Load()
	if st == nil {
		return nil, sdk.Errorf(sdk.CodeUnavailable, "the graphql bridge is not configured")
	}
	return st, nil
}

// Describe implements sdk.BridgeServer: the bridge's doc text names the
// configured endpoint.
func (b *bridge) Describe(ctx context.Context) (*sdk.Description, error) {
	d, err := b.Bridge.Describe(ctx)
	if err != nil {
		return nil, err
	}
	if st := b.state.Load(); st != nil {
		d.Description = describeBridge(st.client.label)
	}
	return d, nil
}

// redactor is the current configuration's redactor; nil, which redacts
// nothing, until configured.
func (b *bridge) redactor() *sdk.Redactor {
	if st := b.state.Load(); st != nil {
		return st.redact
	}
	return nil
}

// schemaFor returns the introspected schema, introspecting on first use. A
// failure is not cached: the next call tries again.
func (st *state) schemaFor(ctx context.Context) (*schema, error) {
	select {
	case st.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the schema of %s: %w", st.client.label, ctx.Err())
	}
	defer func() { <-st.sem }()
	if st.schema != nil {
		return st.schema, nil
	}
	s, err := st.client.introspect(ctx)
	if err != nil {
		return nil, err
	}
	st.schema = s
	return s, nil
}

// --- tools -------------------------------------------------------------------

const graphqlDoc = `Run a GraphQL query or mutation and return the response as {"data": ..., "errors": [...] or None} ` +
	`("extensions" too when the server sends it). GraphQL errors (a bad field, a failed resolver) come back ` +
	`in "errors", with whatever "data" the server produced; they do not raise. ` +
	`Pass values as variables rather than pasting them into the query: ` +
	`graphql('query($code: ID!) { country(code: $code) { name } }', {"code": "FR"}). ` +
	`Raises ConnectionError when the endpoint cannot be reached, RuntimeError when it answers with something that is not GraphQL.`

// graphqlSchema is written out so that variables and operation_name may be
// None in Python.
var graphqlSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"query": {"type": "string", "description": "the GraphQL document: a query or a mutation"},
		"variables": {"type": ["object", "null"], "description": "values for the document's $variables, by name"},
		"operation_name": {"type": ["string", "null"], "description": "the operation to run when the document defines several"}
	},
	"required": ["query"],
	"additionalProperties": false
}`)

type graphqlIn struct {
	Query         string                     `json:"query"`
	Variables     map[string]json.RawMessage `json:"variables"`
	OperationName string                     `json:"operation_name"`
}

// response is a GraphQL response as the sandbox sees it.
type response struct {
	Data       json.RawMessage `json:"data"`
	Errors     json.RawMessage `json:"errors"`
	Extensions json.RawMessage `json:"extensions,omitempty"`
}

func (b *bridge) graphql(ctx context.Context, req *sdk.CallToolRequest, in graphqlIn) (response, error) {
	st, err := b.current()
	if err != nil {
		return response{}, err
	}
	if strings.TrimSpace(in.Query) == "" {
		return response{}, sdk.Errorf(sdk.CodeInvalidArgument, "query is empty: pass a GraphQL document, e.g. '{ __typename }'")
	}
	var vars json.RawMessage
	if in.Variables != nil {
		if vars, err = json.Marshal(in.Variables); err != nil {
			return response{}, sdk.Errorf(sdk.CodeInvalidArgument, "variables: %v", err)
		}
	}
	r, err := st.client.do(ctx, req, in.Query, vars, in.OperationName)
	if err != nil {
		return response{}, err
	}
	return *r, nil
}

const searchDoc = `Find the API's queries and mutations: those whose name, description, arguments or return type ` +
	`match pattern (a case-insensitive regular expression, or plain text when it is not a valid one). ` +
	`Start the pattern with "query" or "mutation" to keep only that kind ("mutation country"; "query" alone lists every query). ` +
	`Returns [{"name", "type": "query"|"mutation", "description" (first 120 characters), "args": ["code: ID!", ...], "returns": "Country"}]; ` +
	`a blank pattern returns []. Then describe() a type or an operation for its details.`

type searchIn struct {
	Pattern string `json:"pattern" jsonschema:"a regular expression or text, optionally starting with query or mutation"`
}

func (b *bridge) search(ctx context.Context, _ *sdk.CallToolRequest, in searchIn) ([]opSummary, error) {
	st, err := b.current()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Pattern) == "" {
		return []opSummary{}, nil
	}
	s, err := st.schemaFor(ctx)
	if err != nil {
		return nil, err
	}
	return s.search(in.Pattern), nil
}

const describeDoc = `Describe types or operations of the API's schema. describe("Country") returns ` +
	`{"name", "kind", "description", "fields": [{"name", "type", "description", "args"}]}; an input type has ` +
	`"inputFields" instead of "fields", an enum "values", a union or interface "possibleTypes". ` +
	`The name of a query or mutation ("country") returns its description, arguments (with types and defaults) and return type. ` +
	`Type names are case-sensitive. An unknown name raises ValueError, suggesting similar names. ` +
	`With a list of names, returns a dict from each name to its description, or to {"error": "..."} for an unknown name.`

var describeSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"names": {
			"description": "a type or operation name, or a list of them",
			"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
		}
	},
	"required": ["names"],
	"additionalProperties": false
}`)

type describeIn struct {
	Names json.RawMessage `json:"names"`
}

func (b *bridge) describe(ctx context.Context, _ *sdk.CallToolRequest, in describeIn) (any, error) {
	st, err := b.current()
	if err != nil {
		return nil, err
	}
	// describeSchema has let through only a string or a list of strings.
	var one string
	var many []string
	if json.Unmarshal(in.Names, &one) != nil {
		if err := json.Unmarshal(in.Names, &many); err != nil {
			return nil, sdk.Errorf(sdk.CodeInvalidArgument, "names must be a string or a list of strings")
		}
	} else if strings.TrimSpace(one) == "" {
		return nil, sdk.Errorf(sdk.CodeInvalidArgument, "names is empty: pass a type name such as %q, or a list of names", "Query")
	}
	s, err := st.schemaFor(ctx)
	if err != nil {
		return nil, err
	}
	if many == nil {
		return s.describe(strings.TrimSpace(one))
	}
	out := make(map[string]any, len(many))
	for _, name := range many {
		if doc, err := s.describe(strings.TrimSpace(name)); err != nil {
			out[name] = map[string]string{"error": err.Error()}
		} else {
			out[name] = doc
		}
	}
	return out, nil
}

// describeBridge is the bridge's doc text, shown by help(ns).
func describeBridge(endpoint string) string {
	head := "GraphQL API."
	if endpoint != "" {
		head = "GraphQL API: " + endpoint + "."
	}
	return head + `
  graphql(query, variables=None) → {"data": ..., "errors": [...] or None}: run a query or mutation.
  search(pattern) → the queries and mutations matching pattern (regex or text; start it with "query" or "mutation" to keep one kind).
  describe(names) → a type's fields (input types: inputFields; enums: values), or an operation's arguments and return type.
Credentials are added on the host; they are never visible here.`
}

var (
	_ sdk.BridgeServer = (*bridge)(nil)
	_ sdk.Shutdowner   = (*bridge)(nil)
)
