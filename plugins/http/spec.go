package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"

	"github.com/parselbox/parselbox/sdk"
)

// specTimeout bounds loading the OpenAPI document (and the documents it
// refers to).
const specTimeout = 2 * time.Minute

// spec is an OpenAPI document, indexed.
type spec struct {
	doc   *openapi3.T
	title string
	ops   []*operation // by path, then method
}

// operation is one operation of the document, and the tool that calls it.
type operation struct {
	method, path string
	id           string // operationId, may be empty
	tool         string // the tool's name
	summary      string
	description  string
	deprecated   bool
	params       []*param // in argument order
	body         *requestBody
	args         []string       // the arguments' names: params', then body's
	route        *routers.Route // for request validation
	responseRef  *openapi3.SchemaRef
}

// param is a parameter of an operation.
type param struct {
	*openapi3.Parameter
	// alias is the name as a Python identifier ("X_Request_Id" for
	// "X-Request-Id"), accepted as well; "" when the name is one already.
	alias string
}

// requestBody is an operation's request body, given as one argument.
type requestBody struct {
	arg         string // "body", or "request_body" when a parameter is named body
	mediaType   string
	required    bool
	description string
	schema      *openapi3.SchemaRef
}

// loadSpec loads and validates the OpenAPI document at location (a file
// path, or an http(s) URL fetched with creds' credentials when it is on
// their origin). It returns the document and, for a URL, where it was.
func loadSpec(ctx context.Context, location string, creds *client) (*openapi3.T, *url.URL, error) {
	ctx, cancel := context.WithTimeout(ctx, specTimeout)
	defer cancel()
	hc := &http.Client{Timeout: specTimeout}
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.IsExternalRefsAllowed = true // the document is named by the host's configuration
	loader.ReadFromURIFunc = openapi3.ReadFromURIs(openapi3.ReadFromHTTP(hc), openapi3.ReadFromFile)

	var (
		doc *openapi3.T
		at  *url.URL
		err error
	)
	shown := location // as messages show it
	if strings.HasPrefix(location, "http://") || strings.HasPrefix(location, "https://") {
		if at, err = url.Parse(location); err != nil {
			return nil, nil, &sdk.ConfigError{Key: "spec", Message: "not a valid URL"}
		}
		shown = display(at)
		var data []byte
		if data, err = fetch(ctx, hc, at, creds); err != nil {
			return nil, nil, &sdk.ConfigError{Key: "spec", Message: err.Error()}
		}
		doc, err = loader.LoadFromDataWithPath(data, at)
	} else {
		file := strings.TrimPrefix(location, "file://")
		if !filepath.IsAbs(file) {
			if abs, err := filepath.Abs(file); err == nil {
				file = abs
			}
		}
		doc, err = loader.LoadFromFile(file)
	}
	if err != nil {
		return nil, nil, &sdk.ConfigError{Key: "spec", Message: fmt.Sprintf("%s: %v", shown, err)}
	}
	if doc.Paths == nil {
		doc.Paths = openapi3.NewPaths()
	}
	if err := doc.Validate(ctx, openapi3.DisableExamplesValidation(), openapi3.DisableSchemaDefaultsValidation()); err != nil {
		return nil, nil, &sdk.ConfigError{Key: "spec", Message: fmt.Sprintf("%s: not a valid OpenAPI document: %v", shown, err)}
	}
	return doc, at, nil
}

// fetch GETs a document; with the API's credentials only when it is on the
// API's origin.
func fetch(ctx context.Context, hc *http.Client, u *url.URL, creds *client) ([]byte, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	r.Header.Set("Accept", "application/json, application/yaml, */*")
	if creds != nil && sdk.SameOrigin(u, creds.base) {
		creds.authorize(r)
		// A redirect to another origin is followed without them (Go
		// keeps every header but Authorization and Cookie, and those too
		// for another port of the same host).
		c := *hc
		c.CheckRedirect = func(next *http.Request, via []*http.Request) error {
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			if !sdk.SameOrigin(next.URL, creds.base) {
				creds.unauthorize(next)
			}
			return nil
		}
		hc = &c
	}
	resp, err := hc.Do(r)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("GET %s: %v", display(u), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("GET %s: %s", display(u), resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 64<<20))
}

