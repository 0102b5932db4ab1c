package inproc

import (
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/parselbox/parselbox/sdk"
)

// MaxDepth is how many levels of namespaces New finds below the root: tool
// paths have at most MaxDepth+1 segments. Deeper fields are not crawled.
const MaxDepth = 5

// Func is a function together with what Go cannot find out at run time: the
// names of its parameters and a description. New accepts a Func wherever it
// accepts a func, and an exported field of type Func or *Func is a tool.
type Func struct {
	// Fn is the function; its shape is that of a method (see the package
	// documentation).
	Fn any
	// Params names Fn's parameters after the optional context.Context and
	// *sdk.CallToolRequest, in order. Nil means arg0, arg1, … or, for a lone
	// struct parameter, that struct's fields.
	Params []string
	// Description is the tool's doc text.
	Description string
}

// Documented is implemented by values that describe their tools. ToolDocs
// maps a method's name (Go's "GetWeather" or the tool's "get_weather"), or
// the name of a field that is a Func or a namespace, to its description; the
// key "" describes the namespace itself. A key that names no tool is an
// error from New.
type Documented interface {
	ToolDocs() map[string]string
}

// ParamNamer is implemented by values that name the parameters of their
// methods, which Go does not keep. ParamNames maps a method's name (Go's or
// the tool's), or the name of a Func field, to the names of its parameters
// after the optional context.Context and *sdk.CallToolRequest, in order.
// Naming the lone struct parameter of a method makes that struct one
// parameter of that name instead of a parameter object.
type ParamNamer interface {
	ParamNames() map[string][]string
}

// spec is a tool found by the crawler, added to the bridge once all are
// found (in name order).
type spec struct {
	tool *sdk.Tool
	fn   any
}

// New returns a bridge whose tools are the exported methods of v, named in
// snake_case, and the tools of its namespace fields, recursively; or, when v
// is a func or a Func, a bridge with a single tool named "" (the namespace
// itself is callable). The bridge is an *sdk.Bridge, the tool engine that
// plugins use: arguments, schemas and errors follow the same rules. A v
// that already is an sdk.BridgeServer is returned as it is. See the package
// documentation for the rules.
func New(name string, v any) (sdk.BridgeServer, error) {
	if bs, ok := v.(sdk.BridgeServer); ok {
		return bs, nil
	}
	if name == "" {
		return nil, errors.New("inproc: empty namespace name")
	}
	c := &crawler{check: sdk.NewBridge(nil, &sdk.Options{Logger: hclog.NewNullLogger()}), onPath: make(map[pathKey]bool)}
	doc, shutdown, err := c.build(v)
	if err != nil {
		return nil, fmt.Errorf("inproc: namespace %q: %w", name, err)
	}
	opts := &sdk.Options{Namespace: name, Logger: hclog.NewNullLogger()}
	if shutdown != nil {
		opts.Shutdown = shutdown.Shutdown
	}
	b := sdk.NewBridge(&sdk.Info{Name: name, Description: doc}, opts)
	slices.SortFunc(c.namespaces, func(x, y sdk.NamespaceInfo) int { return strings.Compare(x.Path, y.Path) })
	for _, ns := range c.namespaces {
		b.AddNamespace(&ns)
	}
	slices.SortFunc(c.specs, func(x, y spec) int { return strings.Compare(x.tool.Name, y.tool.Name) })
	for _, sp := range c.specs {
		if err := b.AddFunc(sp.tool, sp.fn); err != nil {
			return nil, fmt.Errorf("inproc: namespace %q: %w", name, err)
		}
	}
	return b, nil
}

// build crawls v; it returns the namespace's doc and the value's
// Shutdowner, if it has one.
func (c *crawler) build(v any) (string, sdk.Shutdowner, error) {
	rv := reflect.ValueOf(v)
	switch f := v.(type) {
	case nil:
		return "", nil, errors.New("nil value")
	case *Func:
		if f == nil {
			return "", nil, errors.New("nil *Func")
		}
		return "", nil, c.addFunc(*f)
	case Func:
		return "", nil, c.addFunc(f)
	}
	switch rv.Kind() {
	case reflect.Func:
		return "", nil, c.addFunc(Func{Fn: v})
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Chan:
		if rv.IsNil() {
			return "", nil, fmt.Errorf("nil %T", v)
		}
	}
	sd, _ := v.(sdk.Shutdowner)
	if rv.Kind() == reflect.Pointer {
		c.onPath[pathKey{rv.Pointer(), rv.Type()}] = true
	}
	n, doc, err := c.crawl(rv, "", 0)
	if err != nil {
		return "", nil, err
	}
	if n == 0 {
		return "", nil, noTools(rv, c.rootSkipped)
	}
	return doc, sd, nil
}

