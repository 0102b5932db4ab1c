package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/parselbox/parselbox/plugins/graphql/internal/countries"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

func TestConfigure(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		config string
		want   string // substring of the error; "" for none
	}{
		"endpoint only":              {`{"endpoint": "http://127.0.0.1:1/graphql"}`, ""},
		"all keys":                   {`{"endpoint": "https://api.example.com/graphql", "headers": {"X-Client": "parselbox"}, "token": "t0ken-123"}`, ""},
		"token from the environment": {`{"endpoint": "http://x/graphql", "token_env": "` + tokenEnv + `"}`, ""},
		"timeout in seconds":         {`{"endpoint": "http://x/graphql", "timeout": 1.5}`, ""},
		"timeout as a duration":      {`{"endpoint": "http://x/graphql", "timeout": "2m"}`, ""},
		"no timeout":                 {`{"endpoint": "http://x/graphql", "timeout": 0}`, ""},
		"empty block":                {`{}`, "endpoint: required: the URL of the GraphQL API"},
		"token and token_env":        {`{"endpoint": "http://x/graphql", "token": "t0ken-123", "token_env": "` + tokenEnv + `"}`, "set token or token_env, not both"},
		"token_env not passed":       {`{"endpoint": "http://x/graphql", "token_env": "PARSELBOX_TEST_NO_SUCH_VARIABLE"}`, "token_env: the environment variable PARSELBOX_TEST_NO_SUCH_VARIABLE is empty or not passed to the bridge"},
		"negative timeout":           {`{"endpoint": "http://x/graphql", "timeout": -1}`, "timeout: must not be negative, got -1"},
		"bad timeout":                {`{"endpoint": "http://x/graphql", "timeout": "soon"}`, `timeout: expected seconds (a number) or a duration such as "30s", got "soon"`},
		"unknown key":                {`{"endpoint": "http://x/graphql", "url": "http://x"}`, `url: unknown key (known keys: endpoint, headers, token, token_env, timeout)`},
		"not an object":              {`["http://x"]`, "expected an object, got an array"},
		"endpoint not a string":      {`{"endpoint": 5}`, "endpoint: expected string, got number"},
		"headers not an object":      {`{"endpoint": "http://x/graphql", "headers": "X-A: b"}`, "headers: expected an object, got a string"},
		"header not a string":        {`{"endpoint": "http://x/graphql", "headers": {"X-A": 1}}`, "headers.X-A: expected string, got number"},
		"token not a string":         {`{"endpoint": "http://x/graphql", "token": true}`, "token: expected string, got boolean"},
		"relative endpoint":          {`{"endpoint": "/graphql"}`, "is not an http:// or https:// URL"},
		"other scheme":               {`{"endpoint": "ftp://x/graphql"}`, "is not an http:// or https:// URL"},
		"bad header name":            {`{"endpoint": "http://x/graphql", "headers": {"X A": "b"}}`, `"X A" is not a valid header name`},
		"header with newline":        {`{"endpoint": "http://x/graphql", "headers": {"X-Key": "s3cret-value\r\nX-Evil: 1"}}`, `the value of "X-Key" contains a line break`},
		"token and Authorization": {`{"endpoint": "http://x/graphql", "token": "t0ken-123", "headers": {"authorization": "Basic abc"}}`,
			"set a token or headers.Authorization, not both"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := sdktest.NewHarness(t, newBridge())
			err := c.Configure(t.Context(), &sdk.ConfigureRequest{Config: json.RawMessage(tc.config)})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Configure: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("Configure accepted %s", tc.config)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("Configure error %q does not contain %q", err, tc.want)
			}
			if err != nil && (strings.Contains(err.Error(), "t0ken-123") || strings.Contains(err.Error(), "s3cret-value") || strings.Contains(err.Error(), testToken)) {
				t.Errorf("the error quotes a credential: %v", err)
			}
		})
	}
}

