package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/parselbox/parselbox/sdk"
)

// specVariants configure the bridge with each document of the pet store:
// 3.0 from a file, with base_url (the document's server is elsewhere); 3.1
// from the server, whose relative server URL gives the base URL.
func specVariants(t *testing.T, api *testAPI) map[string]map[string]any {
	return map[string]map[string]any{
		"3.0": {"base_url": api.Base, "spec": specFile(t, "petstore-3.0.yaml"), "token": testToken},
		"3.1": {"spec": api.srv.URL + "/openapi.json", "token_env": tokenEnv},
	}
}

func TestOperations(t *testing.T) {
	t.Parallel()
	doggie := `{"id": 1, "name": "doggie", "category": {"id": 1, "name": "Dogs"}, "photoUrls": [], "tags": [{"id": 1, "name": "friendly"}], "status": "available"}`
	kitty := `{"id": 2, "name": "kitty", "category": {"id": 2, "name": "Cats"}, "photoUrls": [], "tags": [{"id": 2, "name": "shy"}], "status": "pending"}`
	rex := `{"id": 3, "name": "rex", "category": {"id": 1, "name": "Dogs"}, "photoUrls": [], "tags": [{"id": 1, "name": "friendly"}], "status": "sold"}`
	for version, cfg := range specVariants(t, newTestAPI(t)) {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			b := configured(t, cfg)
			for name, tc := range map[string]struct {
				tool, args string
				want       reply
			}{
				"path parameter":          {"getPetById", `{"petId": 1}`, reply{true, 200, jsonValue(t, doggie)}},
				"number as a string":      {"getPetById", `{"petId": "2"}`, reply{true, 200, jsonValue(t, kitty)}},
				"not found is a result":   {"getPetById", `{"petId": 99}`, reply{false, 404, map[string]any{"code": float64(404), "message": "Pet not found"}}},
				"query parameter":         {"findPetsByStatus", `{"status": "sold"}`, reply{true, 200, jsonValue(t, "["+rex+"]")}},
				"query parameters":        {"findPetsByStatus", `{"status": "available", "limit": 1, "ignored": null}`, reply{}},
				"exploded array":          {"findPetsByTags", `{"tags": ["shy"]}`, reply{true, 200, jsonValue(t, "["+kitty+"]")}},
				"text answer":             {"health-check", `{}`, reply{true, 200, "ok"}},
				"no operationId":          {"get_version", `{}`, reply{true, 200, map[string]any{"version": "1.0.0"}}},
				"JSON body":               {"placeOrder", `{"body": {"petId": 1, "quantity": 2}}`, reply{true, 200, map[string]any{"id": float64(1), "petId": float64(1), "quantity": float64(2), "status": "placed"}}},
				"optional header omitted": {"deletePet", `{"petId": 98}`, reply{false, 404, map[string]any{"code": float64(404), "message": "Pet not found"}}},
			} {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					if name == "query parameters" {
						// "ignored": null is no argument at all.
						tc.args = strings.Replace(tc.args, `, "ignored": null`, "", 1)
						tc.want = reply{true, 200, jsonValue(t, "["+doggie+"]")}
					}
					got, _ := ok(t, b, tc.tool, tc.args)
					if diff := cmp.Diff(tc.want, got); diff != "" {
						t.Errorf("%s(%s) (-want +got):\n%s", tc.tool, tc.args, diff)
					}
				})
			}
		})
	}
}

