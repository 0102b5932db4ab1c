// Package inproc turns Go values into bridges that run in the host's
// process: the Go counterpart of the original's object and function
// bridges. The host wraps each value of Config.Context with New. It only
// finds the tools of a value: they are registered on an sdk.Bridge with
// (*sdk.Bridge).AddFunc, the tool engine plugins use, so schemas,
// argument decoding, defaults and errors follow the same rules in-process
// and in a plugin.
//
//	type Weather struct{ apiKey string }
//
//	// Forecast is the parameter object of Weather.GetForecast.
//	type Forecast struct {
//		City string `json:"city" jsonschema:"city name"`
//		Days int    `json:"days,omitempty"`
//	}
//
//	func (w *Weather) GetForecast(ctx context.Context, in Forecast) ([]Day, error) {
//		inproc.Request(ctx).Log("fetching " + in.City)
//		...
//	}
//
//	b, err := inproc.New("weather", &Weather{apiKey: key})
//
// In the sandbox this is weather.get_forecast(city="Oslo"), or
// weather.get_forecast("Oslo", 3) with positional arguments, mapped onto
// ToolInfo.Params in order.
//
// # Tools and names
//
// The tools of a value are its exported methods (for a pointer, those with
// pointer receivers too), named in snake_case: GetWeather becomes
// get_weather, GetURL get_url, ListIDs list_ids. A name that is a Python
// keyword, or "task" (the accessor that starts a background call), gets a
// trailing underscore: Import becomes import_, Task task_. Only these names
// are tools: calling "GetWeather" fails with CodeNotFound, and the message
// suggests "get_weather". (One name per tool keeps hooks and policies that
// match tool paths from being bypassed by a second spelling.) Two methods
// or fields that end up with the same name are an error from New.
//
// Not tools: methods that serve Go's interfaces (String, GoString and Error
// when they are func() string; Format; MarshalJSON, UnmarshalJSON and the
// Text and Binary variants), ToolDocs and ParamNames (below), and, on the
// value given to New, Shutdown(context.Context) error, which the bridge's
// own Shutdown calls instead (sdk.Shutdowner). Methods promoted from
// embedded fields are tools like any other. Methods whose signature is not
// one of the shapes below are skipped; when the value ends up with no tools
// at all, New fails and lists why each method was skipped.
//
// # Namespaces
//
// An exported, non-embedded field of a struct (or pointer to struct) is a
// nested namespace, named in snake_case like a tool, when it holds a non-nil
// value with tools of its own and its type is declared in the same package
// as the struct (or is unnamed), or when the field is tagged
// `parselbox:"namespace"`. Fields of other packages' types (*http.Client,
// *sql.DB, an API client) are data unless tagged, so that a service never
// hands the sandbox a client it merely holds; so are values that encode
// themselves (json.Marshaler, encoding.TextMarshaler: time.Time) and
// plain func fields. `parselbox:"-"` hides a field. A struct field reached
// through a pointer is crawled by address, so its pointer methods count.
// Namespaces nest up to MaxDepth levels below the root; a pointer back to a
// namespace being crawled is skipped. Tool names are dotted paths
// ("forecast.daily.get"); every namespace is listed in
// sdk.Description.Namespaces.
//
// An exported field of type Func or *Func is a tool named after the field.
//
// # Functions: the namespace itself is callable
//
// When v is a func (or a Func), the bridge has a single tool whose Name is
// the empty string: the namespace itself is the callable, as the original's
// function bridge does. New("add", func(a, b int) int {...}) is called as
// add(1, 2) in the sandbox, which the router sends as CallTool with Name ""
// (and the help renderer shows under the namespace's name). Every other
// Name is CodeNotFound.
//
// # Method shapes
//
// Parameters, in order:
//
//   - optional context.Context: the call's context, cancelled with it, and
//     carrying the *sdk.CallToolRequest (see Request);
//   - optional *sdk.CallToolRequest: the call itself (so a func written for
//     sdk.AddTool, func(ctx, req, In) (Out, error), fits as it is);
//   - then either one struct or *struct (a parameter object: its exported
//     fields, named by their json tags, are the parameters, in field
//     order), or any number of plain parameters, named arg0, arg1, … unless
//     named by ParamNamer or Func.Params. A struct that decodes itself
//     (time.Time) is a plain parameter; so is a lone struct whose name is
//     given by ParamNamer. A variadic last parameter is an array that may
//     be left out.
//
// Results: nothing, (T), (error) or (T, error). T is encoded with
// encoding/json (without HTML escaping) as the result's Content; nothing is
// null. A non-nil *sdk.CallToolResult is returned as it is; a func or
// method of the shape of sdk.ToolHandler (ctx, req) (*sdk.CallToolResult,
// error) reads req.Arguments itself: its input schema is any object, and
// its arguments are not checked.
//
// # Schemas
//
// ToolInfo.InputSchema is an object schema derived by
// github.com/google/jsonschema-go: properties in parameter order, no
// additional properties, `jsonschema:"..."` field tags as descriptions,
// `default:"..."` tags as defaults (applied when the argument is left out),
// []byte as a base64 string. Required are all plain parameters but a
// variadic one (which takes the remaining positional arguments from
// Python), and the fields of a parameter object, at any depth, that are
// neither pointers, nor tagged omitempty or omitzero, nor have a default. ToolInfo.Params lists the parameter names in
// order. ToolInfo.OutputSchema is the schema of T (absent when the tool
// returns no value, or T has no JSON Schema).
//
// # Descriptions and parameter names
//
// Go has no doc strings at run time. A value describes its tools by
// implementing Documented (ToolDocs) and names parameters by implementing
// ParamNamer (ParamNames); keys are Go names ("GetWeather") or tool names
// ("get_weather"); in ToolDocs the key "" is the namespace's own
// description (sdk.Description.Description for the root, NamespaceInfo's
// for a nested namespace, where a parent's entry for the field is used when
// the namespace has none). A key that matches nothing is an error, as is a
// ToolDocs or ParamNames method with the wrong signature. A function is
// described with Func.
//
// # Calls
//
// CallTool decodes the JSON arguments into the typed parameters, including
// structs and nested structs (the counterpart of the original's Pydantic
// auto-conversion). Arguments that do not fit fail with
// sdk.CodeInvalidArgument and a message naming them: unknown and missing
// arguments (`unknown argument "colour"; missing required argument "color"
// (parameters: color, size)`), a value of the wrong type
// (`argument "point": field "x": expected number, got string`), an unknown
// or missing field of a nested object (`argument "route": unknown field
// "z"`, `argument "route": missing required field "points[1].y"`), and
// null for a type that has no nil (`argument "dx": expected number, got
// null`; null is fine for pointers, slices, maps and interfaces). Names are
// matched exactly, also in nested objects' required fields. A call whose
// context is already done does not start (CodeCancelled or CodeTimeout).
//
// An error returned by a method fails the call with its text and the code
// of an *sdk.ToolError in its chain, or CodeCancelled and CodeTimeout for
// context.Canceled and context.DeadlineExceeded, or else CodeInternal. A
// panic fails it with CodeInternal "panic: ...". An unknown tool fails with
// CodeNotFound `tool "ns.path" not found`, the path including the
// namespace's name. CallTool returns an error only for a malformed request
// (nil, or arguments that are not a JSON object).
//
// The bridge does not change after New and takes no locks: methods run
// concurrently, as the host calls them, and must be safe for that.
// Configure does nothing; Describe lists tools and namespaces sorted by
// name.
package inproc