// addFunc makes f the bridge's only tool, named "".
func (c *crawler) addFunc(f Func) error {
	t, err := c.funcTool(f, nil)
	if err != nil {
		return err
	}
	c.specs = append(c.specs, *t)
	return nil
}

// funcTool checks f.Fn as a tool described by f, its parameters named by
// f.Params or else by names.
func (c *crawler) funcTool(f Func, names []string) (*spec, error) {
	fn := reflect.ValueOf(f.Fn)
	if fn.Kind() != reflect.Func || fn.IsNil() {
		return nil, fmt.Errorf("Func.Fn is %T, not a func", f.Fn)
	}
	if f.Params != nil {
		names = f.Params
	}
	return c.tool(fn, names, f.Description)
}

// tool checks that fn makes a tool (on the scratch bridge) and returns it,
// named "" until add names it.
func (c *crawler) tool(fn reflect.Value, names []string, description string) (*spec, error) {
	if err := c.check.AddFunc(&sdk.Tool{Name: "t", Params: names}, fn.Interface()); err != nil {
		return nil, err
	}
	c.check.RemoveTool("t")
	return &spec{tool: &sdk.Tool{Params: names, Description: description}, fn: fn.Interface()}, nil
}

// noTools explains why v has no tools.
func noTools(v reflect.Value, skipped map[string]error) error {
	msg := fmt.Sprintf("%s has no methods usable as tools", v.Type())
	if v.Kind() != reflect.Pointer && reflect.PointerTo(v.Type()).NumMethod() > v.NumMethod() {
		msg += fmt.Sprintf(" (methods with pointer receivers need a pointer: pass a *%s)", v.Type())
	}
	for _, name := range slices.Sorted(maps.Keys(skipped)) {
		msg += fmt.Sprintf("; method %s: %v", name, skipped[name])
	}
	return errors.New(msg)
}

// crawler finds the tools of a value and of its namespace fields.
type crawler struct {
	check       *sdk.Bridge // scratch bridge on which each tool is tried
	specs       []spec
	namespaces  []sdk.NamespaceInfo
	onPath      map[pathKey]bool // pointers being crawled, against cycles
	rootSkipped map[string]error // why root methods are not tools
}

type pathKey struct {
	ptr uintptr
	typ reflect.Type
}

// level is what one namespace's value says about its own tools.
type level struct {
	docs  map[string]string
	names map[string][]string
	used  map[string]bool   // keys of docs and names that matched
	taken map[string]string // tool or namespace name -> Go name
}