func TestDescription(t *testing.T) {
	t.Parallel()
	c := configured(t, map[string]any{"endpoint": "https://ada:pw-12345@api.example.com/graphql?api_key=k-12345", "token": testToken})
	d, err := c.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := "GraphQL API: https://ada@api.example.com/graphql?…."; !strings.HasPrefix(d.Description, want) {
		t.Errorf("description does not start with %q:\n%s", want, d.Description)
	}
	var tools []string
	for _, tool := range d.Tools {
		tools = append(tools, tool.Name+"("+strings.Join(tool.Params, ", ")+")")
	}
	if diff := cmp.Diff([]string{"graphql(query, variables, operation_name)", "search(pattern)", "describe(names)"}, tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	all, _ := json.Marshal(d)
	for _, secret := range []string{testToken, "pw-12345", "k-12345"} {
		if strings.Contains(string(all), secret) {
			t.Errorf("the description shows %q", secret)
		}
	}
}

func TestGraphQL(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for name, tc := range map[string]struct {
		args map[string]any
		want string // the result, as JSON
	}{
		"nested types": {
			map[string]any{"query": `{ country(code: "FR") { name capital continent { code name } } }`},
			`{"data": {"country": {"name": "France", "capital": "Paris", "continent": {"code": "EU", "name": "Europe"}}}, "errors": null}`,
		},
		"variables": {
			map[string]any{"query": `query($c: ID!) { continent(code: $c) { countries { code } } }`, "variables": map[string]any{"c": "EU"}},
			`{"data": {"continent": {"countries": [{"code": "DE"}, {"code": "FR"}]}}, "errors": null}`,
		},
		"input type and enum": {
			map[string]any{"query": `query($f: CountryFilter) { countries(filter: $f, sort: POPULATION) { code population } }`,
				"variables": map[string]any{"f": map[string]any{"nameContains": "an"}}},
			`{"data": {"countries": [{"code": "JP", "population": 124000000}, {"code": "DE", "population": 84000000}, {"code": "FR", "population": 68000000}]}, "errors": null}`,
		},
		"null variables and operation name": {
			map[string]any{"query": `query A { continent(code: "AF") { name } } query B { continent(code: "OC") { name } }`, "variables": nil, "operation_name": "B"},
			`{"data": {"continent": {"name": "Oceania"}}, "errors": null}`,
		},
		"resolver error": {
			map[string]any{"query": `{ country(code: "XX") { name } }`},
			`{"data": {"country": null}, "errors": [{"message": "no country with code \"XX\"", "locations": [{"line": 1, "column": 3}], "path": ["country"]}]}`,
		},
		"validation error": {
			map[string]any{"query": `{ country(code: "FR") { zzzzzzzz } }`},
			`{"data": null, "errors": [{"message": "Cannot query field \"zzzzzzzz\" on type \"Country\".", "locations": [{"line": 1, "column": 25}]}]}`,
		},
		"missing variable": {
			map[string]any{"query": `query($c: ID!) { country(code: $c) { name } }`},
			`{"data": null, "errors": [{"message": "Variable \"$c\" of required type \"ID!\" was not provided.", "locations": [{"line": 1, "column": 7}]}]}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := configured(t, map[string]any{"endpoint": s.URL + "/graphql", "token": testToken})
			if diff := cmp.Diff(jsonValue(t, tc.want), mustCall(t, c, "graphql", tc.args)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMutation(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	c := configured(t, map[string]any{"endpoint": s.URL + "/graphql", "token": testToken})
	add := `mutation($c: NewCountry!) { addCountry(input: $c) { code name continent { name } } }`
	got := mustCall(t, c, "graphql", map[string]any{"query": add, "variables": map[string]any{"c": map[string]any{"code": "NZ", "name": "New Zealand", "continent": "OC"}}})
	want := `{"data": {"addCountry": {"code": "NZ", "name": "New Zealand", "continent": {"name": "Oceania"}}}, "errors": null}`
	if diff := cmp.Diff(jsonValue(t, want), got); diff != "" {
		t.Errorf("addCountry (-want +got):\n%s", diff)
	}
	got = mustCall(t, c, "graphql", map[string]any{"query": `{ continent(code: "OC") { countries { name } } }`})
	want = `{"data": {"continent": {"countries": [{"name": "Australia"}, {"name": "New Zealand"}]}}, "errors": null}`
	if diff := cmp.Diff(jsonValue(t, want), got); diff != "" {
		t.Errorf("after addCountry (-want +got):\n%s", diff)
	}
	got = mustCall(t, c, "graphql", map[string]any{"query": add, "variables": map[string]any{"c": map[string]any{"code": "NZ", "name": "Again", "continent": "OC"}}})
	want = `{"data": null, "errors": [{"message": "country \"NZ\" exists already", "locations": [{"line": 1, "column": 29}], "path": ["addCountry"]}]}`
	if diff := cmp.Diff(jsonValue(t, want), got); diff != "" {
		t.Errorf("duplicate addCountry (-want +got):\n%s", diff)
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	c := configured(t, map[string]any{"endpoint": s.URL + "/graphql", "token": testToken})
	for name, tc := range map[string]struct {
		pattern string
		want    []string // "type name(args) returns"
	}{
		"substring":            {"continent", []string{"query continent(code: ID!) Continent", "query continents() [Continent!]!", "mutation addCountry(input: NewCountry!) Country!"}},
		"regex":                {"^countr(y|ies) ", []string{"query countries(filter: CountryFilter, sort: Sort = \"NAME\") [Country!]!", "query country(code: ID!) Country"}},
		"matches arg types":    {"NewCountry", []string{"mutation addCountry(input: NewCountry!) Country!"}},
		"matches descriptions": {"careless", []string{"query authorization() String"}},
		"case-insensitive":     {"CONTINENTS", []string{"query continents() [Continent!]!"}},
		"queries only":         {"query\tcontinent", []string{"query continent(code: ID!) Continent", "query continents() [Continent!]!"}},
		"mutations only":       {"Mutation", []string{"mutation addCountry(input: NewCountry!) Country!"}},
		"mutation filter":      {"mutation continents", nil},
		"all queries":          {" query ", []string{"query authorization() String", "query continent(code: ID!) Continent", "query continents() [Continent!]!", "query countries(filter: CountryFilter, sort: Sort = \"NAME\") [Country!]!", "query country(code: ID!) Country"}},
		"lone bracket":         {"Country!]", []string{"query countries(filter: CountryFilter, sort: Sort = \"NAME\") [Country!]!"}},
		"invalid regex text":   {"[Country!", []string{"query countries(filter: CountryFilter, sort: Sort = \"NAME\") [Country!]!"}},
		"no match":             {"zebra", nil},
		"blank":                {"  ", nil},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := []string{}
			for _, item := range mustCall(t, c, "search", map[string]any{"pattern": tc.pattern}).([]any) {
				m := item.(map[string]any)
				var args []string
				for _, a := range m["args"].([]any) {
					args = append(args, a.(string))
				}
				// graphql-go lists arguments in map order.
				slices.Sort(args)
				got = append(got, fmt.Sprintf("%s %s(%s) %s", m["type"], m["name"], strings.Join(args, ", "), m["returns"]))
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("search(%q) (-want +got):\n%s", tc.pattern, diff)
			}
		})
	}
	// An item in full.
	got := mustCall(t, c, "search", map[string]any{"pattern": "addCountry"})
	want := `[{"name": "addCountry", "type": "mutation", "description": "Adds a country to a continent.", "args": ["input: NewCountry!"], "returns": "Country!"}]`
	if diff := cmp.Diff(jsonValue(t, want), got); diff != "" {
		t.Errorf("search item (-want +got):\n%s", diff)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	c := configured(t, map[string]any{"endpoint": s.URL + "/graphql", "token": testToken})
	// graphql-go lists input fields, enum values and arguments in map order.
	unordered := cmpopts.SortSlices(func(a, b any) bool { return fmt.Sprint(a) < fmt.Sprint(b) })
	for name, tc := range map[string]struct {
		names any
		want  string
	}{
		"object type": {"Country", `{"name": "Country", "kind": "OBJECT", "description": "A country, with its capital and population.", "fields": [
			{"name": "capital", "type": "String"},
			{"name": "capitalCity", "type": "String", "deprecated": "Use capital."},
			{"name": "code", "type": "ID!", "description": "ISO 3166-1 alpha-2 code, such as FR."},
			{"name": "continent", "type": "Continent!"},
			{"name": "languages", "type": "[String!]!"},
			{"name": "name", "type": "String!"},
			{"name": "population", "type": "Int", "description": "Inhabitants, rounded to millions."}]}`},
		"input type": {"NewCountry", `{"name": "NewCountry", "kind": "INPUT_OBJECT", "description": "A country to add.", "inputFields": [
			{"name": "capital", "type": "String"},
			{"name": "code", "type": "ID!"},
			{"name": "continent", "type": "ID!", "description": "Continent code."},
			{"name": "name", "type": "String!"},
			{"name": "population", "type": "Int"}]}`},
		"enum": {"Sort", `{"name": "Sort", "kind": "ENUM", "description": "The order of a list of countries.", "values": [
			{"name": "NAME", "description": "By name, A to Z."},
			{"name": "POPULATION", "description": "By population, largest first."}]}`},
		"root type with field args": {"Query", `{"name": "Query", "kind": "OBJECT", "fields": [
			{"name": "authorization", "type": "String", "description": "Echoes the Authorization header of the request (a careless server)."},
			{"name": "continent", "type": "Continent", "description": "A continent by its code; null when there is none.", "args": ["code: ID!"]},
			{"name": "continents", "type": "[Continent!]!", "description": "All continents."},
			{"name": "countries", "type": "[Country!]!", "description": "Countries, filtered and sorted.", "args": ["filter: CountryFilter", "sort: Sort = \"NAME\""]},
			{"name": "country", "type": "Country", "description": "A country by its code; an error when there is none.", "args": ["code: ID!"]}]}`},
		"scalar": {"ID", `{"name": "ID", "kind": "SCALAR", "description": "The ` + "`ID`" + ` scalar type represents a unique identifier, often used to refetch an object or as key for a cache. The ID type appears in a JSON response as a String; however, it is not intended to be human-readable. When expected as an input type, any string (such as ` + "`\\\"4\\\"`" + `) or integer (such as ` + "`4`" + `) input value will be accepted as an ID."}`},
		"query": {"countries", `{"name": "countries", "type": "query", "description": "Countries, filtered and sorted.", "returns": "[Country!]!", "args": [
			{"name": "filter", "type": "CountryFilter"},
			{"name": "sort", "type": "Sort", "default": "\"NAME\""}]}`},
		"mutation": {"addCountry", `{"name": "addCountry", "type": "mutation", "description": "Adds a country to a continent.", "returns": "Country!", "args": [
			{"name": "input", "type": "NewCountry!"}]}`},
		"list": {[]string{"Sort", "Contry"}, `{
			"Sort": {"name": "Sort", "kind": "ENUM", "description": "The order of a list of countries.", "values": [
				{"name": "NAME", "description": "By name, A to Z."},
				{"name": "POPULATION", "description": "By population, largest first."}]},
			"Contry": {"error": "no type or operation named \"Contry\" in the schema; did you mean Country, country?"}}`},
		"empty list": {[]string{}, `{}`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(jsonValue(t, tc.want), mustCall(t, c, "describe", map[string]any{"names": tc.names}), unordered); diff != "" {
				t.Errorf("describe(%v) (-want +got):\n%s", tc.names, diff)
			}
		})
	}
	for name, tc := range map[string]struct {
		names any
		want  string
	}{
		"unknown":       {"Contry", `no type or operation named "Contry" in the schema; did you mean Country, country?`},
		"nothing close": {"Zebra", `no type or operation named "Zebra" in the schema; describe("Query") lists the queries`},
		"near miss":     {"country_", `did you mean Country, country?`},
		"empty":         {"", "names is empty"},
		"not a string":  {5, `argument "names"`},
		"list of ints":  {[]int{1}, `argument "names"`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, te := call(t, c, "describe", map[string]any{"names": tc.names})
			if te == nil || te.Code != sdk.CodeInvalidArgument || !strings.Contains(te.Message, tc.want) {
				t.Errorf("describe(%v): want ValueError containing %q, got %+v", tc.names, tc.want, te)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	down := downURL(t)
	for name, tc := range map[string]struct {
		endpoint string
		tool     string
		args     map[string]any
		code     sdk.ErrorCode
		want     []string // substrings of the message
	}{
		"server down": {down, "graphql", map[string]any{"query": "{ continents { name } }"}, sdk.CodeUnavailable,
			[]string{"failed to connect to GraphQL endpoint " + down + ": ", "connection refused"}},
		"server down at first search": {down, "search", map[string]any{"pattern": "x"}, sdk.CodeUnavailable,
			[]string{"failed to connect to GraphQL endpoint " + down}},
		"server down at first describe": {down, "describe", map[string]any{"names": "Country"}, sdk.CodeUnavailable,
			[]string{"failed to connect to GraphQL endpoint " + down}},
		"connection lost": {s.URL + "/cut", "graphql", map[string]any{"query": "{ x }"}, sdk.CodeUnavailable,
			[]string{"lost the connection to GraphQL endpoint " + s.URL + "/cut: unexpected EOF"}},
		"error page": {s.URL + "/bad-gateway", "graphql", map[string]any{"query": "{ x }"}, sdk.CodeInternal,
			[]string{"GraphQL endpoint " + s.URL + "/bad-gateway answered HTTP 502 Bad Gateway (text/html): <html> <head><title>502 Bad Gateway</title>"}},
		"JSON that is not GraphQL": {s.URL + "/not-graphql", "graphql", map[string]any{"query": "{ x }"}, sdk.CodeInternal,
			[]string{"answered HTTP 200 OK with a body that is not a GraphQL response (application/json): {\"status\": \"ok\"}"}},
		"redirect": {s.URL + "/moved", "graphql", map[string]any{"query": "{ x }"}, sdk.CodeInternal,
			[]string{"answered HTTP 302 Found; it redirects to " + s.URL + "/graphql?… (configure that URL as the endpoint)"}},
		"introspection refused": {s.URL + "/no-introspection", "search", map[string]any{"pattern": "x"}, sdk.CodeInternal,
			[]string{"introspection of " + s.URL + "/no-introspection failed: GraphQL introspection is not allowed (search and describe need it; graphql() may still work)"}},
		"empty query": {s.URL + "/graphql", "graphql", map[string]any{"query": " "}, sdk.CodeInvalidArgument, []string{"query is empty"}},
		"variables not an object": {s.URL + "/graphql", "graphql", map[string]any{"query": "{ x }", "variables": "{}"}, sdk.CodeInvalidArgument,
			[]string{`argument "variables"`}},
		"unknown argument": {s.URL + "/graphql", "graphql", map[string]any{"query": "{ x }", "vars": map[string]any{}}, sdk.CodeInvalidArgument,
			[]string{"vars"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := configured(t, map[string]any{"endpoint": tc.endpoint, "token": testToken})
			_, te := call(t, c, tc.tool, tc.args)
			if te == nil {
				t.Fatalf("%s succeeded", tc.tool)
			}
			if te.Code != tc.code {
				t.Errorf("code %s, want %s: %s", te.Code, tc.code, te.Message)
			}
			for _, w := range tc.want {
				if !strings.Contains(te.Message, w) {
					t.Errorf("message %q does not contain %q", te.Message, w)
				}
			}
			if strings.Contains(te.Message, testToken) {
				t.Errorf("message shows the token: %s", te.Message)
			}
		})
	}
	// The introspection that works still serves graphql(): only search and
	// describe need it.
	c := configured(t, map[string]any{"endpoint": s.URL + "/no-introspection"})
	got := mustCall(t, c, "graphql", map[string]any{"query": `{ country(code: "KE") { languages } }`})
	if diff := cmp.Diff(jsonValue(t, `{"data": {"country": {"languages": ["English", "Swahili"]}}, "errors": null}`), got); diff != "" {
		t.Errorf("graphql without introspection (-want +got):\n%s", diff)
	}
}

// A GraphQL body comes back as such whatever the HTTP status: a wrong token
// is the server's 401 with its GraphQL error, not an exception.
func TestUnauthorized(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for name, cfg := range map[string]map[string]any{
		"no token":    {"endpoint": s.URL + "/graphql"},
		"wrong token": {"endpoint": s.URL + "/graphql", "token": "not-the-token"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := configured(t, cfg)
			got := mustCall(t, c, "graphql", map[string]any{"query": "{ continents { name } }"})
			want := `{"data": null, "errors": [{"message": "unauthorized: a valid bearer token is required"}]}`
			if diff := cmp.Diff(jsonValue(t, want), got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			_, te := call(t, c, "search", map[string]any{"pattern": "x"})
			if te == nil || te.Code != sdk.CodeInternal || !strings.Contains(te.Message, "failed: unauthorized: a valid bearer token is required") {
				t.Errorf("search: %+v", te)
			}
		})
	}
}

func TestCredentialsReachOnlyTheServer(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	const apiKey = "key-55aa77bb"
	cfg := map[string]any{"endpoint": s.URL + "/graphql", "token": testToken, "headers": map[string]any{"X-Api-Key": apiKey, "X-Client": "tests"}}
	c := configured(t, cfg)
	rec := &sdktest.Recorder{}
	got, te := callCtx(t.Context(), t, c, &sdk.CallToolRequest{Name: "graphql", TaskID: "gql_1", Events: rec}, map[string]any{"query": "{ authorization }"})
	if te != nil {
		t.Fatal(te)
	}
	if diff := cmp.Diff(jsonValue(t, `{"data": {"authorization": "Bearer [REDACTED]"}, "errors": null}`), got); diff != "" {
		t.Errorf("echoed token (-want +got):\n%s", diff)
	}
	if auth, _ := s.seen(); len(auth) == 0 || auth[len(auth)-1] != "Bearer "+testToken {
		t.Errorf("the server saw Authorization %q", auth)
	}
	if lines := rec.Lines(); len(lines) != 2 || lines[0] != "POST "+s.URL+"/graphql" || !strings.HasPrefix(lines[1], "HTTP 200 OK, ") {
		t.Errorf("task log: %q", lines)
	}

	// A server that echoes the credentials in an error page, or escapes
	// them differently from Go.
	for name, tc := range map[string]struct {
		path string
		want string
	}{
		"error page": {"/leaky", "GraphQL endpoint " + s.URL + "/leaky answered HTTP 403 Forbidden (text/plain): request refused; headers were: Authorization: Bearer [REDACTED], X-Api-Key: [REDACTED]"},
		"escaped":    {"/escaped", `{"data":{"authorization":"Bearer [REDACTED]","big":12345678901234567890,"note":"line\nbreak"},"errors":null}`},
		"cut short":  {"/long-leak", "GraphQL endpoint " + s.URL + "/long-leak answered HTTP 403 Forbidden (text/plain): " + strings.Repeat("x", 180) + " Bearer [REDACTED]"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := map[string]any{"endpoint": s.URL + tc.path, "token": testToken, "headers": map[string]any{"X-Api-Key": apiKey}}
			c := configured(t, cfg)
			raw, _ := json.Marshal(map[string]any{"query": "{ authorization }"})
			res, err := c.CallTool(t.Context(), &sdk.CallToolRequest{Name: "graphql", Arguments: raw})
			if err != nil {
				t.Fatal(err)
			}
			got := string(res.Content)
			if res.IsError {
				got = res.Error.Message
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestEndpointUserinfo: Go sends the endpoint's userinfo as the header
// "Authorization: Basic base64(user:password)"; a server that echoes the
// header does not show the credential to the sandbox.
func TestEndpointUserinfo(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	const basic = "YWRhOnMzY3IzdD8/" // base64("ada:s3cr3t??"): with a "/", which /escaped escapes
	withUserinfo := strings.Replace(s.URL, "http://", "http://ada:s3cr3t%3F%3F@", 1)
	label := strings.Replace(s.URL, "http://", "http://ada@", 1)

	c := configured(t, map[string]any{"endpoint": withUserinfo + "/graphql"})
	mustCall(t, c, "graphql", map[string]any{"query": "{ __typename }"})
	if auth, _ := s.seen(); len(auth) == 0 || auth[len(auth)-1] != "Basic "+basic {
		t.Fatalf("the server saw Authorization %q, want the endpoint's userinfo as Basic %s", auth, basic)
	}

	for name, tc := range map[string]struct {
		path string
		want string
	}{
		"error page": {"/leaky", "GraphQL endpoint " + label + "/leaky answered HTTP 403 Forbidden (text/plain): request refused; headers were: Authorization: Basic [REDACTED], X-Api-Key:"},
		"escaped":    {"/escaped", `{"data":{"authorization":"Basic [REDACTED]","big":12345678901234567890,"note":"line\nbreak"},"errors":null}`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := configured(t, map[string]any{"endpoint": withUserinfo + tc.path})
			rec := &sdktest.Recorder{}
			raw, _ := json.Marshal(map[string]any{"query": "{ authorization }"})
			res, err := c.CallTool(t.Context(), &sdk.CallToolRequest{Name: "graphql", Arguments: raw, TaskID: "t", Events: rec})
			if err != nil {
				t.Fatal(err)
			}
			got := string(res.Content)
			if res.IsError {
				got = res.Error.Message
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			for _, leak := range []string{basic, `YWRhOnMzY3IzdD8\/`, "s3cr3t"} {
				if strings.Contains(got+strings.Join(rec.Lines(), "\n"), leak) {
					t.Errorf("the sandbox sees %q", leak)
				}
			}
		})
	}
}

func TestIntrospectionIsLazyAndCached(t *testing.T) {
	t.Parallel()
	// The server is down: it drops every connection (the listener stays
	// open, so that no other process can take the port before it comes up).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gate := &gateListener{Listener: ln}
	var mu sync.Mutex
	introspections := 0
	api := countries.New("")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(readBody(r), "__schema") {
			mu.Lock()
			introspections++
			mu.Unlock()
			time.Sleep(50 * time.Millisecond) // let concurrent first calls pile up
		}
		api.ServeHTTP(w, r)
	})}
	go srv.Serve(gate)
	t.Cleanup(func() { srv.Close() })
	c := configured(t, map[string]any{"endpoint": "http://" + ln.Addr().String() + "/graphql"})
	if _, te := call(t, c, "search", map[string]any{"pattern": "country"}); te == nil || te.Code != sdk.CodeUnavailable {
		t.Fatalf("search with the server down: %+v", te)
	}

	// The server comes up: the failure was not cached.
	gate.up.Store(true)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			tool, args := "search", map[string]any{"pattern": "country"}
			if i%2 == 1 {
				tool, args = "describe", map[string]any{"names": "Country"}
			}
			// Not call(): it may t.Fatal, which a goroutine must not.
			raw, _ := json.Marshal(args)
			res, err := c.CallTool(t.Context(), &sdk.CallToolRequest{Name: tool, Arguments: raw})
			if err != nil {
				t.Errorf("%s: %v", tool, err)
			} else if res.IsError {
				t.Errorf("%s: %v", tool, res.Error)
			}
		})
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if introspections != 1 {
		t.Errorf("%d introspections, want 1", introspections)
	}
}

// gateListener drops the connections it accepts until up is set.
type gateListener struct {
	net.Listener
	up atomic.Bool
}

func (g *gateListener) Accept() (net.Conn, error) {
	for {
		conn, err := g.Listener.Accept()
		if err != nil || g.up.Load() {
			return conn, err
		}
		conn.Close()
	}
}

func TestCancellation(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	// The bridge itself, not over gRPC: there the caller's cancellation
	// ends the RPC before the bridge's answer arrives.
	b := newBridge()
	if err := b.Configure(t.Context(), &sdk.ConfigureRequest{Config: json.RawMessage(`{"endpoint": "` + s.URL + `/hang"}`)}); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		ctx  func() (context.Context, context.CancelFunc)
		code sdk.ErrorCode
	}{
		"deadline": {func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(t.Context(), 100*time.Millisecond)
		}, sdk.CodeTimeout},
		"cancel": {func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}, sdk.CodeCancelled},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := tc.ctx()
			defer cancel()
			raw, _ := json.Marshal(map[string]any{"query": "{ x }"})
			res, err := b.CallTool(ctx, &sdk.CallToolRequest{Name: "graphql", Arguments: raw})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if !res.IsError || res.Error.Code != tc.code || !strings.Contains(res.Error.Message, "request to "+s.URL+"/hang: ") {
				t.Errorf("want %s, got %+v", tc.code, res.Error)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	c := configured(t, map[string]any{"endpoint": s.URL + "/hang", "timeout": 0.2})
	// The error says that the bridge's timeout ended the request (the
	// server never answers: nothing else could).
	_, te := call(t, c, "graphql", map[string]any{"query": "{ x }"})
	want := "no response from GraphQL endpoint " + s.URL + "/hang within 200ms (the bridge's timeout)"
	if te == nil || te.Code != sdk.CodeTimeout || te.Message != want {
		t.Errorf("want TimeoutError %q, got %+v", want, te)
	}
}

func TestNotConfigured(t *testing.T) {
	t.Parallel()
	c := sdktest.NewHarness(t, newBridge())
	_, te := call(t, c, "graphql", map[string]any{"query": "{ x }"})
	if te == nil || te.Code != sdk.CodeUnavailable {
		t.Errorf("graphql before Configure: %+v", te)
	}
	d, err := c.Describe(t.Context())
	if err != nil || !strings.HasPrefix(d.Description, "GraphQL API.\n") {
		t.Errorf("Describe before Configure: %v %q", err, d.Description)
	}
}
