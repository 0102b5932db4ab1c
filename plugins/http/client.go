package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parselbox/parselbox/sdk"
)

// maxBody bounds a response body that the bridge returns.
const maxBody = 32 << 20

// minSecret is the shortest value that is redacted: replacing shorter ones
// would garble responses (and such values protect nothing anyway).
const minSecret = 6

// client sends requests to one API: it adds the credentials, and keeps them
// out of everything it returns.
type client struct {
	base    *url.URL // scheme and host lower case, path without a trailing "/"
	headers http.Header
	token   string
	http    *http.Client
	timeout time.Duration
	secrets []string      // the credentials, reported to the host
	redact  *sdk.Redactor // the bridge's own redaction of them (a second layer)
}

// response is what a request returns to Python.
type response struct {
	OK      bool              `json:"ok" jsonschema:"whether the status is 2xx"`
	Status  int               `json:"status" jsonschema:"the HTTP status code"`
	Data    any               `json:"data" jsonschema:"the body: parsed JSON, text, bytes for binary content, None when empty"`
	Headers map[string]string `json:"headers" jsonschema:"the response headers, by lower-case name"`
}

func newClient(base *url.URL, cfg *config) *client {
	c := &client{base: base, headers: http.Header{}, token: cfg.Token.Value(), timeout: cfg.Timeout.D()}
	for k, v := range cfg.Headers {
		c.headers.Set(k, v)
	}
	c.secrets = secretsOf(base, c.headers, c.token)
	if len(c.secrets) > 0 {
		c.redact = sdk.NewRedactor(c.secrets...)
	}
	c.http = &http.Client{
		Transport: http.DefaultTransport.(*http.Transport).Clone(),
		// Redirects are followed within the API's origin only: the
		// credentials must not go anywhere else. Another origin's redirect
		// is returned as the result (status 3xx, headers.location).
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !sdk.SameOrigin(req.URL, c.base) {
				return http.ErrUseLastResponse
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			c.authorize(req)
			return nil
		},
	}
	return c
}

// secretsOf lists the credentials to keep out of results: the token, the
// values of configured headers that carry credentials (sdk.HeaderSecrets),
// and those of the base URL (sdk.URLSecrets).
func secretsOf(base *url.URL, headers http.Header, token string) []string {
	s := []string{token}
	for name, values := range headers {
		for _, v := range values {
			s = append(s, sdk.HeaderSecrets(name, v)...)
		}
	}
	s = append(s, sdk.URLSecrets(base.String())...)
	// sdk.NewRedactor dedupes them and replaces the longest first.
	return slices.DeleteFunc(s, func(v string) bool { return len(v) < minSecret })
}

// resolve turns the path given to a call into a URL under the base URL. A
// relative path ("pet/1", "/pet/1") is appended to the base URL's path; an
// absolute URL is accepted only on the base URL's origin.
func (c *client) resolve(p string) (*url.URL, error) {
	p = strings.TrimSpace(p)
	u, err := url.Parse(escapeInvalid(p))
	if err != nil {
		return nil, sdk.Errorf(sdk.CodeInvalidArgument, "path %q is not a valid URL path: %v", p, errors.Unwrap(err))
	}
	if u.Scheme != "" || u.Host != "" || strings.HasPrefix(p, "//") {
		if !sdk.SameOrigin(u, c.base) || u.Opaque != "" {
			return nil, sdk.Errorf(sdk.CodePermission, "%q is not on this API's origin %s: the bridge sends requests (and its credentials) only there; give a path such as %q",
				display(u), c.origin(), "/items/1")
		}
		out := *u
		out.User, out.Fragment, out.RawFragment = nil, "", ""
		return &out, nil
	}
	out := *c.base
	out.User = nil
	rel := strings.TrimLeft(u.EscapedPath(), "/")
	if rel != "" {
		out.RawPath = c.base.EscapedPath() + "/" + rel
		if out.Path, err = url.PathUnescape(out.RawPath); err != nil {
			return nil, sdk.Errorf(sdk.CodeInvalidArgument, "path %q: %v", p, err)
		}
	}
	out.RawQuery = u.RawQuery
	return &out, nil
}

// escapeInvalid percent-encodes the bytes that cannot appear in a URL as
// they are (spaces, quotes, non-ASCII), keeping the escapes already there:
// "/files/a%2Fb c" is the path segment "a/b c".
func escapeInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"<>\\^`{|}", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func (c *client) origin() string {
	return c.base.Scheme + "://" + c.base.Host
}