// crawl adds the tools of v, the namespace at path ("" for the root), and
// returns how many it found and the namespace's doc.
func (c *crawler) crawl(v reflect.Value, path string, depth int) (int, string, error) {
	lv := &level{used: make(map[string]bool), taken: make(map[string]string)}
	if d, ok := v.Interface().(Documented); ok {
		lv.docs = d.ToolDocs()
	}
	if p, ok := v.Interface().(ParamNamer); ok {
		lv.names = p.ParamNames()
	}
	found := len(c.specs)
	skipped := make(map[string]error)
	if depth == 0 {
		c.rootSkipped = skipped
	}

	vt := v.Type()
	for i := range vt.NumMethod() {
		m := vt.Method(i)
		fn := v.Method(i)
		if skip, err := protocolMethod(m.Name, fn.Type()); err != nil {
			return 0, "", err
		} else if skip {
			continue
		}
		if depth == 0 && m.Name == "Shutdown" && fn.Type() == shutdownType {
			continue // sdk.Shutdowner: called by the host, not a tool
		}
		tn := toolName(m.Name)
		names, err := lv.paramNames(m.Name, tn)
		if err != nil {
			return 0, "", err
		}
		t, err := c.tool(fn, names, "")
		if err != nil {
			if lv.mentions(m.Name, tn) {
				return 0, "", fmt.Errorf("method %s: %w", m.Name, err)
			}
			skipped[m.Name] = err
			continue
		}
		if err := c.add(lv, t, path, tn, m.Name); err != nil {
			return 0, "", err
		}
	}

	sv := v
	if sv.Kind() == reflect.Pointer {
		sv = sv.Elem()
	}
	if sv.Kind() == reflect.Struct {
		if err := c.fields(lv, sv, path, depth); err != nil {
			return 0, "", err
		}
	}

	for _, key := range slices.Sorted(maps.Keys(lv.docs)) {
		if key != "" && !lv.used[key] {
			return 0, "", fmt.Errorf("ToolDocs: %q is not a tool or namespace of %s", key, vt)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(lv.names)) {
		if !lv.used[key] {
			return 0, "", fmt.Errorf("ParamNames: %q is not a tool of %s", key, vt)
		}
	}
	return len(c.specs) - found, lv.docs[""], nil
}

// fields adds the tools of the exported fields of struct value sv: fields
// that hold a Func, and namespace fields.
func (c *crawler) fields(lv *level, sv reflect.Value, path string, depth int) error {
	st := sv.Type()
	for i := range st.NumField() {
		sf := st.Field(i)
		if !sf.IsExported() || sf.Anonymous {
			continue
		}
		tag := sf.Tag.Get("parselbox")
		if tag == "-" {
			continue
		}
		if tag != "" && tag != "namespace" {
			return fmt.Errorf("field %s: unknown tag parselbox:%q (want \"-\" or \"namespace\")", sf.Name, tag)
		}
		fv := sv.Field(i)
		tn := toolName(sf.Name)

		if f, ok := funcField(fv); ok {
			names, err := lv.paramNames(sf.Name, tn)
			if err != nil {
				return err
			}
			t, err := c.funcTool(f, names)
			if err != nil {
				return fmt.Errorf("field %s: %w", sf.Name, err)
			}
			if err := c.add(lv, t, path, tn, sf.Name); err != nil {
				return err
			}
			continue
		}

		if depth >= MaxDepth {
			continue
		}
		nv, ok := namespaceValue(fv, st.PkgPath(), tag == "namespace")
		if !ok {
			if tag == "namespace" {
				return fmt.Errorf("field %s: tagged parselbox:\"namespace\" but holds %s", sf.Name, describeValue(fv))
			}
			continue
		}
		var key pathKey
		if nv.Kind() == reflect.Pointer {
			key = pathKey{nv.Pointer(), nv.Type()}
			if c.onPath[key] {
				continue // points back at a namespace being crawled
			}
			c.onPath[key] = true
		}
		subPath := join(path, tn)
		k, doc, err := c.crawl(nv, subPath, depth+1)
		delete(c.onPath, key)
		if err != nil {
			return fmt.Errorf("field %s: %w", sf.Name, err)
		}
		if k == 0 {
			if tag == "namespace" {
				return fmt.Errorf("field %s: tagged parselbox:\"namespace\" but %s has no tools", sf.Name, nv.Type())
			}
			continue
		}
		if err := lv.take(tn, sf.Name); err != nil {
			return err
		}
		// The namespace's own ToolDocs()[""] wins over its parent's entry.
		if parentDoc := lv.doc(sf.Name, tn); doc == "" {
			doc = parentDoc
		}
		c.namespaces = append(c.namespaces, sdk.NamespaceInfo{Path: subPath, Description: doc})
	}
	return nil
}

// add registers t as the tool tn (Go name goName) of the namespace at path.
func (c *crawler) add(lv *level, t *spec, path, tn, goName string) error {
	if err := lv.take(tn, goName); err != nil {
		return err
	}
	t.tool.Name = join(path, tn)
	// A Func's own Description wins over ToolDocs.
	if d := lv.doc(goName, tn); t.tool.Description == "" {
		t.tool.Description = d
	}
	c.specs = append(c.specs, *t)
	return nil
}

// take claims name for the Go name goName.
func (lv *level) take(name, goName string) error {
	if other, ok := lv.taken[name]; ok {
		return fmt.Errorf("%s and %s are both named %q", other, goName, name)
	}
	lv.taken[name] = goName
	return nil
}

// doc returns the description that ToolDocs gives goName or name.
func (lv *level) doc(goName, name string) string {
	for _, key := range [...]string{goName, name} {
		if d, ok := lv.docs[key]; ok {
			lv.used[key] = true
			return d
		}
	}
	return ""
}

// paramNames returns the names that ParamNames gives goName or name.
func (lv *level) paramNames(goName, name string) ([]string, error) {
	_, byGo := lv.names[goName]
	if _, byName := lv.names[name]; byGo && byName && goName != name {
		return nil, fmt.Errorf("ParamNames: both %q and %q are given", goName, name)
	}
	for _, key := range [...]string{goName, name} {
		if p, ok := lv.names[key]; ok {
			lv.used[key] = true
			if p == nil {
				p = []string{} // an explicit empty list, not "no names"
			}
			return p, nil
		}
	}
	return nil, nil
}

// mentions reports whether ToolDocs or ParamNames has a key for goName or
// name.
func (lv *level) mentions(goName, name string) bool {
	_, a := lv.docs[goName]
	_, b := lv.docs[name]
	_, c := lv.names[goName]
	_, d := lv.names[name]
	return a || b || c || d
}

var (
	shutdownType     = reflect.TypeFor[func(context.Context) error]()
	funcValueType    = reflect.TypeFor[Func]()
	funcPointerType  = reflect.TypeFor[*Func]()
	docsMethodType   = reflect.TypeFor[func() map[string]string]()
	paramNamesType   = reflect.TypeFor[func() map[string][]string]()
	stringMethodType = reflect.TypeFor[func() string]()
	// codecTypes are implemented by values that encode or decode
	// themselves, whose JSON shape is not their fields.
	codecTypes = []reflect.Type{
		reflect.TypeFor[json.Marshaler](), reflect.TypeFor[encoding.TextMarshaler](),
		reflect.TypeFor[json.Unmarshaler](), reflect.TypeFor[encoding.TextUnmarshaler](),
	}
)

// protocolMethod reports whether the method name of type t serves one of
// Go's own interfaces or this package's, and so is no tool: ToolDocs,
// ParamNames, String, GoString, Error, Format, and the Marshal and Unmarshal
// methods of encoding/json and encoding. A ToolDocs or ParamNames method
// whose signature does not match its interface is an error, as it would
// otherwise be ignored silently.
func protocolMethod(name string, t reflect.Type) (bool, error) {
	switch name {
	case "ToolDocs":
		if t != docsMethodType {
			return true, fmt.Errorf("method ToolDocs is %s, want func() map[string]string (see inproc.Documented)", t)
		}
		return true, nil
	case "ParamNames":
		if t != paramNamesType {
			return true, fmt.Errorf("method ParamNames is %s, want func() map[string][]string (see inproc.ParamNamer)", t)
		}
		return true, nil
	case "String", "GoString", "Error":
		return t == stringMethodType, nil
	case "Format", "MarshalJSON", "UnmarshalJSON", "MarshalText", "UnmarshalText", "MarshalBinary", "UnmarshalBinary":
		return true, nil
	}
	return false, nil
}

// funcField returns the Func held by a field of type Func or *Func.
func funcField(fv reflect.Value) (Func, bool) {
	switch fv.Type() {
	case funcValueType:
		f := fv.Interface().(Func)
		return f, f.Fn != nil
	case funcPointerType:
		if fv.IsNil() {
			return Func{}, false
		}
		return *fv.Interface().(*Func), true
	}
	return Func{}, false
}

// namespaceValue returns the value to crawl for field value fv of a struct
// declared in package pkg, or false when the field is data. A field is a
// namespace candidate when it holds a non-nil value with methods or fields
// whose type is declared in pkg (or has no name), or when the field is
// tagged parselbox:"namespace". Types of other packages, like *http.Client
// or *sql.DB, are not crawled unless tagged, so that a service never hands
// the sandbox a client it merely holds. Values that encode or decode
// themselves (time.Time; see codecTypes) are data.
func namespaceValue(fv reflect.Value, pkg string, tagged bool) (reflect.Value, bool) {
	if fv.Kind() == reflect.Interface {
		if fv.IsNil() {
			return reflect.Value{}, false
		}
		fv = fv.Elem()
	}
	switch fv.Kind() {
	case reflect.Pointer:
		if fv.IsNil() {
			return reflect.Value{}, false
		}
	case reflect.Struct:
		if fv.CanAddr() {
			fv = fv.Addr() // its pointer methods too, as for the root
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return reflect.Value{}, false
	}
	base := fv.Type()
	if base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	if tagged {
		return fv, true
	}
	if base.Name() != "" && base.PkgPath() != pkg {
		return reflect.Value{}, false
	}
	if base.Kind() != reflect.Struct && fv.NumMethod() == 0 {
		return reflect.Value{}, false
	}
	if slices.ContainsFunc(codecTypes, reflect.PointerTo(base).Implements) {
		return reflect.Value{}, false
	}
	return fv, true
}

// describeValue says what a field holds, for errors.
func describeValue(fv reflect.Value) string {
	switch fv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		if fv.IsNil() {
			return "nil"
		}
	}
	return fv.Type().String()
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
