package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/sdk"
)

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t)
	notOpenAPI := writeFile(t, "hello.yaml", "hello: world\n")
	noServers := writeFile(t, "noservers.yaml", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n")
	for name, tc := range map[string]struct {
		cfg  map[string]any
		want string
	}{
		"unknown key":            {map[string]any{"base_url": api.Base, "token": testToken, "tokn": "x"}, `tokn: unknown key (did you mean "token"?)`},
		"neither base nor spec":  {map[string]any{"token": testToken}, "base_url is required (or give a spec whose servers list has a URL)"},
		"relative base_url":      {map[string]any{"base_url": "/api"}, "base_url: want an absolute http:// or https:// URL"},
		"ftp base_url":           {map[string]any{"base_url": "ftp://example.com"}, "base_url: want an absolute http:// or https:// URL"},
		"base_url with a query":  {map[string]any{"base_url": "https://example.com/?key=" + testToken}, "base_url: a query or fragment is not supported: give query parameters with each call"},
		"token and token_env":    {map[string]any{"base_url": api.Base, "token": testToken, "token_env": tokenEnv}, "set token or token_env, not both"},
		"token_env not passed":   {map[string]any{"base_url": api.Base, "token_env": "PARSELBOX_TEST_NO_SUCH_VAR"}, "token_env: the environment variable PARSELBOX_TEST_NO_SUCH_VAR is empty or not passed to the bridge (list it in the bridge's env = [...])"},
		"token not a string":     {map[string]any{"base_url": api.Base, "token": 5}, "token: expected string, got number"},
		"headers not an object":  {map[string]any{"base_url": api.Base, "headers": "X-A: b"}, "headers: expected an object, got a string"},
		"header not a string":    {map[string]any{"base_url": api.Base, "headers": map[string]any{"X-A": 1}}, "headers.X-A: expected string, got number"},
		"bad header name":        {map[string]any{"base_url": api.Base, "headers": map[string]any{"Bad Name": testToken}}, `headers: "Bad Name" is not a valid header name`},
		"timeout not a duration": {map[string]any{"base_url": api.Base, "timeout": "soon"}, `timeout: expected seconds (a number) or a duration such as "30s", got "soon"`},
		"negative timeout":       {map[string]any{"base_url": api.Base, "timeout": -1}, "timeout: must not be negative"},
		"spec file missing":      {map[string]any{"base_url": api.Base, "spec": "/no/such/petstore.yaml"}, "spec: /no/such/petstore.yaml: "},
		"spec not OpenAPI":       {map[string]any{"base_url": api.Base, "spec": notOpenAPI}, "not a valid OpenAPI document"},
		"spec URL not found":     {map[string]any{"spec": api.srv.URL + "/nope.json"}, "spec: GET " + api.srv.URL + "/nope.json: 404 Not Found"},
		"relative server in a file": {map[string]any{"spec": specFile(t, "petstore-3.1.json")},
			`the spec's server URL "/api/v3" is relative and the spec is a file: set base_url`},
		"file without servers": {map[string]any{"spec": noServers}, `the spec's server URL "/" is relative and the spec is a file: set base_url`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw, _ := json.Marshal(tc.cfg)
			err := newBridge().Configure(t.Context(), &sdk.ConfigureRequest{Config: raw})
			if err == nil {
				t.Fatalf("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("the error shows the token: %v", err)
			}
		})
	}
}

func TestConfigValues(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		raw  string
		want config
	}{
		"defaults":        {`{"base_url": "https://Example.COM/v1/"}`, config{BaseURL: "https://Example.COM/v1/", Timeout: sdk.Duration(60 * time.Second)}},
		"null is absent":  {`{"base_url": "https://example.com", "timeout": null, "spec": null}`, config{BaseURL: "https://example.com", Timeout: sdk.Duration(60 * time.Second)}},
		"seconds":         {`{"base_url": "https://example.com", "timeout": 1.5}`, config{BaseURL: "https://example.com", Timeout: sdk.Duration(1500 * time.Millisecond)}},
		"duration":        {`{"base_url": "https://example.com", "timeout": "2m"}`, config{BaseURL: "https://example.com", Timeout: sdk.Duration(2 * time.Minute)}},
		"no limit":        {`{"base_url": "https://example.com", "timeout": 0}`, config{BaseURL: "https://example.com"}},
		"token from env":  {`{"base_url": "https://example.com", "token_env": "` + tokenEnv + `"}`, config{BaseURL: "https://example.com", TokenConfig: sdk.TokenConfig{Token: sdk.NewSecret(testToken), TokenEnv: tokenEnv}, Timeout: sdk.Duration(60 * time.Second)}},
		"spec, no base":   {`{"spec": "api.yaml"}`, config{Spec: "api.yaml", Timeout: sdk.Duration(60 * time.Second)}},
		"headers + token": {`{"base_url": "https://example.com", "headers": {"X-A": "b"}, "token": "t"}`, config{BaseURL: "https://example.com", Headers: map[string]string{"X-A": "b"}, TokenConfig: sdk.TokenConfig{Token: sdk.NewSecret("t")}, Timeout: sdk.Duration(60 * time.Second)}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, err := parseConfig(&sdk.ConfigureRequest{Config: json.RawMessage(tc.raw)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBaseURL(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		base, path string
		want       string // the URL requested, or the error's code
	}{
		"path":                    {"https://api.example.com/v1", "/pets/1", "https://api.example.com/v1/pets/1"},
		"path without a slash":    {"https://api.example.com/v1/", "pets/1", "https://api.example.com/v1/pets/1"},
		"empty path":              {"https://api.example.com/v1", "", "https://api.example.com/v1"},
		"query":                   {"https://api.example.com", "/pets?limit=2", "https://api.example.com/pets?limit=2"},
		"escaped":                 {"https://api.example.com/v1", "/files/a%2Fb c", "https://api.example.com/v1/files/a%2Fb%20c"},
		"same origin":             {"https://api.example.com/v1", "https://API.example.com:443/v2/x", "https://API.example.com:443/v2/x"},
		"other host":              {"https://api.example.com/v1", "https://evil.example.com/v1/x", string(sdk.CodePermission)},
		"scheme-relative":         {"https://api.example.com/v1", "//evil.example.com/x", string(sdk.CodePermission)},
		"other scheme":            {"https://api.example.com/v1", "http://api.example.com/v1/x", string(sdk.CodePermission)},
		"other port":              {"https://api.example.com/v1", "https://api.example.com:8443/v1/x", string(sdk.CodePermission)},
		"host:port is not a path": {"https://api.example.com/v1", "localhost:8080/x", string(sdk.CodePermission)},
		"user info is dropped":    {"https://api.example.com", "https://someone:pw@api.example.com/x", "https://api.example.com/x"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			base, err := parseBaseURL(tc.base)
			if err != nil {
				t.Fatal(err)
			}
			c := newClient(base, &config{})
			u, err := c.resolve(tc.path)
			got := ""
			if err != nil {
				te, _ := err.(*sdk.ToolError)
				if te == nil {
					t.Fatalf("untyped error %v", err)
				}
				got = string(te.Code)
			} else {
				got = u.String()
			}
			if got != tc.want {
				t.Errorf("resolve(%q) = %s, want %s (%v)", tc.path, got, tc.want, err)
			}
		})
	}
}
