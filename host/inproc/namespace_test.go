package inproc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/host/inproc"
	"github.com/parselbox/parselbox/sdk"
)

type mission struct {
	Nav     *nav
	Comms   comms            // a struct value reached through a pointer: pointer methods count
	Extra   any              // an interface holding a namespace
	Buf     *strings.Builder // another package's type: data
	Notes   *strings.Builder `parselbox:"namespace"` // unless tagged
	Created time.Time        // encodes itself: data
	Secret  *nav             `parselbox:"-"`
	Spare   *nav             // nil
	Back    *mission         // a cycle
	Plain   func() int       // a plain func field is not a tool
	Help    inproc.Func
	Launch  *inproc.Func
	Empty   struct{ N int } // no tools
	count   int
}

func (m *mission) Status() string { return "nominal" }

func (m *mission) ToolDocs() map[string]string {
	return map[string]string{
		"":       "The mission.",
		"status": "Mission status.",
		"Comms":  "Radio.",
		"Nav":    "Overridden by nav's own doc.",
		"Help":   "Overridden by the Func's own description.",
		"launch": "Start the engines.",
	}
}

type nav struct {
	Deep *deep
}

type JumpIn struct {
	Target string `json:"target"`
}

func (nav) CalculateJump(ctx context.Context, in JumpIn) (string, error) {
	return "jump to " + in.Target, nil
}

func (nav) ToolDocs() map[string]string {
	return map[string]string{"": "Navigation.", "calculate_jump": "Plot a jump."}
}

type deep struct{}

func (*deep) Probe() string { return "deep" }

type comms struct{ Freq float64 }

func (c *comms) Tune(f float64)    { c.Freq = f }
func (c comms) Frequency() float64 { return c.Freq }

func newMission() *mission {
	m := &mission{
		Nav:    &nav{Deep: &deep{}},
		Extra:  &comms{Freq: 7},
		Buf:    &strings.Builder{},
		Notes:  &strings.Builder{},
		Secret: &nav{},
		Plain:  func() int { return 1 },
		Help: inproc.Func{
			Fn:          func(topic string) string { return "help on " + topic },
			Params:      []string{"topic"},
			Description: "Get help.",
		},
		Launch: &inproc.Func{Fn: func(ctx context.Context) error { return nil }},
	}
	m.Back = m
	return m
}

func TestNamespaces(t *testing.T) {
	t.Parallel()
	m := newMission()
	b, err := inproc.New("mission", m)
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if d.Description != "The mission." {
		t.Errorf("Description = %q", d.Description)
	}
	wantNS := []sdk.NamespaceInfo{
		{Path: "comms", Description: "Radio."},
		{Path: "extra"},
		{Path: "nav", Description: "Navigation."},
		{Path: "nav.deep"},
		{Path: "notes"},
	}
	if diff := cmp.Diff(wantNS, d.Namespaces); diff != "" {
		t.Errorf("Namespaces (-want +got):\n%s", diff)
	}
	type toolDoc struct{ Name, Description string }
	var got []toolDoc
	for _, ti := range d.Tools {
		if strings.HasPrefix(ti.Name, "notes.") {
			continue // strings.Builder's methods, checked below
		}
		got = append(got, toolDoc{ti.Name, ti.Description})
	}
	want := []toolDoc{
		{"comms.frequency", ""},
		{"comms.tune", ""},
		{"extra.frequency", ""},
		{"extra.tune", ""},
		{"help", "Get help."},
		{"launch", "Start the engines."},
		{"nav.calculate_jump", "Plot a jump."},
		{"nav.deep.probe", ""},
		{"status", "Mission status."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	calls := []struct{ tool, args, want string }{
		{"status", `{}`, `"nominal"`},
		{"nav.calculate_jump", `{"target":"Vega"}`, `"jump to Vega"`},
		{"nav.deep.probe", `{}`, `"deep"`},
		{"help", `{"topic":"jumps"}`, `"help on jumps"`},
		{"launch", `{}`, `null`},
		{"comms.tune", `{"arg0":121.5}`, `null`},
		{"comms.frequency", `{}`, `121.5`},
		{"extra.frequency", `{}`, `7`},
		{"notes.write_string", `{"arg0":"hello"}`, `5`},
		{"notes.len", `{}`, `5`},
	}
	for _, c := range calls {
		res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: c.tool, Arguments: json.RawMessage(c.args)})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Errorf("%s: %s", c.tool, res.Error.Message)
			continue
		}
		if string(res.Content) != c.want {
			t.Errorf("%s = %s, want %s", c.tool, res.Content, c.want)
		}
	}
	if m.Comms.Freq != 121.5 {
		t.Errorf("Comms.Freq = %g: comms.tune did not reach the mission's field", m.Comms.Freq)
	}
}

// chain nests itself: namespaces stop MaxDepth levels below the root.
type chain struct {
	Next *chain
}

func (*chain) Here() {}

