package inproc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/host/inproc"
	"github.com/parselbox/parselbox/sdk"
)

// shapes has one method of each supported shape.
type shapes struct{}

type searchIn struct {
	Query string   `json:"query" jsonschema:"what to look for"`
	Limit int      `json:"limit,omitempty"`
	Tags  []string `json:"tags"`
	From  *Point   `json:"from"`
	Skip  bool     `json:"-"`
	Base
	hidden int
}

// Base is embedded: its fields are promoted into the parameter object.
type Base struct {
	Page int `json:"page,omitzero"`
}

type searchOut struct {
	Hits  []string `json:"hits"`
	Total int      `json:"total"`
}

type nested struct {
	At    Point  `json:"at"`
	Near  *Point `json:"near,omitempty"`
	Label string `json:"label"`
}

func (shapes) Ping()                                              {}
func (shapes) Add(a, b int) int                                   { return a + b }
func (shapes) Fail() error                                        { return nil }
func (shapes) Echo(ctx context.Context, s string) (string, error) { return s, nil }
func (shapes) Search(ctx context.Context, in searchIn) (searchOut, error) {
	return searchOut{}, nil
}
func (shapes) SearchPtr(in *searchIn) *searchOut                                        { return nil }
func (shapes) WithReq(ctx context.Context, req *sdk.CallToolRequest, in searchIn) error { return nil }
func (shapes) Sum(label string, xs ...int) int                                          { return 0 }
func (shapes) Named(x float64, p Point) float64                                         { return 0 }
func (shapes) Whole(p Point) float64                                                    { return 0 }
func (shapes) Nest(n nested) nested                                                     { return n }
func (shapes) At(t time.Time) time.Time                                                 { return t }
func (shapes) Any(v any) any                                                            { return v }

// Not tools.
func (shapes) Chan(c chan int)              {}
func (shapes) Three() (int, int, int)       { return 0, 0, 0 }
func (shapes) String() string               { return "shapes" }
func (shapes) MarshalJSON() ([]byte, error) { return []byte(`"shapes"`), nil }

func (shapes) ParamNames() map[string][]string {
	return map[string][]string{"named": {"x", "point"}, "Whole": {"p"}}
}

func (shapes) ToolDocs() map[string]string {
	return map[string]string{"": "All the shapes.", "Add": "Adds.", "search": "Searches."}
}