// TestValidation checks that arguments that do not fit the document fail
// with a ValueError naming each of them, and that nothing is sent.
func TestValidation(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t)
	type invalid struct{ tool, args, want string }
	common := []invalid{
		{"getPetById", `{"petId": "abc"}`, `getPetById: invalid arguments: petId: "abc" is an invalid integer`},
		{"getPetById", `{}`, "getPetById: invalid arguments: petId: required, but missing"},
		{"getPetById", `{"petId": 1, "id": 2, "name": "x"}`, "getPetById: invalid arguments: id: unknown argument (the arguments are petId); name: unknown argument (the arguments are petId)"},
		{"addPet", `{}`, "addPet: invalid arguments: body: required, but missing"},
		{"addPet", `{"body": {"photoUrls": "x"}}`, `addPet: invalid arguments: body.name: property "name" is missing; body.photoUrls: value must be an array`},
		{"health-check", `{"verbose": true}`, "health-check: invalid arguments: verbose: unknown argument (the arguments are none)"},
	}
	byVersion := map[string][]invalid{
		"3.0": {
			{"findPetsByStatus", `{"status": "lost", "limit": 0}`, `findPetsByStatus: invalid arguments: limit: number must be at least 1; status: value is not one of the allowed values ["available","pending","sold"]`},
			{"placeOrder", `{"body": {"petId": 1, "quantity": 0}}`, "placeOrder: invalid arguments: body.quantity: number must be at least 1"},
			{"addPet", `{"body": {"name": "n", "photoUrls": [], "status": null}}`, `addPet: invalid arguments: body.status: value is not one of the allowed values ["available","pending","sold"]`},
		},
		"3.1": {
			{"findPetsByStatus", `{"status": "lost", "limit": 0}`, "findPetsByStatus: invalid arguments: limit: minimum is 1, got 0; status: value must be one of 'available', 'pending', 'sold'"},
			{"placeOrder", `{"body": {"petId": 1, "quantity": 0}}`, "placeOrder: invalid arguments: body.quantity: exclusiveMinimum is 0, got 0"},
			{"getPetById", `{"petId": 0}`, "getPetById: invalid arguments: petId: exclusiveMinimum is 0, got 0"},
		},
	}
	for version, cfg := range specVariants(t, api) {
		b := configured(t, cfg)
		before := len(api.requests())
		for _, tc := range append(common, byVersion[version]...) {
			e := failure(t, b, tc.tool, tc.args)
			if diff := cmp.Diff(&sdk.ToolError{Code: sdk.CodeInvalidArgument, Message: tc.want}, e); diff != "" {
				t.Errorf("%s: %s(%s) (-want +got):\n%s", version, tc.tool, tc.args, diff)
			}
		}
		if n := len(api.requests()) - before; n != 0 {
			t.Errorf("%s: %d invalid calls reached the server", version, n)
		}
	}
	// 3.1 lets the status be null (a type list with "null").
	b := configured(t, specVariants(t, api)["3.1"])
	if got, _ := ok(t, b, "addPet", `{"body": {"name": "n", "photoUrls": [], "status": null}}`); got.Status != 200 {
		t.Errorf("3.1 null status: %+v", got)
	}
}

func TestToolInfo(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t)
	b := configured(t, map[string]any{"base_url": api.Base, "spec": specFile(t, "petstore-3.0.yaml")})
	d, err := b.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]sdk.ToolInfo{}
	for _, tool := range d.Tools {
		tools[tool.Name] = tool
	}
	type info struct {
		Description string
		Params      []string
		Input       any
	}
	for name, want := range map[string]info{
		"getPetById": {"Find pet by ID\n\nReturns a single pet.\n\nGET /pet/{petId}", []string{"petId"}, jsonValue(t, `{
			"type": "object", "additionalProperties": false, "required": ["petId"],
			"properties": {"petId": {"type": "integer", "format": "int64", "description": "ID of the pet (path parameter)"}}}`)},
		"findPetsByStatus": {"Finds Pets by status\n\nMultiple status values can be provided with comma separated strings.\n\nGET /pet/findByStatus",
			[]string{"status", "limit"}, jsonValue(t, `{
			"type": "object", "additionalProperties": false, "required": ["status"],
			"properties": {
				"status": {"type": "string", "enum": ["available", "pending", "sold"], "description": "Status values that need to be considered for filter (query parameter)"},
				"limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "At most this many pets (query parameter)"}}}`)},
		"deletePet": {"Deletes a pet\n\nDELETE /pet/{petId}", []string{"petId", "api_key"}, jsonValue(t, `{
			"type": "object", "additionalProperties": false, "required": ["petId"],
			"properties": {
				"petId": {"type": "integer", "format": "int64", "description": "ID of the pet (path parameter)"},
				"api_key": {"type": "string", "description": "(header parameter)"}}}`)},
		"placeOrder": {"Place an order for a pet\n\nPOST /store/order", []string{"body"}, jsonValue(t, `{
			"type": "object", "additionalProperties": false, "required": ["body"],
			"properties": {"body": {"type": "object", "required": ["petId", "quantity"], "description": "The request body (application/json)",
				"properties": {
					"id": {"type": "integer", "format": "int64"},
					"petId": {"type": "integer", "format": "int64"},
					"quantity": {"type": "integer", "format": "int32", "minimum": 1},
					"status": {"type": "string", "enum": ["placed", "approved", "delivered"]},
					"complete": {"type": "boolean"}}}}}`)},
	} {
		tool, found := tools[name]
		if !found {
			t.Errorf("no tool %s", name)
			continue
		}
		got := info{tool.Description, tool.Params, jsonValue(t, string(tool.InputSchema))}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	// The output is the result's shape, with the 2xx response's schema as data.
	var out struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	json.Unmarshal(tools["getInventory"].OutputSchema, &out)
	want := jsonValue(t, `{"type": "object", "description": "the body: parsed JSON, or text", "additionalProperties": {"type": "integer", "format": "int32"}}`)
	if diff := cmp.Diff(want, any(out.Properties["data"])); diff != "" {
		t.Errorf("getInventory output data (-want +got):\n%s", diff)
	}
}

