package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/parselbox/parselbox/sdk"
)

// The request never leaves base_url's origin, whatever a call gives as its
// path: paths with "..", encoded slashes, scheme-relative and absolute URLs,
// control characters. The seeds (below and in testdata/fuzz) run in every
// go test; `go test -fuzz FuzzResolve` searches further.
func FuzzResolve(f *testing.F) {
	for _, seed := range [][2]string{
		{"https://api.example.com/v1", "/pets/1"},
		{"https://api.example.com/v1/", "pets/1?limit=2"},
		{"https://api.example.com/v1", "../../admin"},
		{"https://api.example.com/v1", "/%2e%2e/%2e%2e/admin"},
		{"https://api.example.com/v1", "/files/a%2Fb c"},
		{"https://api.example.com/v1", "//evil.example.com/x"},
		{"https://api.example.com/v1", "\\\\evil.example.com/x"},
		{"https://api.example.com/v1", "https://evil.example.com/v1/x"},
		{"https://api.example.com/v1", "https://api.example.com@evil.example.com/x"},
		{"https://api.example.com/v1", "https://API.example.com:443/v2/x"},
		{"https://api.example.com/v1", "http://api.example.com/v1/x"},
		{"https://api.example.com/v1", "https:evil.example.com"},
		{"https://api.example.com/v1", "/\x00x"},
		{"http://127.0.0.1:8080/api", "http://127.0.0.1:8081/api"},
		{"http://[::1]:80/a", "http://[::1]/a/b"},
		{"https://u:p@api.example.com/v1", "https://u:p@api.example.com/v1/x"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, base, path string) {
		b, err := parseBaseURL(base)
		if err != nil {
			t.Skip()
		}
		c := &client{base: b}
		u, err := c.resolve(path)
		if err != nil {
			return
		}
		checkOrigin(t, c, u.String(), path)
		if u.User != nil {
			t.Errorf("resolve(%q) keeps a userinfo: %s", path, u)
		}
		if !strings.HasPrefix(path, "//") && !strings.Contains(path, "://") && u.Scheme == b.Scheme && !strings.HasPrefix(u.EscapedPath(), b.EscapedPath()) {
			t.Errorf("resolve(%q) = %s: a relative path left the base path %s", path, u, b.EscapedPath())
		}
		r, err := newRequest(context.Background(), http.MethodGet, u, nil, "")
		if err != nil {
			return
		}
		checkOrigin(t, c, r.URL.String(), path)
		if r.Host != "" && !strings.EqualFold(r.Host, r.URL.Host) {
			t.Errorf("resolve(%q): the request's Host %q is not its URL's %q", path, r.Host, r.URL.Host)
		}
	})
}

// A path parameter cannot take a request elsewhere either: whatever its
// value, it stays one escaped segment of the path on the API's origin.
func FuzzPathParameter(f *testing.F) {
	for _, seed := range []string{"ada", "../../admin", "a/b", "a%2Fb", "http://evil.example.com/", "//evil.example.com", "?x=1#frag", "..", "%2e%2e", "\x00\r\n", "@evil.example.com"} {
		f.Add(seed)
	}
	dir := f.TempDir()
	spec := filepath.Join(dir, "files.json")
	err := os.WriteFile(spec, []byte(`{"openapi": "3.0.3", "info": {"title": "files", "version": "1"},
		"paths": {"/users/{user}/files/{name}": {"get": {"operationId": "getFile", "parameters": [
			{"name": "user", "in": "path", "required": true, "schema": {"type": "string"}},
			{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}}],
			"responses": {"200": {"description": "ok"}}}}}}`), 0o644)
	if err != nil {
		f.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(spec)
	if err != nil {
		f.Fatal(err)
	}
	base, _ := parseBaseURL("https://files.example.com/api")
	c := &client{base: base, headers: http.Header{}}
	op := newSpec(doc, c.headers, builtin).ops[0]
	f.Fuzz(func(t *testing.T, v string) {
		args, _ := json.Marshal(map[string]string{"user": v, "name": v})
		r, err := op.request(context.Background(), c, args)
		if err != nil {
			return
		}
		checkOrigin(t, c, r.URL.String(), v)
		if !strings.HasPrefix(r.URL.EscapedPath(), "/api/users/") {
			t.Errorf("user=name=%q: the request goes to %s", v, r.URL)
		}
		if segs := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/api/"), "/"); len(segs) != 4 {
			t.Errorf("user=name=%q: the path %s is not 4 segments: a parameter added some", v, r.URL.EscapedPath())
		}
	})
}

// checkOrigin fails t unless raw, parsed again as the HTTP client does, is
// on c's origin.
func checkOrigin(t *testing.T, c *client, raw, input string) {
	t.Helper()
	r, err := http.NewRequest(http.MethodGet, raw, nil)
	if err != nil {
		return // not sent at all
	}
	if !sdk.SameOrigin(r.URL, c.base) {
		t.Errorf("%q is sent to %s://%s, not to %s", input, r.URL.Scheme, r.URL.Host, c.origin())
	}
}