// serverURL is the base URL that a document names: its first server's URL
// with the variables' defaults, resolved against the document's own URL
// when relative (a document without servers is served from "/").
func serverURL(doc *openapi3.T, at *url.URL) (*url.URL, error) {
	raw := "/"
	if len(doc.Servers) > 0 && doc.Servers[0] != nil {
		s := doc.Servers[0]
		raw = s.URL
		for name, v := range s.Variables {
			if v != nil {
				raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
			}
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the spec's server URL %q is not valid: set base_url", raw)
	}
	if !u.IsAbs() {
		if at == nil {
			return nil, fmt.Errorf("the spec's server URL %q is relative and the spec is a file: set base_url", raw)
		}
		u = at.ResolveReference(u)
	}
	u, err = parseBaseURL(u.String())
	if err != nil {
		return nil, fmt.Errorf("the spec's server URL %q: %w (set base_url)", raw, err)
	}
	return u, nil
}

// methodRank orders the operations of one path by method; unknown methods
// come last.
func methodRank(m string) int {
	if i := slices.Index([]string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "QUERY"}, m); i >= 0 {
		return i
	}
	return math.MaxInt
}

// newSpec indexes the operations of doc. Header parameters that the bridge
// sets itself (configured headers, Authorization, Accept, Content-Type)
// are not arguments. Tools are named by operationId (method_path without
// one), avoiding the names in reserved.
func newSpec(doc *openapi3.T, configured http.Header, reserved []string) *spec {
	s := &spec{doc: doc}
	if doc.Info != nil {
		s.title = doc.Info.Title
	}
	paths := doc.Paths.Map()
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item := paths[p]
		if item == nil {
			continue
		}
		ops := item.Operations()
		methods := slices.SortedFunc(maps.Keys(ops), func(a, b string) int {
			return cmp.Or(cmp.Compare(methodRank(a), methodRank(b)), cmp.Compare(a, b))
		})
		for _, m := range methods {
			s.ops = append(s.ops, newOperation(doc, p, item, strings.ToUpper(m), ops[m], configured))
		}
	}
	nameTools(s.ops, reserved)
	return s
}

func newOperation(doc *openapi3.T, p string, item *openapi3.PathItem, method string, o *openapi3.Operation, configured http.Header) *operation {
	op := &operation{
		method: method, path: p, id: o.OperationID,
		summary: strings.TrimSpace(o.Summary), description: strings.TrimSpace(o.Description),
		deprecated: o.Deprecated,
	}
	var kept openapi3.Parameters
	for i, r := range slices.Concat(item.Parameters, o.Parameters) {
		if r == nil || r.Value == nil {
			continue
		}
		prm := r.Value
		if i < len(item.Parameters) && o.Parameters.GetByInAndName(prm.In, prm.Name) != nil {
			continue // the operation's parameters override the path item's
		}
		if prm.In == openapi3.ParameterInHeader && bridgeHeader(prm.Name, configured) {
			continue
		}
		kept = append(kept, &openapi3.ParameterRef{Value: prm})
		op.params = append(op.params, &param{Parameter: prm, alias: alias(prm.Name)})
	}
	// Arguments: path parameters in the order of the path, then the
	// others, required ones first.
	order := func(prm *param) (int, int) {
		if prm.In == openapi3.ParameterInPath {
			return 0, strings.Index(p, "{"+prm.Name+"}")
		}
		if prm.Required {
			return 1, 0
		}
		return 2, 0
	}
	slices.SortStableFunc(op.params, func(a, b *param) int {
		ga, ia := order(a)
		gb, ib := order(b)
		return cmp.Or(cmp.Compare(ga, gb), cmp.Compare(ia, ib))
	})
	if rb := o.RequestBody; rb != nil && rb.Value != nil {
		mt, media := pickMediaType(rb.Value.Content)
		arg := "body"
		if slices.ContainsFunc(op.params, func(prm *param) bool { return prm.Name == "body" || prm.alias == "body" }) {
			arg = "request_body"
		}
		op.body = &requestBody{arg: arg, mediaType: mt, required: rb.Value.Required, description: strings.TrimSpace(rb.Value.Description)}
		if media != nil {
			op.body.schema = media.Schema
		}
	}
	for _, prm := range op.params {
		op.args = append(op.args, prm.Name)
	}
	if op.body != nil {
		op.args = append(op.args, op.body.arg)
	}
	op.responseRef = successSchema(o)

	// The route that validation uses: this operation with the parameters
	// that are arguments. (The router is not needed: the tool knows its
	// operation, and the request goes to base_url, not to the spec's
	// server.)
	opCopy := *o
	opCopy.Parameters = kept
	itemCopy := *item
	itemCopy.Parameters = nil
	op.route = &routers.Route{Spec: doc, Path: p, PathItem: &itemCopy, Method: method, Operation: &opCopy}
	return op
}

