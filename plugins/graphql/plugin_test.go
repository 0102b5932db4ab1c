package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/internal/testenv"
	"github.com/parselbox/parselbox/sdk"
	"github.com/parselbox/parselbox/sdk/sdktest"
)

// The bridge as a real plugin process: the test binary, re-executed.
func TestSubprocess(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := sdktest.Start(t, exec.Command(exe))
	cfg, _ := json.Marshal(map[string]any{"endpoint": s.URL + "/graphql", "token": testToken})
	if err := c.Configure(t.Context(), &sdk.ConfigureRequest{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	d, err := c.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := "GraphQL API: " + s.URL + "/graphql."; !strings.HasPrefix(d.Description, want) {
		t.Errorf("description %q does not start with %q", d.Description, want)
	}
	got := mustCall(t, c, "graphql", map[string]any{"query": `query($c: ID!) { country(code: $c) { name } }`, "variables": map[string]any{"c": "BR"}})
	if diff := cmp.Diff(jsonValue(t, `{"data": {"country": {"name": "Brazil"}}, "errors": null}`), got); diff != "" {
		t.Errorf("graphql (-want +got):\n%s", diff)
	}
	got = mustCall(t, c, "search", map[string]any{"pattern": "mutation"})
	if diff := cmp.Diff(jsonValue(t, `[{"name": "addCountry", "type": "mutation", "description": "Adds a country to a continent.", "args": ["input: NewCountry!"], "returns": "Country!"}]`), got); diff != "" {
		t.Errorf("search (-want +got):\n%s", diff)
	}
	if _, te := call(t, c, "describe", map[string]any{"names": "Nope"}); te == nil || te.Code != sdk.CodeInvalidArgument {
		t.Errorf("describe(Nope): %+v", te)
	}

	// A bad configuration is refused by the process too.
	bad := sdktest.Start(t, exec.Command(exe))
	var ce *sdk.ConfigError
	if err := bad.Configure(t.Context(), &sdk.ConfigureRequest{Config: json.RawMessage(`{"endpoint": "x", "extra": 1}`)}); !errors.As(err, &ce) || ce.Key != "extra" || !strings.HasPrefix(ce.Message, "unknown key") {
		t.Errorf("Configure with an unknown key: %v, want a *sdk.ConfigError naming it", err)
	}
}

// From real Python through host.New, with the test binary as the plugin:
// the tools work as documented, and the token reaches the server but
// nothing that Python sees.
func TestPython(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	down := downURL(t)
	sb, err := host.New(t.Context(), host.Config{
		RuntimeDir: testenv.Runtime(t).Dir,
		CacheDir:   testenv.CacheDir(t),
		Logger:     testenv.Logger(t),
		Bridges: map[string]host.BridgeConfig{
			"gql":  {Plugin: exe, Config: map[string]any{"endpoint": s.URL + "/graphql", "token": testToken}},
			"down": {Plugin: exe, Config: map[string]any{"endpoint": down, "token": testToken}},
			"leak": {Plugin: exe, Env: []string{tokenEnv}, Config: map[string]any{"endpoint": s.URL + "/leaky", "token_env": tokenEnv}},
		},
	})
	if err != nil {
		t.Fatalf("host.New (with a bridge whose server is down): %v", err)
	}
	t.Cleanup(func() { sb.Close() })

	var seen strings.Builder // everything Python saw
	run := func(code string) *host.Result {
		t.Helper()
		r, err := sb.Execute(t.Context(), code)
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		all, _ := json.Marshal(r)
		seen.Write(all)
		return r
	}

	for _, tc := range []struct {
		code string
		want string // JSON
	}{
		{`gql.graphql('{ country(code: "FR") { name continent { name } } }')`,
			`{"data": {"country": {"name": "France", "continent": {"name": "Europe"}}}, "errors": null}`},
		{`gql.graphql('query($c: ID!) { country(code: $c) { name } }', {"c": "JP"})["data"]`,
			`{"country": {"name": "Japan"}}`},
		{`gql.graphql(query='mutation($c: NewCountry!) { addCountry(input: $c) { code } }', variables={"c": {"code": "NZ", "name": "New Zealand", "continent": "OC"}})`,
			`{"data": {"addCountry": {"code": "NZ"}}, "errors": null}`},
		{`r = gql.graphql('{ country(code: "XX") { name } }')
[r["data"], [e["message"] for e in r["errors"]]]`,
			`[{"country": null}, ["no country with code \"XX\""]]`},
		{`[(op["type"], op["name"], op["returns"]) for op in gql.search("continent")]`,
			`[["query", "continent", "Continent"], ["query", "continents", "[Continent!]!"], ["mutation", "addCountry", "Country!"]]`},
		{`[op["name"] for op in gql.search("mutation")]`, `["addCountry"]`},
		// sbx.search finds what the bridge's own search finds: a mutation,
		// named by no tool.
		{`[(h["path"], [r["name"] for r in h.get("results", [])]) for h in sbx.search("addCountry")["gql (graphql)"]]`,
			`[["gql.search", ["addCountry"]]]`},
		{`d = gql.describe("Country")
[d["kind"], [f["name"] for f in d["fields"]][:3]]`,
			`["OBJECT", ["capital", "capitalCity", "code"]]`},
		{`[gql.describe("Sort")["kind"], sorted(v["name"] for v in gql.describe("Sort")["values"])]`, `["ENUM", ["NAME", "POPULATION"]]`},
		{`sorted(f["name"] for f in gql.describe("NewCountry")["inputFields"])`, `["capital", "code", "continent", "name", "population"]`},
		{`gql.describe(["Sort", "Nope"])["Nope"]`, `{"error": "no type or operation named \"Nope\" in the schema; describe(\"Query\") lists the queries"}`},
		{`gql.graphql("{ authorization }")["data"]`, `{"authorization": "Bearer [REDACTED]"}`},
		{`t = gql.graphql.task("{ continents { code } }")
r = await t
[len(r["data"]["continents"]), t.tail(5).splitlines()[0]]`,
			`[6, "POST ` + s.URL + `/graphql"]`},
		{`"GraphQL API: ` + s.URL + `/graphql." in help(gql)`, `true`},
	} {
		r := run(tc.code)
		if r.Error != nil {
			t.Errorf("%s\nraised %s: %s\n%s", tc.code, r.Error.Type, r.Error.Message, r.Error.Traceback)
			continue
		}
		var got any
		if err := json.Unmarshal(r.Output, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(jsonValue(t, tc.want), got); diff != "" {
			t.Errorf("%s\n(-want +got):\n%s", tc.code, diff)
		}
	}

	for _, tc := range []struct {
		code, typ, want string
	}{
		{`gql.describe("Contry")`, "ValueError", `no type or operation named "Contry" in the schema; did you mean Country, country?`},
		{`gql.graphql("")`, "ValueError", "query is empty"},
		{`down.search("country")`, "ConnectionError", "failed to connect to GraphQL endpoint " + down + ": "},
		{`down.graphql("{ continents { name } }")`, "ConnectionError", "failed to connect to GraphQL endpoint " + down + ": "},
		{`leak.graphql("{ continents { name } }")`, "RuntimeError",
			"GraphQL endpoint " + s.URL + "/leaky answered HTTP 403 Forbidden (text/plain): request refused; headers were: Authorization: Bearer [REDACTED]"},
	} {
		r := run(tc.code)
		if r.Error == nil {
			t.Errorf("%s: want %s, got %s", tc.code, tc.typ, r.Output)
			continue
		}
		if r.Error.Type != tc.typ || !strings.Contains(r.Error.Message, tc.want) {
			t.Errorf("%s: want %s containing %q, got %s: %s", tc.code, tc.typ, tc.want, r.Error.Type, r.Error.Message)
		}
	}

	// Help texts and tool docs, as Python shows them.
	run(`[help(gql), help(gql.graphql), help(gql.search), help(gql.describe), help(down), help(leak), sbx.inspect(["gql.graphql", "gql.describe"])]`)

	auth, _ := s.seen()
	if !strings.Contains(strings.Join(auth, "\n"), "Bearer "+testToken) {
		t.Errorf("the server never saw the token: %q", auth)
	}
	if strings.Contains(seen.String(), testToken) || strings.Contains(seen.String(), strings.ReplaceAll(testToken, "/", `\/`)) {
		t.Errorf("Python saw the token:\n%s", seen.String())
	}
}