func TestNamespaceDepth(t *testing.T) {
	t.Parallel()
	root := &chain{}
	for c, i := root, 0; i < 10; i++ {
		c.Next = &chain{}
		c = c.Next
	}
	b, err := inproc.New("c", root)
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ti := range d.Tools {
		got = append(got, ti.Name)
	}
	want := []string{"here"}
	for p, i := "", 0; i < inproc.MaxDepth; i++ {
		p += "next."
		want = append(want, p+"here")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestFunc(t *testing.T) {
	t.Parallel()
	type in struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	tests := map[string]struct {
		v      any
		args   string
		params []string
		desc   string
		want   string
	}{
		"plain func": {
			v:      func(a, b int) int { return a + b },
			args:   `{"arg0":1,"arg1":2}`,
			params: []string{"arg0", "arg1"},
			want:   `3`,
		},
		"func with a parameter object": {
			v:      func(ctx context.Context, p in) (int, error) { return p.A + p.B, nil },
			args:   `{"a":1,"b":2}`,
			params: []string{"a", "b"},
			want:   `3`,
		},
		"Func": {
			v:      inproc.Func{Fn: func(a, b int) int { return a + b }, Params: []string{"a", "b"}, Description: "Add."},
			args:   `{"a":1,"b":2}`,
			params: []string{"a", "b"},
			desc:   "Add.",
			want:   `3`,
		},
		"*Func": {
			v:    &inproc.Func{Fn: func() string { return "hi" }},
			args: `{}`,
			want: `"hi"`,
		},
		"sdk.ToolHandler": {
			v: sdk.ToolHandler(func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: req.Arguments}, nil
			}),
			args: `{"a":1}`,
			want: `{"a":1}`,
		},
		"sdk.AddTool handler shape": {
			v: func(ctx context.Context, req *sdk.CallToolRequest, p in) (int, error) {
				return p.A * p.B, nil
			},
			args:   `{"a":3,"b":2}`,
			params: []string{"a", "b"},
			want:   `6`,
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, err := inproc.New("add", tt.v)
			if err != nil {
				t.Fatal(err)
			}
			d, err := b.Describe(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Tools) != 1 {
				t.Fatalf("Tools = %+v, want one", d.Tools)
			}
			ti := d.Tools[0]
			if ti.Name != "" || ti.Description != tt.desc || !cmp.Equal(ti.Params, tt.params) {
				t.Errorf("tool = %q %q %v, want \"\" %q %v", ti.Name, ti.Description, ti.Params, tt.desc, tt.params)
			}
			res, err := b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "", Arguments: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || string(res.Content) != tt.want {
				t.Errorf("CallTool = %s %+v, want %s", res.Content, res.Error, tt.want)
			}
			res, err = b.CallTool(t.Context(), &sdk.CallToolRequest{Name: "add", Arguments: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatal(err)
			}
			wantErr := &sdk.ToolError{Code: sdk.CodeNotFound, Message: `tool "add.add" not found`}
			if diff := cmp.Diff(wantErr, res.Error); diff != "" {
				t.Errorf("CallTool(add) (-want +got):\n%s", diff)
			}
		})
	}
}

type collide struct{}

func (collide) GetURL() {}
func (collide) GetUrl() {}

type onlyChan struct{}

func (onlyChan) Chan(c chan int) {}

type badNames struct{}

func (badNames) Add(a, b int) int { return a + b }
func (badNames) ParamNames() map[string][]string {
	return map[string][]string{"Add": {"a"}}
}

type unknownNames struct{ badNames }

func (unknownNames) ParamNames() map[string][]string {
	return map[string][]string{"Add": {"a", "b"}, "Sub": {"a", "b"}}
}

type bothNames struct{ badNames }

func (bothNames) ParamNames() map[string][]string {
	return map[string][]string{"Add": {"a", "b"}, "add": {"x", "y"}}
}

type dupNames struct{ badNames }

func (dupNames) ParamNames() map[string][]string {
	return map[string][]string{"Add": {"a", "a"}}
}

type unknownDocs struct{ badNames }

func (unknownDocs) ParamNames() map[string][]string { return nil }
func (unknownDocs) ToolDocs() map[string]string {
	return map[string]string{"Ad": "typo"}
}

type wrongDocs struct{}

func (wrongDocs) Add(a, b int) int         { return a + b }
func (wrongDocs) ToolDocs() map[string]any { return nil }

type namedSkipped struct{ onlyChan }

func (namedSkipped) Ok() {}
func (namedSkipped) ToolDocs() map[string]string {
	return map[string]string{"Chan": "Send on a channel."}
}

type badTag struct {
	Sub *nav `parselbox:"ns"`
}

func (badTag) Ok() {}

type nilTagged struct {
	Sub *nav `parselbox:"namespace"`
}

func (nilTagged) Ok() {}

type toolless struct{}

type emptyTagged struct {
	Sub *toolless `parselbox:"namespace"`
}

func (emptyTagged) Ok() {}

type fieldCollide struct {
	Ok *deep
}

func (fieldCollide) OK() {}

type badFunc struct {
	Do inproc.Func
}

func (badFunc) Ok() {}

type badShape struct{}