func TestDescribeShapes(t *testing.T) {
	t.Parallel()
	b, err := inproc.New("shapes", shapes{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "shapes" || d.Description != "All the shapes." {
		t.Errorf("Name, Description = %q, %q", d.Name, d.Description)
	}
	got := make(map[string]sdk.ToolInfo)
	var order []string
	for _, ti := range d.Tools {
		got[ti.Name] = ti
		order = append(order, ti.Name)
	}
	wantOrder := []string{"add", "any", "at", "echo", "fail", "named", "nest", "ping", "search", "search_ptr", "sum", "whole", "with_req"}
	if diff := cmp.Diff(wantOrder, order); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	const (
		point = `{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false}`
		// pointer fields are optional in inputs
		search = `{"type":"object","properties":{
			"query":{"type":"string","description":"what to look for"},
			"limit":{"type":"integer"},
			"tags":{"type":["null","array"],"items":{"type":"string"}},
			"from":{"type":["null","object"],"properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false},
			"page":{"type":"integer"}},
			"required":["query","tags"],"additionalProperties":false}`
		searchOut = `{"type":"object","properties":{"hits":{"type":["null","array"],"items":{"type":"string"}},"total":{"type":"integer"}},"required":["hits","total"],"additionalProperties":false}`
	)
	tests := map[string]struct {
		params      []string
		description string
		input       string
		output      string
	}{
		"ping": {
			input: `{"type":"object","properties":{},"additionalProperties":false}`,
		},
		"add": {
			params:      []string{"arg0", "arg1"},
			description: "Adds.",
			input:       `{"type":"object","properties":{"arg0":{"type":"integer"},"arg1":{"type":"integer"}},"required":["arg0","arg1"],"additionalProperties":false}`,
			output:      `{"type":"integer"}`,
		},
		"fail": {
			input: `{"type":"object","properties":{},"additionalProperties":false}`,
		},
		"echo": {
			params: []string{"arg0"},
			input:  `{"type":"object","properties":{"arg0":{"type":"string"}},"required":["arg0"],"additionalProperties":false}`,
			output: `{"type":"string"}`,
		},
		"search": {
			params:      []string{"query", "limit", "tags", "from", "page"},
			description: "Searches.",
			input:       search,
			output:      searchOut,
		},
		"search_ptr": {
			params: []string{"query", "limit", "tags", "from", "page"},
			input:  search,
			output: `{"type":["null","object"],"properties":{"hits":{"type":["null","array"],"items":{"type":"string"}},"total":{"type":"integer"}},"required":["hits","total"],"additionalProperties":false}`,
		},
		"with_req": {
			params: []string{"query", "limit", "tags", "from", "page"},
			input:  search,
		},
		"sum": {
			params: []string{"arg0", "arg1"},
			input:  `{"type":"object","properties":{"arg0":{"type":"string"},"arg1":{"type":["null","array"],"items":{"type":"integer"}}},"required":["arg0"],"additionalProperties":false}`,
			output: `{"type":"integer"}`,
		},
		"named": {
			params: []string{"x", "point"},
			input:  `{"type":"object","properties":{"x":{"type":"number"},"point":` + point + `},"required":["x","point"],"additionalProperties":false}`,
			output: `{"type":"number"}`,
		},
		"whole": {
			params: []string{"p"},
			input:  `{"type":"object","properties":{"p":` + point + `},"required":["p"],"additionalProperties":false}`,
			output: `{"type":"number"}`,
		},
		"nest": {
			params: []string{"at", "near", "label"},
			input: `{"type":"object","properties":{"at":` + point + `,
				"near":{"type":["null","object"],"properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false},
				"label":{"type":"string"}},"required":["at","label"],"additionalProperties":false}`,
			output: `{"type":"object","properties":{"at":` + point + `,
				"near":{"type":["null","object"],"properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"],"additionalProperties":false},
				"label":{"type":"string"}},"required":["at","label"],"additionalProperties":false}`,
		},
		"at": {
			params: []string{"arg0"},
			input:  `{"type":"object","properties":{"arg0":{"type":"string"}},"required":["arg0"],"additionalProperties":false}`,
			output: `{"type":"string"}`,
		},
		"any": {
			params: []string{"arg0"},
			input:  `{"type":"object","properties":{"arg0":true},"required":["arg0"],"additionalProperties":false}`,
			output: `true`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ti, ok := got[name]
			if !ok {
				t.Fatalf("no tool %q", name)
			}
			if diff := cmp.Diff(tt.params, ti.Params); diff != "" {
				t.Errorf("Params (-want +got):\n%s", diff)
			}
			if ti.Description != tt.description {
				t.Errorf("Description = %q, want %q", ti.Description, tt.description)
			}
			if diff := cmp.Diff(decodeJSON(t, tt.input), decodeJSON(t, string(ti.InputSchema))); diff != "" {
				t.Errorf("InputSchema (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(decodeJSON(t, tt.output), decodeJSON(t, string(ti.OutputSchema))); diff != "" {
				t.Errorf("OutputSchema (-want +got):\n%s", diff)
			}
			if got, want := propertyOrder(t, ti.InputSchema), ti.Params; !cmp.Equal(got, want) && len(want) > 0 {
				t.Errorf("InputSchema property order = %v, want %v", got, want)
			}
		})
	}
}

// decodeJSON decodes s, or returns nil for "".
func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	if s == "" {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decoding %s: %v", s, err)
	}
	return v
}

// propertyOrder returns the keys of the schema's "properties" in the order
// they are written.
func propertyOrder(t *testing.T, schema json.RawMessage) []string {
	t.Helper()
	var s struct {
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(s.Properties))
	var keys []string
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
			}
		case string:
			if depth == 1 { // a key: skip its value
				keys = append(keys, v)
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return keys
}
