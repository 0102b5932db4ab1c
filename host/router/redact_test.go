package router

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host/sandbox"
	"github.com/parselbox/parselbox/sdk"
)

const routerSecret = "sk-live-Zr8Tq4Wn1Xc7Vb2M"

// leakyBridge knows a secret and sends it back everywhere: the router must
// remove it, since a bridge can always forget to.
type leakyBridge struct {
	fakeBridge
	red *sdk.Redactor
}

func (l *leakyBridge) Redactor() *sdk.Redactor { return l.red }

func TestRedaction(t *testing.T) {
	t.Parallel()
	s := routerSecret
	b64 := base64.StdEncoding.EncodeToString
	payload := func(k int) []byte { return []byte(strings.Repeat("x", k) + "token=" + s + ";") }
	result, _ := json.Marshal(map[string]any{
		"raw":      "Bearer " + s,
		"url":      url.QueryEscape("k=" + s + "&z=1"),
		"hex":      hex.EncodeToString([]byte(s)),
		"b64":      []string{b64(payload(0)), b64(payload(1)), b64(payload(2))},
		"b64url":   base64.RawURLEncoding.EncodeToString(payload(1)),
		"bytes":    map[string]string{sdk.BytesKey: b64(append([]byte{0xff, 0xfe}, payload(2)...))},
		"key " + s: 1,
	})
	b := &leakyBridge{red: sdk.NewRedactor(s), fakeBridge: fakeBridge{
		desc: &sdk.Description{Description: "Uses " + s, Tools: []sdk.ToolInfo{
			{Name: "leak", Description: "token " + s, InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"default":"` + s + `"}}}`)},
			{Name: "fail"},
		}},
		call: func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			req.Log("log " + s)
			req.Progress(1, 2, "progress "+url.PathEscape(s))
			if req.Name == "fail" {
				return nil, sdk.Errorf(sdk.CodePermission, "no, %s", strings.ToUpper(hex.EncodeToString([]byte(s))))
			}
			return &sdk.CallToolResult{Content: result}, nil
		},
	}}
	dir := t.TempDir()
	r := New(Options{TaskDir: dir})
	if err := r.Add(t.Context(), "b", "plugin", b); err != nil {
		t.Fatal(err)
	}
	var seen []string
	out, err := serve(t, r, "call", `{"path":"b.leak","task_id":"t1"}`)
	if err != nil {
		t.Fatal(err)
	}
	seen = append(seen, out)
	var got map[string]any
	json.Unmarshal([]byte(out), &got)
	bytes, err := base64.StdEncoding.DecodeString(got["bytes"].(map[string]any)[sdk.BytesKey].(string))
	if err != nil {
		t.Fatalf("bytes no longer base64: %v", err)
	}
	seen = append(seen, string(bytes))
	if !strings.Contains(string(bytes), "token="+sdk.Redacted) {
		t.Errorf("bytes not redacted as bytes: %q", bytes)
	}
	_, err = serve(t, r, "call", `{"path":"b.fail"}`)
	var re *sandbox.RemoteError
	if !errors.As(err, &re) || re.Type != "PermissionError" {
		t.Fatalf("fail: %v", err)
	}
	seen = append(seen, re.Message)
	log, _ := readFile(dir + "/t1.log")
	seen = append(seen, log)
	help, _ := r.help(t.Context(), "b", false)
	doc, _ := r.help(t.Context(), "b.leak", false)
	docJSON, _ := json.Marshal(doc)
	seen = append(seen, help.(string), string(docJSON))
	found, _ := json.Marshal(r.search(t.Context(), "token"))
	seen = append(seen, string(found))
	// A bridge calling back into the host gets the other bridge's result
	// redacted too: it could hand it to the sandbox.
	res, err := r.CallTool(t.Context(), "b.leak", nil)
	if err != nil {
		t.Fatal(err)
	}
	seen = append(seen, string(res.Content))

	all := strings.Join(seen, "\n")
	for _, form := range []string{s, url.QueryEscape(s), hex.EncodeToString([]byte(s)), strings.ToUpper(hex.EncodeToString([]byte(s))),
		base64.RawStdEncoding.EncodeToString([]byte(s)[:21]), base64.RawStdEncoding.EncodeToString([]byte(s)[1:22]), base64.RawStdEncoding.EncodeToString([]byte(s)[2:23])} {
		if strings.Contains(all, form) {
			t.Errorf("the sandbox sees %q:\n%s", form, all)
		}
	}
	if n := strings.Count(all, sdk.Redacted); n < 14 {
		t.Errorf("%d redactions, want one per place the secret was put:\n%s", n, all)
	}
}

// Bytes from Python become base64 strings in one pass; positional arguments
// beyond a variadic tool's parameters are its list.
func TestBindVariadic(t *testing.T) {
	t.Parallel()
	tool := &sdk.ToolInfo{Name: "sum", Params: []string{"label", "xs"}, Variadic: true}
	for _, tc := range []struct {
		args   string
		kwargs string
		want   string
	}{
		{`["a", 1, 2, 3]`, `{}`, `{"label":"a","xs":[1,2,3]}`},
		{`["a"]`, `{}`, `{"label":"a"}`},
		{`[]`, `{"label": "b", "xs": [ 4 ]}`, `{"label":"b","xs":[4]}`},
		{`[{"__b64__": "AP8="}, {"__b64__":"AA=="}]`, `{}`, `{"label":"AP8=","xs":["AA=="]}`},
		{`["s", "{\"__b64__\":\"AA==\"}"]`, `{}`, `{"label":"s","xs":["{\"__b64__\":\"AA==\"}"]}`},
	} {
		var args []json.RawMessage
		var kwargs map[string]json.RawMessage
		json.Unmarshal([]byte(tc.args), &args)
		json.Unmarshal([]byte(tc.kwargs), &kwargs)
		got, err := bindArgs(tool, args, kwargs)
		if err != nil || string(got) != tc.want {
			t.Errorf("bindArgs(%s, %s) = %s, %v; want %s", tc.args, tc.kwargs, got, err, tc.want)
		}
	}
	if _, err := bindArgs(tool, []json.RawMessage{json.RawMessage(`"a"`), json.RawMessage(`1`)}, map[string]json.RawMessage{"xs": json.RawMessage(`[2]`)}); err == nil {
		t.Error("xs given twice was accepted")
	}
}

func TestSignature(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tool sdk.ToolInfo
		want string
	}{
		{sdk.ToolInfo{Name: "scan", Params: []string{"sector"}, InputSchema: json.RawMessage(`{"properties":{"sector":{"default":"alpha"}}}`)}, "scan(sector = 'alpha')"},
		{sdk.ToolInfo{Name: "fire", Params: []string{"target", "power"}, InputSchema: json.RawMessage(`{"properties":{"target":{"type":"string"},"power":{"type":"integer","default":100}},"required":["target"]}`)}, "fire(target: str, power: int = 100)"},
		{sdk.ToolInfo{Name: "broadcast", Params: []string{"msg", "encrypt", "to"}, InputSchema: json.RawMessage(`{"properties":{"msg":{"type":"string"},"encrypt":{"type":"boolean","default":true},"to":{"type":["string","null"]}},"required":["msg"]}`)}, "broadcast(msg: str, encrypt: bool = True, to: str | None = None)"},
		{sdk.ToolInfo{Name: "sum", Params: []string{"label", "xs"}, Variadic: true, InputSchema: json.RawMessage(`{"properties":{"label":{"type":"string"},"xs":{"type":"array","items":{"type":"number"}}},"required":["label"]}`)}, "sum(label: str, *xs: float)"},
		{sdk.ToolInfo{Name: "q", Params: []string{"o"}, InputSchema: json.RawMessage(`{"properties":{"o":{"type":"object","default":{"k":[null,false,"it's"]}}}}`)}, `q(o: dict = {'k': [None, False, 'it\'s']})`},
		{sdk.ToolInfo{Name: "pick", Params: []string{"mode", "ids"}, InputSchema: json.RawMessage(`{"properties":{"mode":{"enum":["a","b"]},"ids":{"type":"array","items":{"anyOf":[{"type":"integer"},{"type":"string"}]}}},"required":["mode","ids"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"result":{"type":"array","items":{"type":"string"}}}}`)}, "pick(mode: Literal['a', 'b'], ids: list[int | str]) -> list[str]"},
		{sdk.ToolInfo{Name: "find", OutputSchema: json.RawMessage(`{"type":["null","array"],"items":{"type":"string"}}`)}, "find() -> list[str] | None"},
		{sdk.ToolInfo{Name: "get", InputSchema: json.RawMessage(`{"properties":{"b":{"type":"integer"},"a":{}},"required":["a","b"]}`), OutputSchema: json.RawMessage(`{"type":"object","properties":{"x":{}}}`)}, "get(a, b: int) -> dict"},
	} {
		if got := Signature(tc.tool.Name, &tc.tool); got != tc.want {
			t.Errorf("Signature = %s, want %s", got, tc.want)
		}
	}
}

// sbx is discovery, not a tool call: hooks (an approval prompt, say) do not
// see it.
func TestToolkitSkipsHooks(t *testing.T) {
	t.Parallel()
	h := &refuser{}
	r, _ := echoRouter(t, Options{Hooks: h, Guide: func() string { return "the guide" }})
	if got, err := serve(t, r, "call", `{"path":"sbx.help"}`); err != nil || got != `"the guide"` {
		t.Errorf("sbx.help = %s, %v", got, err)
	}
	if got, err := serve(t, r, "call", `{"path":"sbx.inspect","args":["echo.say",["echo.deep"]]}`); err != nil || !strings.Contains(got, `"echo.deep":{"methods":["ping"]`) || !strings.Contains(got, `"signature":"say(text: str = None, times: int = None) -\u003e str"`) {
		t.Errorf("sbx.inspect = %s, %v", got, err)
	}
	if len(h.calls) != 0 {
		t.Errorf("hooks saw %v", h.calls)
	}
}
