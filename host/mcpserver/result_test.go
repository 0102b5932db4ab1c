package mcpserver

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
)

func TestResponse(t *testing.T) {
	t.Parallel()
	big := `"` + strings.Repeat("x", 500) + `"`
	manyKeys := map[string]int{}
	for i := range 300 {
		manyKeys[strings.Repeat("k", 3)+string(rune('a'+i%26))+strings.Repeat("z", i)] = i
	}
	manyJSON, _ := json.Marshal(manyKeys)
	for name, tc := range map[string]struct {
		res       host.Result
		maxTokens int
		maxBytes  int
		noUI      bool
		want      string // the JSON text, or a prefix ending in "…"
	}{
		"value": {
			res:  host.Result{Output: json.RawMessage(`{"a": [1, 2]}`), Files: []string{}},
			want: `{"result":{"a": [1, 2]}}`,
		},
		"files and view": {
			res:  host.Result{Output: json.RawMessage(`1`), Files: []string{"/workspace/a.txt"}, View: "<b>hi</b>"},
			want: `{"result":1,"files":["/workspace/a.txt"],"view":"shown to the user (9 bytes of HTML)"}`,
		},
		"no ui": {
			res:  host.Result{Output: json.RawMessage(`1`), View: "<b>hi</b>"},
			noUI: true,
			want: `{"result":1}`,
		},
		"no output": {
			res:  host.Result{Output: json.RawMessage(`null`)},
			want: `{"result":null,"note":"The execution yielded no output. Only the value of the final expression is returned; print() output is not shown here. End the code with the expression you want back."}`,
		},
		"empty output": {
			res:  host.Result{},
			want: `{"result":null,"note":"The execution yielded no output.…`,
		},
		"within budget": {
			res:       host.Result{Output: json.RawMessage(big)},
			maxTokens: 200,
			want:      `{"result":` + big + `}`,
		},
		"over budget": {
			res:       host.Result{Output: json.RawMessage(big)},
			maxTokens: 100,
			want:      `{"result":"` + strings.Repeat("x", 200) + `...","note":"Execution output too big (~125 tokens, the limit is 100). It was replaced by its sbx.preview().…`,
		},
		"over budget even as a preview": {
			res:       host.Result{Output: manyJSON},
			maxTokens: 100,
			want:      `{"result":"{…`,
		},
		"escaped string over budget": {
			res:       host.Result{Output: json.RawMessage(`"` + strings.Repeat(`\"é\u00e9\n`, 100) + `"`)},
			maxTokens: 150,
			want:      `{"result":"` + strings.Repeat(`\"éé\n`, 50) + `...","note":"Execution output too big (~300 tokens, the limit is 150).…`,
		},
		"over the cap": {
			res:      host.Result{Output: json.RawMessage(`"` + strings.Repeat("x", 2<<20) + `"`), View: "<b>v</b>"},
			maxBytes: 2 << 20,
			want:     `{"error":"The result is too large to return: 2.0 MiB, the limit is 2 MiB (max_result_mb). Return only the data you need, or write it to a file in /workspace and return its path."}`,
		},
		"at the cap": {
			res:      host.Result{Output: json.RawMessage(`"` + strings.Repeat("x", 100) + `"`)},
			maxBytes: 102,
			want:     `{"result":"` + strings.Repeat("x", 100) + `"}`,
		},
		"no budget": {
			res:  host.Result{Output: json.RawMessage(big)},
			want: `{"result":` + big + `}`,
		},
		"after a restart": {
			res:  host.Result{Output: json.RawMessage(`1`), Note: "The sandbox was restarted; all state was lost."},
			want: `{"result":1,"note":"The sandbox was restarted; all state was lost."}`,
		},
		"after a restart, no output": {
			res:  host.Result{Output: json.RawMessage(`null`), Note: "The sandbox was restarted; all state was lost."},
			want: `{"result":null,"note":"The sandbox was restarted; all state was lost. The execution yielded no output.…`,
		},
		"raised after a restart": {
			res: host.Result{Output: json.RawMessage(`null`), Note: "The sandbox was restarted; all state was lost.",
				Error: &host.Error{Type: "NameError", Message: "name 'x' is not defined"}},
			want: `{"error":"NameError: name 'x' is not defined","note":"The sandbox was restarted; all state was lost."}`,
		},
		"raised": {
			res: host.Result{Output: json.RawMessage(`null`), Files: []string{"/workspace/half.txt"}, View: "<i>x</i>",
				Error: &host.Error{Type: "ZeroDivisionError", Message: "division by zero",
					Traceback: "Traceback (most recent call last):\n  File \"scratchpad.py\", line 1, in <module>\nZeroDivisionError: division by zero\n"}},
			want: `{"error":"Traceback (most recent call last):\n  File \"scratchpad.py\", line 1, in <module>\nZeroDivisionError: division by zero","files":["/workspace/half.txt"]}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resp := shaper{maxTokens: tc.maxTokens, maxBytes: tc.maxBytes, noUI: tc.noUI}.response(&tc.res)
			got, err := resp.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if !json.Valid(got) {
				t.Fatalf("not JSON: %s", got)
			}
			if prefix, ok := strings.CutSuffix(tc.want, "…"); ok {
				if !strings.HasPrefix(string(got), prefix) {
					t.Errorf("got %s\nwant a prefix %s", got, prefix)
				}
			} else if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if tc.maxTokens > 0 && estimateTokens(resp.Result) > tc.maxTokens {
				t.Errorf("result of ~%d tokens over the budget of %d", estimateTokens(resp.Result), tc.maxTokens)
			}
			if resp.IsError() != (tc.res.Error != nil || strings.HasPrefix(tc.want, `{"error"`)) {
				t.Errorf("IsError %v", resp.IsError())
			}
			tr := toolResult(resp)
			if tr.IsError != resp.IsError() || len(tr.Content) != 1 || tr.Content[0].(*mcp.TextContent).Text != string(got) ||
				tr.StructuredContent != nil {
				t.Errorf("tool result: %+v", tr)
			}
		})
	}
}

// TestResultCopies bounds what shaping a large result allocates, the
// result's bytes included: the tool result holds it once (no structured
// copy, no []byte-to-string copy), and a preview does not decode the whole
// string. Memory, not time: it does not depend on the machine's load.
func TestResultCopies(t *testing.T) {
	const size = 8 << 20
	out := json.RawMessage(`"` + strings.Repeat("x", size) + `"`)
	for name, tc := range map[string]struct {
		sh        shaper
		maxCopies float64 // of size
	}{
		"returned":  {shaper{}, 1.1},
		"previewed": {shaper{maxTokens: 1000}, 0.1},
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			tr := toolResult(tc.sh.response(&host.Result{Output: out}))
			runtime.ReadMemStats(&after)
			if got := float64(after.TotalAlloc-before.TotalAlloc) / size; got > tc.maxCopies {
				t.Errorf("allocated %.2f × the result's size, want at most %.2f", got, tc.maxCopies)
			}
			if len(tr.Content) != 1 || tr.StructuredContent != nil {
				t.Errorf("tool result: %d content blocks, structured %v", len(tr.Content), tr.StructuredContent != nil)
			}
		})
	}
}

func TestStringPrefix(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{
		`"abc"`:                       "ab",
		`"a"`:                         "a",
		`""`:                          "",
		`"\u00e9\ud83d\ude00xyz"`:     "é\U0001F600",
		`"\n\"\\xyz"`:                 "\n\"",
		`"日本語"`:                       "日本",
		`"\ud83d\ude00\ud83d\ude00x"`: "\U0001F600\U0001F600", // a pair is one character
	} {
		got, ok := stringPrefix([]byte(raw), 2)
		if !ok || got != want {
			t.Errorf("stringPrefix(%s, 2) = %q, %v; want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{`12`, `["a"]`, `"`, ``} {
		if _, ok := stringPrefix([]byte(raw), 2); ok {
			t.Errorf("stringPrefix(%s): ok for what is not a string", raw)
		}
	}
}

func TestErrorText(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		e    host.Error
		want string
	}{
		"no traceback": {host.Error{Type: "SandboxCrashed", Message: "The sandbox process died"}, "SandboxCrashed: The sandbox process died"},
		"traceback ends with the message": {
			host.Error{Type: "ValueError", Message: "bad", Traceback: "Traceback:\n  File x\nValueError: bad\n"},
			"Traceback:\n  File x\nValueError: bad",
		},
		"timeout: the host's message": {
			host.Error{Type: "KeyboardInterrupt", Message: "Execution timed out after 1s; the interpreter state was kept.",
				Traceback: "Traceback:\n  File x\nKeyboardInterrupt\n"},
			"Traceback:\n  File x\nKeyboardInterrupt\nKeyboardInterrupt: Execution timed out after 1s; the interpreter state was kept.",
		},
		"syntax error": {
			host.Error{Type: "SyntaxError", Message: "'(' was never closed (scratchpad.py, line 1)",
				Traceback: "  File \"scratchpad.py\", line 1\n    x=(\n      ^\nSyntaxError: '(' was never closed\n"},
			"  File \"scratchpad.py\", line 1\n    x=(\n      ^\nSyntaxError: '(' was never closed",
		},
	} {
		if got := errorText(&tc.e); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", name, got, tc.want)
		}
	}
}

