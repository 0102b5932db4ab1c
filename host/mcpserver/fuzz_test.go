package mcpserver

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/parselbox/parselbox/host"
)

// FuzzToolArguments feeds execute_code's arguments as a client may send
// them (any bytes) to parseCode: it must not panic; whatever it accepts is
// the string "code" of a JSON object, and what it refuses says what the
// tool takes. Seeds: testdata/fuzz/FuzzToolArguments.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{`{"code": "1 + 1"}`, `{"code": ""}`, `{}`, `null`, `{"code": 1}`,
		`{"code": "x", "code": "y"}`, `{"code": "\ud800"}`, `[]`, `{"code": null, "extra": true}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		code, err := parseCode(args)
		if err != nil {
			if !errors.Is(err, errNoCode) {
				t.Fatalf("parseCode(%q): %v does not say what the tool takes", args, err)
			}
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(args, &obj) != nil {
			t.Fatalf("parseCode(%q) accepted what is not a JSON object", args)
		}
		var again string
		if json.Unmarshal(obj["code"], &again) != nil || again != code {
			t.Fatalf("parseCode(%q) = %q, not the object's code", args, code)
		}
	})
}

// FuzzResponse shapes any result value, with and without a budget: the
// text is always one valid JSON object, within the budget when one is set
// (a preview), and never more than the cap. Seeds: testdata/fuzz/FuzzResponse.
func FuzzResponse(f *testing.F) {
	for _, s := range []string{`1`, `"abc"`, `"\ud83d\ude00x"`, `{"a": [1, 2, {"b": "c"}]}`, `null`, ``,
		`"` + string(make([]byte, 300)) + `"`, `[1,2,3,4,5,6,7,8,9,10,11,12]`} {
		f.Add([]byte(s), uint16(10), uint16(0))
	}
	f.Fuzz(func(t *testing.T, out []byte, maxTokens, maxBytes uint16) {
		if !json.Valid(out) {
			return // the sandbox sends JSON it made itself
		}
		sh := shaper{maxTokens: int(maxTokens), maxBytes: int(maxBytes)}
		resp := sh.response(&host.Result{Output: out})
		text := resp.text()
		var obj map[string]any
		if err := json.Unmarshal([]byte(text), &obj); err != nil {
			t.Fatalf("response to %q is not a JSON object: %v\n%s", out, err, text)
		}
		if sh.maxBytes > 0 && len(out) > sh.maxBytes {
			if !resp.IsError() {
				t.Fatalf("a result of %d bytes passed a cap of %d", len(out), sh.maxBytes)
			}
			return
		}
		// A budget smaller than the mark of a cut result still gets the mark.
		budget := max(sh.maxTokens, estimateTokens([]byte(`"...(truncated)"`)))
		if resp.Note != "" && resp.Note != noteNoOutput && sh.maxTokens > 0 && estimateTokens(resp.Result) > budget {
			t.Fatalf("preview of %q: %d tokens over the budget of %d", out, estimateTokens(resp.Result), sh.maxTokens)
		}
	})
}