// bridgeHeader reports whether the bridge sets the header itself, so that it
// is no argument.
func bridgeHeader(name string, configured http.Header) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Authorization", "Accept", "Content-Type":
		return true
	}
	_, ok := configured[http.CanonicalHeaderKey(name)]
	return ok
}

// pickMediaType chooses the request body's media type: JSON first, then a
// form, then text, then whatever comes first.
func pickMediaType(content openapi3.Content) (string, *openapi3.MediaType) {
	keys := slices.Sorted(maps.Keys(content))
	for _, want := range []func(string) bool{
		func(mt string) bool { return isJSON(baseMediaType(mt)) },
		func(mt string) bool { return baseMediaType(mt) == "application/x-www-form-urlencoded" },
		func(mt string) bool { return strings.HasPrefix(mt, "text/") },
		func(string) bool { return true },
	} {
		for _, k := range keys {
			if want(k) {
				return k, content[k]
			}
		}
	}
	return "application/json", nil
}

func baseMediaType(mt string) string {
	mt, _, _ = strings.Cut(mt, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// successSchema is the schema of the operation's first 2xx JSON response.
func successSchema(o *openapi3.Operation) *openapi3.SchemaRef {
	responses := o.Responses.Map() // empty when nil
	for _, code := range slices.Sorted(maps.Keys(responses)) {
		r := responses[code]
		if !strings.HasPrefix(code, "2") || r == nil || r.Value == nil {
			continue
		}
		for _, mt := range slices.Sorted(maps.Keys(r.Value.Content)) {
			if isJSON(baseMediaType(mt)) && r.Value.Content[mt].Schema != nil {
				return r.Value.Content[mt].Schema
			}
		}
	}
	return nil
}

// nameTools names each operation's tool: its operationId (characters that
// cannot be in a tool name become "_"), or method_path without one. A name
// that Python would see like a reserved name or an earlier tool gets the
// method appended, then a number.
func nameTools(ops []*operation, reserved []string) {
	taken := map[string]bool{}
	for _, r := range reserved {
		taken[sdk.PythonName(r)] = true
	}
	for _, op := range ops {
		name := toolName(op.id)
		if name == "" {
			name = strings.ToLower(op.method) + "_" + strings.Trim(nonIdent.ReplaceAllString(strings.NewReplacer("{", "", "}", "").Replace(op.path), "_"), "_")
		}
		candidate := name
		for i := 1; taken[sdk.PythonName(candidate)]; i++ {
			if i == 1 {
				candidate = name + "_" + strings.ToLower(op.method)
			} else {
				candidate = fmt.Sprintf("%s_%d", name, i)
			}
		}
		op.tool = candidate
		taken[sdk.PythonName(candidate)] = true
	}
}

var nonIdent = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// toolName makes an operationId a valid tool name: one segment (no "."),
// without spaces or control characters.
func toolName(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r <= ' ' || r == 0x7f {
			return '_'
		}
		return r
	}, strings.TrimSpace(id))
}

// pythonName is the name under which the host exposes a tool in Python:
// every character that cannot be in an identifier becomes "_", and a
// leading digit gets a "_" before it.
func pythonName(name string) string {
	var b strings.Builder
	for i, c := range name {
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9':
			b.WriteRune(c)
		case i == 0 && c >= '0' && c <= '9':
			b.WriteByte('_')
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// alias is a parameter name as a Python identifier, or "" when it is one.
func alias(name string) string {
	if a := pythonName(name); a != name {
		return a
	}
	return ""
}
