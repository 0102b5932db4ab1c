package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parselbox/parselbox/sdk"
)

// maxResponse bounds the body of one response; the sandbox gets at most a
// 64 MiB message from a bridge.
const maxResponse = 32 << 20

// client posts GraphQL requests to one endpoint.
type client struct {
	endpoint string        // the URL posted to
	label    string        // the endpoint as messages show it: no userinfo, no query
	header   http.Header   // sent with every request, credentials included
	timeout  time.Duration // bounds one request, response included; 0: none
	redact   *sdk.Redactor // the credentials, out of a body before it is cut short
	http     *http.Client
}

// errTimedOut is the cause of a request's context when its timeout passes.
var errTimedOut = errors.New("request timed out")

func newClient(c *config, r *sdk.Redactor) *client {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/graphql-response+json, application/json;q=0.9")
	h.Set("User-Agent", "parselbox-bridge-graphql/"+version)
	for name, value := range c.Headers {
		h.Set(name, value)
	}
	if !c.Token.IsZero() {
		h.Set("Authorization", "Bearer "+c.Token.Value())
	}
	return &client{
		endpoint: c.Endpoint,
		label:    redactedURL(c.Endpoint),
		header:   h,
		timeout:  c.Timeout.D(),
		redact:   r,
		http: &http.Client{
			Transport: http.DefaultTransport.(*http.Transport).Clone(),
			// Redirects are not followed: a POST turns into a GET on 301/302,
			// and headers such as X-Api-Key would follow it to any host.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// redactedURL shows a URL without its password and query, which may hold
// credentials.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

type request struct {
	Query         string          `json:"query"`
	Variables     json.RawMessage `json:"variables,omitempty"`
	OperationName string          `json:"operationName,omitempty"`
}

// do posts one request. A response whose body is a GraphQL response (a JSON
// object with "data" or "errors") is returned whatever its HTTP status; a
// transport failure is CodeUnavailable (ConnectionError) naming the
// endpoint; any other answer is CodeInternal (RuntimeError) with the status.
// req, when set, receives a log line per request (a task's log).
func (c *client) do(ctx context.Context, req *sdk.CallToolRequest, query string, variables json.RawMessage, operationName string) (*response, error) {
	body, err := json.Marshal(request{Query: query, Variables: variables, OperationName: operationName})
	if err != nil {
		return nil, sdk.Errorf(sdk.CodeInvalidArgument, "encoding the request: %v", err)
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, c.timeout, errTimedOut)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, sdk.Errorf(sdk.CodeInternal, "request to %s: %v", c.label, unwrapURLError(err))
	}
	hreq.Header = c.header.Clone()
	start := time.Now()
	req.Log("POST " + c.label)
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, c.transportError(ctx, "failed to connect to", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, c.transportError(ctx, "lost the connection to", err)
	}
	req.Log(fmt.Sprintf("HTTP %s, %d bytes in %s", resp.Status, len(data), time.Since(start).Round(time.Millisecond)))
	if len(data) > maxResponse {
		return nil, sdk.Errorf(sdk.CodeInternal, "the response of %s is larger than %d MiB; ask for fewer fields or items", c.label, maxResponse>>20)
	}
	if r, ok := parseResponse(data); ok {
		return r, nil
	}
	return nil, c.statusError(resp, data)
}

// transportError reports a failed request: the configured timeout as a
// TimeoutError, the call's own cancellation or deadline as such, anything
// else as a ConnectionError naming the endpoint.
func (c *client) transportError(ctx context.Context, what string, err error) error {
	if errors.Is(context.Cause(ctx), errTimedOut) {
		return sdk.Errorf(sdk.CodeTimeout, "no response from GraphQL endpoint %s within %s (the bridge's timeout)", c.label, c.timeout)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("request to %s: %w", c.label, ctx.Err())
	}
	return sdk.Errorf(sdk.CodeUnavailable, "%s GraphQL endpoint %s: %v", what, c.label, unwrapURLError(err))
}

// unwrapURLError drops net/http's `Post "URL": ` prefix: the URL may hold
// credentials, and messages name the endpoint themselves.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// statusError describes an answer that is not a GraphQL response.
func (c *client) statusError(resp *http.Response, body []byte) error {
	what := "answered HTTP " + resp.Status
	if resp.StatusCode/100 == 2 {
		what += " with a body that is not a GraphQL response"
	}
	if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" {
		if u, err := resp.Request.URL.Parse(loc); err == nil {
			what += "; it redirects to " + redactedURL(u.String()) + " (configure that URL as the endpoint)"
		}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err == nil {
			what += " (" + mt + ")"
		}
	}
	// Redacted before it is cut: a cut through a credential would leave
	// its start, which no redactor recognizes.
	if s := snippet([]byte(c.redact.Redact(string(body))), 200); s != "" {
		what += ": " + s
	}
	return sdk.Errorf(sdk.CodeInternal, "GraphQL endpoint %s %s", c.label, what)
}

// snippet is the start of body as one line of text.
func snippet(body []byte, n int) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(body), "�")), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// parseResponse reads a GraphQL response: a JSON object with "data" or
// "errors". Empty or null errors become null.
func parseResponse(body []byte) (*response, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return nil, false
	}
	data, hasData := m["data"]
	errs, hasErrors := m["errors"]
	if !hasData && !hasErrors {
		return nil, false
	}
	r := &response{Data: data, Extensions: m["extensions"]}
	if hasErrors && !isEmpty(errs) {
		r.Errors = errs
	}
	if isEmpty(r.Extensions) {
		r.Extensions = nil
	}
	return r, true
}

// isEmpty reports whether a JSON value is missing, null, [] or {}.
func isEmpty(v json.RawMessage) bool {
	var x any
	if len(v) == 0 || json.Unmarshal(v, &x) != nil || x == nil {
		return true
	}
	switch x := x.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}
