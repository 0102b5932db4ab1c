package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/router"
	"github.com/parselbox/parselbox/host/ui"
)

// Notes added to results.
const (
	noteNoOutput = "The execution yielded no output. Only the value of the final expression is " +
		"returned; print() output is not shown here. End the code with the expression you want back."
	noteTruncated = "Execution output too big (~%d tokens, the limit is %d). It was replaced by its " +
		"sbx.preview(). Return only the data you need, or slice it, e.g. data[:20]."
	noteTooLarge = "The result is too large to return: %.1f MiB, the limit is %d MiB (max_result_mb). " +
		"Return only the data you need, or write it to a file in /workspace and return its path."
)

// viewShown stands for the view in what the model reads.
const viewShown = "shown to the user (%d bytes of HTML)"

// Response is the result object of execute_code: {"result": ...} with
// optional "note", "files" and "view", or {"error": "..."} (with "note"
// when the sandbox was restarted before the code ran, and "files" when the
// failed code wrote some).
type Response struct {
	// Result is the value of the code's last expression as JSON ("null"
	// when it had none). Unset when Error is set.
	Result json.RawMessage
	// Error is the exception, its traceback and message, when the code
	// raised; or what went wrong with the sandbox.
	Error string
	// Note tells the agent about the result: that the sandbox was
	// restarted before it ran (state was lost), truncated, or empty.
	Note string
	// Files are the sandbox paths of the files the execution wrote.
	Files []string
	// App is where the workspace is served as a web app (--serve).
	App string
	// View is the HTML passed to display(), as a full document. The JSON
	// of the Response, which the model reads, only says that it was shown;
	// the MCP server sends the HTML in the result's _meta (ui.ViewMetaKey).
	View string
}

// joinNotes puts note b after note a.
func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// IsError reports whether the code failed.
func (r *Response) IsError() bool { return r.Error != "" }

// MarshalJSON writes the keys in a fixed order: result or error, then note,
// files, app and view.
func (r *Response) MarshalJSON() ([]byte, error) { return []byte(r.text()), nil }

// text is the JSON of r as a string, written once (no []byte to copy).
func (r *Response) text() string {
	var b strings.Builder
	b.Grow(len(r.Result) + len(r.Error) + 96)
	b.WriteByte('{')
	field := func(key string, val []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + key + `":`)
		b.Write(val)
	}
	if r.Error != "" {
		field("error", marshal(r.Error))
	} else if len(r.Result) == 0 {
		field("result", []byte("null"))
	} else {
		field("result", r.Result)
	}
	if r.Note != "" {
		field("note", marshal(r.Note))
	}
	if len(r.Files) > 0 {
		field("files", marshal(r.Files))
	}
	if r.App != "" && r.Error == "" {
		field("app", marshal(r.App))
	}
	if r.View != "" && r.Error == "" {
		// The HTML goes to the UI (toolResult puts it in _meta), not to
		// the model.
		field("view", marshal(fmt.Sprintf(viewShown, len(r.View))))
	}
	b.WriteByte('}')
	return b.String()
}

// marshal encodes v without escaping HTML, so that code and views stay
// readable.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(`null`)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}

// shaper turns execution results into Responses.
type shaper struct {
	maxTokens int // 0: no budget
	maxBytes  int // 0: no cap
	noUI      bool
}

func newShaper(s *Settings) shaper {
	return shaper{maxTokens: s.MaxOutputTokens, maxBytes: s.MaxResultMB << 20, noUI: s.NoUI}
}

func (sh shaper) response(r *host.Result) *Response {
	resp := &Response{Files: r.Files, Note: r.Note}
	if size := len(r.Output) + len(r.View); sh.maxBytes > 0 && size > sh.maxBytes {
		// Refused before any copy of it is made.
		resp.Error = fmt.Sprintf(noteTooLarge, float64(size)/(1<<20), sh.maxBytes>>20)
		return resp
	}
	if !sh.noUI {
		resp.View = r.View
	}
	if r.Error != nil {
		resp.Error = errorText(r.Error)
		return resp
	}
	out := bytes.TrimSpace(r.Output)
	if len(out) == 0 || string(out) == "null" {
		resp.Result = json.RawMessage("null")
		resp.Note = joinNotes(resp.Note, noteNoOutput)
		return resp
	}
	resp.Result = out
	if tokens := estimateTokens(out); sh.maxTokens > 0 && tokens > sh.maxTokens {
		resp.Result = sh.preview(out)
		resp.Note = joinNotes(resp.Note, fmt.Sprintf(noteTruncated, tokens, sh.maxTokens))
	}
	return resp
}