func TestMIMEType(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]string{
		"/workspace/a.csv":      "text/csv",
		"/workspace/A.PNG":      "image/png",
		"/workspace/d/r.json":   "application/json",
		"/workspace/page.html":  "text/html",
		"/mnt/data/x.unknownxx": "application/octet-stream",
		"/workspace/noext":      "application/octet-stream",
	} {
		if got := mimeType(p); got != want {
			t.Errorf("mimeType(%s) = %s, want %s", p, got, want)
		}
	}
	for typ, want := range map[string]bool{"text/csv": true, "application/json": true, "image/svg+xml": true, "image/png": false, "application/pdf": false} {
		if isText(typ) != want {
			t.Errorf("isText(%s) = %v", typ, !want)
		}
	}
	if got := fileURI("/workspace/a b%.txt"); got != "file:///workspace/a%20b%25.txt" {
		t.Errorf("fileURI: %s", got)
	}
}

func TestLoopback(t *testing.T) {
	t.Parallel()
	for origin, want := range map[string]bool{
		"http://localhost:3000":  true,
		"http://127.0.0.1":       true,
		"https://127.8.9.1:8443": true,
		"http://[::1]:6274":      true,
		"http://LOCALHOST":       true,
		"https://example.com":    false,
		"http://localhost.evil":  false,
		"http://192.168.1.2":     false,
		"null":                   false,
		"file://localhost":       false,
		"http://0.0.0.0":         false,
	} {
		if got := loopbackOrigin(origin); got != want {
			t.Errorf("loopbackOrigin(%s) = %v", origin, got)
		}
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		res  *mcp.ElicitResult
		want string
	}{
		"accept":             {&mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}, ""},
		"accept, no content": {&mcp.ElicitResult{Action: "accept"}, ""},
		"decline":            {&mcp.ElicitResult{Action: "decline"}, "Denied: the user declined the call to ns.t (decline)"},
		"cancel":             {&mcp.ElicitResult{Action: "cancel"}, "Denied: the user declined the call to ns.t (cancel)"},
		"not allowed":        {&mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": false}}, "Denied: the user did not allow the call to ns.t"},
		"reason":             {&mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": false, "reason": "no"}}, "Denied: no"},
		"no answer":          {nil, "Denied: the user did not answer the approval of ns.t"},
	} {
		err := decide("ns.t", tc.res)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

func TestParseCode(t *testing.T) {
	t.Parallel()
	if code, err := parseCode(json.RawMessage(`{"code": "1 + 1"}`)); code != "1 + 1" || err != nil {
		t.Errorf("parseCode: %q, %v", code, err)
	}
	for _, bad := range []string{`{}`, `{"code": 1}`, `[]`, ``} {
		if _, err := parseCode(json.RawMessage(bad)); err == nil {
			t.Errorf("parseCode(%s) accepted", bad)
		}
	}
	var schema map[string]any
	if err := json.Unmarshal(InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"code"}, schema["required"]); diff != "" {
		t.Errorf("schema: %v", schema)
	}
}