// namingSpec has operationIds that collide with the verbs, with each
// other, or are not identifiers; parameters of every kind and style; and a
// recursive schema.
const namingSpec = `openapi: 3.0.3
info: {title: Naming, version: "1"}
servers: [{url: "https://naming.example.com"}]
paths:
  /a:
    get: {operationId: get, responses: {"200": {description: ok}}}
  /b:
    get: {operationId: list.items, responses: {"200": {description: ok}}}
    post: {operationId: list_items, responses: {"200": {description: ok}}}
  /c:
    get: {operationId: search, responses: {"200": {description: ok}}}
  /d/{id}/keys:
    get:
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
  /e:
    get: {operationId: 2fa, responses: {"200": {description: ok}}}
  /echo/{item}:
    post:
      operationId: echoItem
      summary: Echo an item
      parameters:
        - {name: item, in: path, required: true, schema: {type: array, items: {type: string}}}
        - {name: body, in: query, schema: {type: string}}
        - {name: ids, in: query, explode: false, schema: {type: array, items: {type: integer}}}
        - {name: filter, in: query, style: deepObject, explode: true, schema: {type: object, properties: {name: {type: string}, age: {type: integer}}}}
        - {name: X-Request-Id, in: header, required: true, schema: {type: string}}
        - {name: Authorization, in: header, required: true, schema: {type: string}}
        - {name: X-Api-Key, in: header, required: true, schema: {type: string}}
        - {name: session, in: cookie, schema: {type: string}}
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema: {type: object, properties: {note: {type: string}}}
      responses: {"200": {description: ok}}
  /tree:
    post:
      operationId: plantTree
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Node"}
      responses: {"200": {description: ok}}
components:
  schemas:
    Node:
      type: object
      properties:
        name: {type: string}
        children: {type: array, items: {$ref: "#/components/schemas/Node"}}
`