// previewChars is how much of a string sbx.preview() keeps, and one more,
// so that the preview still says the string was cut.
const previewChars = 201

// stringPrefix decodes the first n characters of the JSON string raw, or
// all of it when it is shorter; ok is false when raw is not a string.
func stringPrefix(raw []byte, n int) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	i, chars := 1, 0
	for i < len(raw)-1 && chars < n {
		switch c := raw[i]; {
		case c == '\\' && i+1 < len(raw) && raw[i+1] == 'u':
			i += 6
			if highSurrogate(raw[i-4:min(i, len(raw))]) && i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				i += 6 // a surrogate pair is one character
			}
		case c == '\\':
			i += 2
		default:
			_, size := utf8.DecodeRune(raw[i:])
			i += size
		}
		chars++
	}
	if i >= len(raw)-1 {
		i = len(raw) - 1 // the whole string
	}
	var s string
	piece := append(append(make([]byte, 0, i+1), raw[:i]...), '"')
	if err := json.Unmarshal(piece, &s); err != nil {
		return "", false // a surrogate pair cut in two: decode it all
	}
	return s, true
}

// highSurrogate reports whether the 4 hex digits of a \u escape are a
// high surrogate, D800 to DBFF.
func highSurrogate(hex []byte) bool {
	return len(hex) == 4 && (hex[0] == 'd' || hex[0] == 'D') && strings.ContainsRune("89abAB", rune(hex[1]))
}

// estimateTokens is the usual rough count: a token per four bytes.
func estimateTokens(b []byte) int { return len(b) / 4 }

// preview is sbx.preview() of out; when even that exceeds the budget (a
// dict with very many keys), its JSON cut to the budget, as a string. A
// string is previewed from its first characters, without decoding the rest.
func (sh shaper) preview(out json.RawMessage) json.RawMessage {
	var v any
	if s, ok := stringPrefix(out, previewChars); ok {
		v = router.Preview(s) // as long as the preview keeps: it adds its "..."
	} else if err := json.Unmarshal(out, &v); err != nil {
		v = string(out)
	}
	p := marshal(router.Preview(v))
	v = nil
	if estimateTokens(p) <= sh.maxTokens {
		return p
	}
	text := []rune(string(p))
	n := min(len(text), sh.maxTokens*4)
	for {
		cut := marshal(string(text[:n]) + "...(truncated)")
		over := len(cut) - sh.maxTokens*4 // escaping makes the JSON longer
		if over <= 0 || n == 0 {
			return cut
		}
		n = max(0, n-over-3)
	}
}

// errorText renders a Python exception for the agent: its traceback, which
// ends with "Type: message", followed by "Type: message" when the host
// changed the message (a timeout says so) or the traceback has none.
func errorText(e *host.Error) string {
	head := e.Type
	if e.Message != "" {
		head += ": " + e.Message
	}
	tb := strings.TrimRight(e.Traceback, "\n")
	if tb == "" {
		return head
	}
	last := tb[strings.LastIndexByte(tb, '\n')+1:]
	// A SyntaxError's message adds "(file, line n)" to the last line.
	if last == head || strings.HasPrefix(head, last+" (") {
		return tb
	}
	return tb + "\n" + head
}

// toolResult wraps a Response as MCP wants it: its JSON object, once, as
// one text block. (Structured content, the same object again, is for
// tools with an output schema, which execute_code does not declare; every
// client reads the text, and some read nothing else.)
func toolResult(resp *Response) *mcp.CallToolResult {
	res := &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: resp.text()}},
		IsError: resp.IsError(),
	}
	if resp.View != "" && !resp.IsError() {
		res.Meta = mcp.Meta{ui.ViewMetaKey: resp.View}
	}
	return res
}

// failure is a Response for a problem outside the code: a sandbox that
// cannot run, a bad argument.
func failure(format string, args ...any) *Response {
	return &Response{Error: fmt.Sprintf(format, args...)}
}