// display shows a URL without its user info (and so without a password).
func display(u *url.URL) string {
	v := *u
	v.User = nil
	return v.String()
}

// authorize adds the configured credentials and headers to a request; they
// replace headers of the same name given by the caller.
func (c *client) authorize(r *http.Request) {
	for k, v := range c.headers {
		r.Header[k] = slices.Clone(v)
	}
	if c.token != "" {
		r.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.base.User != nil {
		r.URL.User = c.base.User
	}
}

// unauthorize removes from a request what authorize added.
func (c *client) unauthorize(r *http.Request) {
	for k := range c.headers {
		r.Header.Del(k)
	}
	if c.token != "" {
		r.Header.Del("Authorization")
	}
	r.URL.User = nil
}

var errTimedOut = errors.New("timed out")

// send adds the credentials to r and sends it. A response of any status is
// a result; a request that gets no response is an error: TimeoutError,
// ConnectionError, or CancelledError when the call was cancelled.
func (c *client) send(ctx context.Context, call *sdk.CallToolRequest, r *http.Request) (response, error) {
	shown := r.Method + " " + display(r.URL)
	c.authorize(r)
	reqCtx := ctx
	if c.timeout > 0 {
		var cancel context.CancelFunc
		reqCtx, cancel = context.WithTimeoutCause(ctx, c.timeout, errTimedOut)
		defer cancel()
	}
	resp, err := c.http.Do(r.WithContext(reqCtx))
	if err != nil {
		return response{}, c.failure(ctx, reqCtx, shown, r.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return response{}, c.failure(ctx, reqCtx, shown, r.URL, err)
	}
	if len(body) > maxBody {
		return response{}, sdk.Errorf(sdk.CodeInternal, "%s: the response body is larger than %d MiB", shown, maxBody>>20)
	}
	call.Log(fmt.Sprintf("%s → %s", shown, resp.Status))
	out := response{
		OK:      resp.StatusCode >= 200 && resp.StatusCode < 300,
		Status:  resp.StatusCode,
		Headers: make(map[string]string, len(resp.Header)),
	}
	for k, v := range resp.Header {
		out.Headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	out.Data = decodeBody(resp.Header.Get("Content-Type"), body)
	return out, nil
}

// failure turns a request that got no response into the call's error.
func (c *client) failure(ctx, reqCtx context.Context, shown string, u *url.URL, err error) error {
	switch {
	case ctx.Err() != nil:
		return sdk.Errorf(sdk.CodeCancelled, "%s: cancelled", shown)
	case errors.Is(context.Cause(reqCtx), errTimedOut):
		return sdk.Errorf(sdk.CodeTimeout, "%s: no response within %s", shown, c.timeout)
	}
	// Go's message quotes the URL, with its user name (a credential where
	// the password is empty: "key:@host"): shown says which request it was.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		return sdk.Errorf(sdk.CodeTimeout, "%s: %s", shown, err.Error())
	}
	return sdk.Errorf(sdk.CodeUnavailable, "%s: cannot reach %s: %s", shown, u.Host, err.Error())
}

// decodeBody is a response body as Python sees it: parsed JSON for a JSON
// content type, text for text, bytes ({"__b64__": ...}) for binary content,
// None when empty.
func decodeBody(contentType string, body []byte) any {
	if len(body) == 0 {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if isJSON(mt) {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil && !dec.More() {
			return v
		}
		return string(body)
	}
	if isText(mt) || utf8.Valid(body) {
		return string(body)
	}
	return map[string]string{sdk.BytesKey: base64.StdEncoding.EncodeToString(body)}
}

func isJSON(mediaType string) bool {
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}

func isText(mediaType string) bool {
	return strings.HasPrefix(mediaType, "text/") || strings.HasSuffix(mediaType, "+xml") ||
		slices.Contains([]string{"application/xml", "application/javascript", "application/x-www-form-urlencoded", "application/yaml"}, mediaType)
}

// newRequest builds a request with a JSON, form or text body.
func newRequest(ctx context.Context, method string, u *url.URL, body []byte, contentType string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	r, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, sdk.Errorf(sdk.CodeInvalidArgument, "%s %s: %v", method, display(u), err)
	}
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	return r, nil
}