func (badShape) Two() (int, int)                 { return 0, 0 }
func (badShape) Late(x int, ctx context.Context) {}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		name string
		v    any
		want string // substring of the error
	}{
		"nil":                 {v: nil, want: `inproc: namespace "x": nil value`},
		"nil pointer":         {v: (*geo)(nil), want: "nil *inproc_test.geo"},
		"nil *Func":           {v: (*inproc.Func)(nil), want: "nil *Func"},
		"empty name":          {name: "-", v: &geo{}, want: "inproc: empty namespace name"},
		"Func without a func": {v: inproc.Func{Fn: 42}, want: "Func.Fn is int, not a func"},
		"pointer receivers": {
			v:    geo{},
			want: "inproc_test.geo has no methods usable as tools (methods with pointer receivers need a pointer: pass a *inproc_test.geo)",
		},
		"reasons for skipping": {
			v:    onlyChan{},
			want: "inproc_test.onlyChan has no methods usable as tools; method Chan: parameter arg0: ForType(chan int): type chan int is unsupported by jsonschema",
		},
		"bad shapes": {
			v:    badShape{},
			want: "method Late: context.Context must be the first parameter; method Two: two results must be a value and an error",
		},
		"name collision":      {v: collide{}, want: `GetURL and GetUrl are both named "get_url"`},
		"field collision":     {v: fieldCollide{Ok: &deep{}}, want: `OK and Ok are both named "ok"`},
		"parameter count":     {v: badNames{}, want: "method Add: 1 parameter names for 2 parameters"},
		"unknown ParamNames":  {v: unknownNames{}, want: `ParamNames: "Sub" is not a tool of inproc_test.unknownNames`},
		"ParamNames twice":    {v: bothNames{}, want: `ParamNames: both "Add" and "add" are given`},
		"duplicate names":     {v: dupNames{}, want: `method Add: parameter name "a" used twice`},
		"unknown ToolDocs":    {v: unknownDocs{}, want: `ToolDocs: "Ad" is not a tool or namespace of inproc_test.unknownDocs`},
		"ToolDocs signature":  {v: wrongDocs{}, want: "method ToolDocs is func() map[string]interface {}, want func() map[string]string"},
		"skipped but named":   {v: namedSkipped{}, want: "method Chan: parameter arg0"},
		"unknown tag":         {v: badTag{}, want: `field Sub: unknown tag parselbox:"ns"`},
		"nil tagged field":    {v: nilTagged{}, want: `field Sub: tagged parselbox:"namespace" but holds nil`},
		"tagged but toolless": {v: emptyTagged{Sub: &toolless{}}, want: `field Sub: tagged parselbox:"namespace" but *inproc_test.toolless has no tools`},
		"bad Func field":      {v: badFunc{Do: inproc.Func{Fn: "add"}}, want: "field Do: Func.Fn is string, not a func"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ns := "x"
			if tt.name == "-" {
				ns = ""
			}
			b, err := inproc.New(ns, tt.v)
			if err == nil {
				t.Fatalf("New succeeded: %+v", b)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New error = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

// served is already a bridge.
type served struct{ sdk.BridgeServer }

func TestNewBridgeServer(t *testing.T) {
	t.Parallel()
	s := &served{}
	b, err := inproc.New("x", s)
	if err != nil {
		t.Fatal(err)
	}
	if b != sdk.BridgeServer(s) {
		t.Errorf("New(bridge) = %v, want the bridge itself", b)
	}
}

type closer struct{ shut chan string }

func (c *closer) Ping() string { return "pong" }
func (c *closer) Shutdown(ctx context.Context) error {
	c.shut <- "shut"
	return nil
}

func TestShutdown(t *testing.T) {
	t.Parallel()
	c := &closer{shut: make(chan string, 1)}
	b, err := inproc.New("x", c)
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tools) != 1 || d.Tools[0].Name != "ping" {
		t.Errorf("tools = %+v, want only ping", d.Tools)
	}
	sd, ok := b.(sdk.Shutdowner)
	if !ok {
		t.Fatal("the bridge is not an sdk.Shutdowner")
	}
	if err := sd.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := <-c.shut; got != "shut" {
		t.Errorf("Shutdown did not reach the value")
	}
	// Without a Shutdown method, Shutdown does nothing.
	b, err = inproc.New("x", &geo{})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.(sdk.Shutdowner).Shutdown(t.Context()); err != nil {
		t.Error(err)
	}
	if err := b.Configure(t.Context(), &sdk.ConfigureRequest{Config: json.RawMessage(`{"x":1}`)}); err != nil {
		t.Errorf("Configure: %v", err)
	}
}

func TestDescribeIsACopy(t *testing.T) {
	t.Parallel()
	b, err := inproc.New("mission", newMission())
	if err != nil {
		t.Fatal(err)
	}
	first, err := b.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%+v", first)
	for i := range first.Tools {
		first.Tools[i].Name = "changed"
		if len(first.Tools[i].Params) > 0 {
			first.Tools[i].Params[0] = "changed"
		}
		first.Tools[i].InputSchema[0] = 'x'
	}
	first.Namespaces[0].Path = "changed"
	second, err := b.Describe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%+v", second); got != want {
		t.Errorf("Describe changed after its result was modified:\n%s\nwant\n%s", got, want)
	}
}