func TestNamingAndStyles(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t)
	b := configured(t, map[string]any{
		"base_url": api.Base, "spec": writeFile(t, "naming.yaml", namingSpec), "token": testToken,
		"headers": map[string]any{"X-Api-Key": "key-5a7d1c0e93"},
	})
	d, err := b.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	params := map[string][]string{}
	schemas := map[string]json.RawMessage{}
	for _, tool := range d.Tools[len(builtin):] {
		names = append(names, tool.Name)
		params[tool.Name] = tool.Params
		schemas[tool.Name] = tool.InputSchema
	}
	if diff := cmp.Diff([]string{"get_get", "list_items", "list_items_post", "search_get", "get_d_id_keys", "2fa", "echoItem", "plantTree"}, names); diff != "" {
		t.Errorf("tool names (-want +got):\n%s", diff)
	}
	// Path first, then required, then the others; headers that the bridge
	// sets are no arguments; the body is request_body, as a parameter is
	// named body.
	if diff := cmp.Diff([]string{"item", "X-Request-Id", "body", "ids", "filter", "session", "request_body"}, params["echoItem"]); diff != "" {
		t.Errorf("echoItem params (-want +got):\n%s", diff)
	}
	// A recursive schema is written out once.
	want := jsonValue(t, `{"type": "object", "additionalProperties": false, "required": ["body"], "properties": {"body": {
		"type": "object", "description": "The request body (application/json)", "properties": {
			"name": {"type": "string"},
			"children": {"type": "array", "items": {"type": "object", "description": "(Node, as above)"}}}}}}`)
	if diff := cmp.Diff(want, jsonValue(t, string(schemas["plantTree"]))); diff != "" {
		t.Errorf("plantTree input (-want +got):\n%s", diff)
	}

	got, _ := ok(t, b, "echoItem", `{"item": ["a", "b"], "X_Request_Id": "r-1", "body": "q", "ids": [1, 2],
		"filter": {"name": "x", "age": 3}, "session": "s-1", "request_body": {"note": "hi"}}`)
	echo := got.Data.(map[string]any)
	headers := echo["headers"].(map[string]any)
	gotParts := map[string]any{
		"path": echo["path"], "query": echo["query"], "body": echo["body"],
		"X-Request-Id": headers["X-Request-Id"], "Cookie": headers["Cookie"], "Content-Type": headers["Content-Type"],
		"X-Api-Key": headers["X-Api-Key"], "Authorization": headers["Authorization"],
	}
	wantParts := map[string]any{
		"path":  "/api/v3/echo/a,b",
		"query": jsonValue(t, `{"body": ["q"], "ids": ["1,2"], "filter[age]": ["3"], "filter[name]": ["x"]}`),
		"body":  "note=hi", "X-Request-Id": "r-1", "Cookie": "session=s-1", "Content-Type": "application/x-www-form-urlencoded",
		"X-Api-Key": sdk.Redacted, "Authorization": "Bearer " + sdk.Redacted,
	}
	if diff := cmp.Diff(wantParts, gotParts); diff != "" {
		t.Errorf("echoItem request (-want +got):\n%s", diff)
	}

	for args, want := range map[string]string{
		`{"item": ["a"]}`: "echoItem: invalid arguments: X-Request-Id: required, but missing",
		`{"item": ["a"], "X-Request-Id": "1", "X_Request_Id": "2"}`:  "echoItem: invalid arguments: X-Request-Id: given twice (as X-Request-Id and X_Request_Id)",
		`{"item": ["a"], "X-Request-Id": "1\nX-Evil: 1"}`:            "echoItem: invalid arguments: X-Request-Id: a header value cannot hold a line break",
		`{"item": ["a"], "X-Request-Id": "1", "ids": ["x"]}`:         `echoItem: invalid arguments: ids: "x" is an invalid integer`,
		`{"item": ["a"], "X-Request-Id": "1", "Authorization": "x"}`: "echoItem: invalid arguments: Authorization: unknown argument (the arguments are item, X-Request-Id, body, ids, filter, session, request_body)",
	} {
		e := failure(t, b, "echoItem", args)
		if diff := cmp.Diff(&sdk.ToolError{Code: sdk.CodeInvalidArgument, Message: want}, e); diff != "" {
			t.Errorf("echoItem(%s) (-want +got):\n%s", args, diff)
		}
	}
}

func TestSearch(t *testing.T) {
	t.Parallel()
	api := newTestAPI(t)
	b := configured(t, map[string]any{"base_url": api.Base, "spec": specFile(t, "petstore-3.0.yaml")})
	for query, want := range map[string][]string{
		"":                   {},
		"   ":                {},
		"pets by status":     {"GET /pet/findByStatus"},
		"GET /pet/":          {"GET /pet/findByStatus", "GET /pet/findByTags", "GET /pet/{petId}"},
		"POST":               {"POST /pet", "POST /store/order"},
		"DELETE *":           {"DELETE /pet/{petId}"},
		"/pet/*":             {"GET /pet/findByStatus", "GET /pet/findByTags", "GET /pet/{petId}", "DELETE /pet/{petId}"},
		"/store/?????????":   {"GET /store/inventory"},
		"^/store":            {"GET /store/inventory", "POST /store/order"},
		"PUT ^/pet$":         {"PUT /pet"},
		"order|inventories":  {"GET /store/inventory", "POST /store/order"},
		"/pet/{petId}":       {"GET /pet/{petId}", "DELETE /pet/{petId}"},
		"inventories":        {"GET /store/inventory"},
		"health":             {"GET /health"},
		"getPetById":         {"GET /pet/{petId}"},
		"pet status":         {"GET /pet/findByStatus", "GET /store/inventory"},
		"no such thing":      {},
		"get /pet/findByTag": {},
	} {
		t.Run(query, func(t *testing.T) {
			t.Parallel()
			res := call(t, b, "search", `{"query": `+string(must(json.Marshal(query)))+`}`)
			var hits []searchHit
			if err := json.Unmarshal(res.Content, &hits); err != nil {
				t.Fatalf("%v: %s", err, res.Content)
			}
			got := []string{}
			for _, h := range hits {
				got = append(got, h.Method+" "+h.Path)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("search(%q) (-want +got):\n%s", query, diff)
			}
		})
	}
	t.Run("hits", func(t *testing.T) {
		t.Parallel()
		res := call(t, b, "search", `{"query": "POST /pet$|^/pet/findByStatus"}`)
		want := jsonValue(t, `[
			{"method": "POST", "path": "/pet", "summary": "Add a new pet to the store", "tool": "addPet",
			 "body": {"id": "integer", "name": "string (required)", "category": "object", "photoUrls": "array of string (required)", "tags": "array of object", "status": "string"}}]`)
		if diff := cmp.Diff(want, jsonValue(t, string(res.Content))); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		res = call(t, b, "search", `{"query": "pets by status"}`)
		want = jsonValue(t, `[{"method": "GET", "path": "/pet/findByStatus", "summary": "Finds Pets by status", "tool": "findPetsByStatus",
			"params": {"status": "string (required)", "limit": "integer"}}]`)
		if diff := cmp.Diff(want, jsonValue(t, string(res.Content))); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestInlineBounded(t *testing.T) {
	t.Parallel()
	// L0 has 20 properties of schema L1, which has 20 of L2, and so on:
	// written out in full, 20^4 schemas.
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n")
	for level := range 4 {
		fmt.Fprintf(&b, "    L%d:\n      type: object\n      properties:\n", level)
		for i := range 20 {
			if level == 3 {
				fmt.Fprintf(&b, "        p%d: {type: string}\n", i)
			} else {
				fmt.Fprintf(&b, "        p%d: {$ref: '#/components/schemas/L%d'}\n", i, level+1)
			}
		}
	}
	doc, err := openapi3.NewLoader().LoadFromData([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	got := inline(doc.Components.Schemas["L0"])
	// The depth at which it fits: L0 and its L1s in full, the L2s cut.
	props := got["properties"].(map[string]any)
	if len(props) != 20 {
		t.Fatalf("L0 has %d properties", len(props))
	}
	l1 := props["p7"].(map[string]any)
	want := map[string]any{"type": "object", "description": "(L2, not written out)"}
	if diff := cmp.Diff(want, l1["properties"].(map[string]any)["p3"]); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestSpecCredentials checks that the spec is fetched with the credentials
// only from base_url's origin.
func TestSpecCredentials(t *testing.T) {
	t.Parallel()
	api, other := newTestAPI(t), newTestAPI(t)
	for _, from := range []*testAPI{api, other} {
		configured(t, map[string]any{"base_url": api.Base, "spec": from.srv.URL + "/openapi.json", "token": testToken, "headers": map[string]any{"X-Api-Key": "key-5a7d1c0e93"}})
	}
	got := map[string][]string{}
	for name, from := range map[string]*testAPI{"api": api, "other": other} {
		for _, r := range from.requests() {
			got[name] = append(got[name], r.URL.Path+" "+r.Header.Get("Authorization")+" "+r.Header.Get("X-Api-Key"))
		}
	}
	want := map[string][]string{
		"api":   {"/openapi.json Bearer " + testToken + " key-5a7d1c0e93"},
		"other": {"/openapi.json  "},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestSpecRedirectCredentials: the spec on base_url's origin, fetched with
// the credentials, redirects to another origin (on the same machine, as a
// port of its own; and by another name): the credentials do not follow.
func TestSpecRedirectCredentials(t *testing.T) {
	t.Parallel()
	other := newTestAPI(t)
	_, port, _ := net.SplitHostPort(other.srv.Listener.Addr().String())
	for name, target := range map[string]string{
		"another port": other.srv.URL + "/openapi.json",
		"another name": "http://localhost:" + port + "/openapi.json",
	} {
		api := httptest.NewServer(http.RedirectHandler(target, http.StatusFound))
		t.Cleanup(api.Close)
		seen := len(other.requests())
		configured(t, map[string]any{"base_url": api.URL, "spec": api.URL + "/openapi.json", "token": testToken,
			"headers": map[string]any{"X-Api-Key": "key-5a7d1c0e93"}})
		for _, r := range other.requests()[seen:] {
			if h := r.Header.Get("Authorization") + r.Header.Get("X-Api-Key"); h != "" {
				t.Errorf("%s: the redirected spec request carried %q", name, h)
			}
		}
	}
	if len(other.requests()) != 2 {
		t.Errorf("the spec was fetched %d times from where it redirects", len(other.requests()))
	}
}
