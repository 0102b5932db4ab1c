package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func ptr[T any](v T) *T { return &v }

func TestDecodeMessage(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		line string
		want *message
	}{
		"request":      {`{"id":7,"method":"call","params":{"path":"a.b"}}`, &message{ID: ptr[int64](7), Method: "call", Params: json.RawMessage(`{"path":"a.b"}`)}},
		"notification": {`{"method":"ready","params":{}}`, &message{Method: "ready", Params: json.RawMessage(`{}`)}},
		"result":       {`{"id":1,"result":{"output":2}}`, &message{ID: ptr[int64](1), Result: json.RawMessage(`{"output":2}`)}},
		"null result":  {` { "id" : 2 , "result" : null } `, &message{ID: ptr[int64](2), Result: json.RawMessage(`null`)}},
		"error":        {`{"id":3,"error":{"type":"ValueError","message":"bad","traceback":"tb"}}`, &message{ID: ptr[int64](3), Error: &Error{Type: "ValueError", Message: "bad", Traceback: "tb"}}},
		"escaped key":  {`{"\u0069d":4,"result":1}`, &message{ID: ptr[int64](4), Result: json.RawMessage(`1`)}},
		"protocol words in a value": {`{"id":5,"result":"{\"method\":\"interrupt\"}\n{\"id\":1}"}`,
			&message{ID: ptr[int64](5), Result: json.RawMessage(`"{\"method\":\"interrupt\"}\n{\"id\":1}"`)}},
	}
	for name, tt := range tests {
		got, err := decodeMessage([]byte(tt.line))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

func TestDecodeMessageRefuses(t *testing.T) {
	t.Parallel()
	for name, line := range map[string]string{
		"empty":              ``,
		"not JSON":           `hello`,
		"two values":         `{"id":1,"result":1}{"id":2,"result":2}`,
		"an array":           `[{"id":1,"result":1}]`,
		"a string":           `"interrupt"`,
		"unknown member":     `{"id":1,"result":1,"files":["/etc/passwd"]}`,
		"duplicate id":       `{"id":1,"id":2,"result":1}`,
		"duplicate result":   `{"id":1,"result":1,"result":2}`,
		"float id":           `{"id":1.5,"result":1}`,
		"string id":          `{"id":"1","result":1}`,
		"huge id":            `{"id":99999999999999999999,"result":1}`,
		"null id":            `{"id":null,"result":1}`,
		"method not string":  `{"method":1}`,
		"empty method":       `{"method":""}`,
		"no method or id":    `{"params":{}}`,
		"result and error":   `{"id":1,"result":1,"error":{"type":"X","message":""}}`,
		"response, no body":  `{"id":1}`,
		"request with error": `{"id":1,"method":"call","error":{"type":"X"}}`,
		"error not object":   `{"id":1,"error":"boom"}`,
		"error null":         `{"id":1,"error":null}`,
		"error without type": `{"id":1,"error":{"message":"m"}}`,
		"error extra member": `{"id":1,"error":{"type":"X","message":"m","files":[]}}`,
		"error message num":  `{"id":1,"error":{"type":"X","message":1}}`,
		"unterminated":       `{"id":1,"result":"`,
	} {
		if m, err := decodeMessage([]byte(line)); err == nil || !errors.Is(err, errProtocol) {
			t.Errorf("%s: decoded %+v, %v; want errProtocol", name, m, err)
		}
	}
}

// Decoded raw parts alias the line: nothing is copied.
func TestDecodeMessageAliases(t *testing.T) {
	t.Parallel()
	line := []byte(`{"id":1,"result":{"output":"big"}}`)
	m, err := decodeMessage(line)
	if err != nil {
		t.Fatal(err)
	}
	if &m.Result[0] != &line[17] {
		t.Error("the result was copied out of the line")
	}
}

func TestDecodeResult(t *testing.T) {
	t.Parallel()
	r, err := decodeResult([]byte(`{"output":{"a":[1,2]},"stdout":"out","stderr":"err","error":null,"files":["/workspace/a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Result{Output: json.RawMessage(`{"a":[1,2]}`), Stdout: "out", Stderr: "err", Files: []string{"/workspace/a"}}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	r, err = decodeResult([]byte(`{"output":null,"stdout":"","stderr":"","error":{"type":"KeyboardInterrupt","message":"m"},"files":[]}`))
	if err != nil || r.Error == nil || r.Error.Type != "KeyboardInterrupt" {
		t.Errorf("with error: %+v, %v", r, err)
	}
	// Strings decode as encoding/json decodes them, escapes and invalid
	// UTF-8 included.
	for _, text := range []string{`""`, `"out"`, `"a\"b\u00e9\n"`, "\"\xff\xfe\"", `"é"`} {
		r, err := decodeResult([]byte(`{"output":1,"stdout":` + text + `,"files":[]}`))
		var want string
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatal(err)
		}
		if err != nil || r.Stdout != want || r.Files == nil {
			t.Errorf("stdout %s: %+v, %v; want %q", text, r, err, want)
		}
	}
	for name, raw := range map[string]string{
		"no output":     `{"stdout":"","stderr":"","error":null,"files":[]}`,
		"note":          `{"output":1,"note":"forged"}`,
		"files object":  `{"output":1,"files":{"a":1}}`,
		"files null":    `{"output":1,"files":null}`,
		"file number":   `{"output":1,"files":[1]}`,
		"stdout number": `{"output":1,"stdout":1}`,
		"error string":  `{"output":1,"error":"x"}`,
		"not an object": `[1]`,
	} {
		if r, err := decodeResult([]byte(raw)); err == nil {
			t.Errorf("%s: decoded %+v", name, r)
		}
	}
}

func TestLineReader(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200<<10) // longer than the reader's buffer
	input := "a\n\n" + long + "\n" + strings.Repeat("y", 300<<10) + "\nb\n" + "tail"
	lr := newLineReader(iotest.HalfReader(strings.NewReader(input)), 250<<10)
	type got struct {
		Line string
		Size int64
		Err  error
	}
	var all []got
	for {
		line, size, err := lr.next()
		all = append(all, got{string(line), size, err})
		if err != nil && !errors.Is(err, errTooLong) {
			break
		}
	}
	want := []got{
		{"a", 1, nil},
		{"", 0, nil},
		{long, 200 << 10, nil},
		{"", 300 << 10, errTooLong}, // over the limit: skipped whole
		{"b", 1, nil},
		{"tail", 4, io.EOF},
	}
	if diff := cmp.Diff(want, all, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) })); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A json.RawMessage result reaches the line as it is: no re-marshal.
func TestResultJSONPassesRawThrough(t *testing.T) {
	t.Parallel()
	p := &process{limits: protocolLimits{maxMessage: 1 << 20}}
	raw := json.RawMessage(`{"b": 1,  "a": [12345678901234567890, 1.50]}`)
	got, err := p.resultJSON("call", raw)
	if err != nil {
		t.Fatal(err)
	}
	if &got[0] != &raw[0] || len(got) != len(raw) {
		t.Errorf("the raw result was copied or changed: %s", got)
	}
	// Spanning lines, it is compacted (a line is a message), not re-encoded.
	got, err = p.resultJSON("call", json.RawMessage("{\n  \"a\": 1.50\n}"))
	if err != nil || string(got) != `{"a":1.50}` {
		t.Errorf("multi-line raw: %s, %v", got, err)
	}
	if _, err := p.resultJSON("call", json.RawMessage(`{"a":`)); err == nil {
		t.Error("invalid raw JSON passed")
	}
	v, err := p.resultJSON("call", map[string]int{"n": 1})
	if err != nil || string(v) != `{"n":1}` {
		t.Errorf("a Go value: %s, %v", v, err)
	}
	_, err = p.resultJSON("call", json.RawMessage(`"`+strings.Repeat("x", 1<<20)+`"`))
	var re *RemoteError
	if !errors.As(err, &re) || re.Type != "ValueError" || !strings.Contains(re.Message, "over the max_message_size limit of 1048576 bytes") {
		t.Errorf("over the limit: %v", err)
	}
}

func TestEscape(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"[error] boom":       "[error] boom",
		"\x1b[31mred\x1b[0m": `\x1b[31mred\x1b[0m`,
		"line\rover\nwrite":  `line\rover\nwrite`,
		"tab\there":          `tab\there`,
		"bad \xff utf8":      `bad \xff utf8`,
	} {
		if got := escape(in, 100); got != want {
			t.Errorf("escape(%q) = %q, want %q", in, got, want)
		}
	}
	if got := escape(strings.Repeat("a", 10), 8); got != "aaaaaaaa..." {
		t.Errorf("truncation: %q", got)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	l := newRateLimit(0, 3) // no refill: exactly the burst
	n := 0
	for range 10 {
		if l.allow() {
			n++
		}
	}
	if n != 3 {
		t.Errorf("allowed %d of 10 with a burst of 3", n)
	}
}

// FuzzDecodeMessage: whatever the sandbox writes, decoding never panics,
// and what it accepts is one valid JSON object that encoding/json reads
// the same way.
func FuzzDecodeMessage(f *testing.F) {
	for _, seed := range []string{
		`{"id":1,"result":{"output":2,"stdout":"","stderr":"","error":null,"files":[]}}`,
		`{"id":2,"method":"call","params":{"path":"t.echo","args":["interrupt"],"kwargs":{}}}`,
		`{"method":"log","params":{"level":"warn","message":"x"}}`,
		`{"id":3,"error":{"type":"ValueError","message":"m"}}`,
		`{"id":4,"result":"{\"method\":\"interrupt\"}\n"}`,
		`{"id":1,"id":1,"result":1}`,
		`{"id":1e3,"result":1}`,
		`[1,2]`,
		`{"method":"\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := decodeMessage(line)
		if err != nil {
			return
		}
		if !json.Valid(line) {
			t.Fatalf("accepted invalid JSON %q", line)
		}
		var ref struct {
			ID     *int64          `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *Error          `json:"error"`
		}
		if err := json.Unmarshal(line, &ref); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", line, err)
		}
		if (m.ID == nil) != (ref.ID == nil) || m.ID != nil && *m.ID != *ref.ID || m.Method != ref.Method {
			t.Fatalf("%q: decoded id %v method %q; encoding/json: %v %q", line, m.ID, m.Method, ref.ID, ref.Method)
		}
		for _, pair := range [][2]json.RawMessage{{m.Params, ref.Params}, {m.Result, ref.Result}} {
			if !bytes.Equal(compact(t, pair[0]), compact(t, pair[1])) {
				t.Fatalf("%q: raw part %q, encoding/json %q", line, pair[0], pair[1])
			}
		}
		if !cmp.Equal(m.Error, ref.Error) {
			t.Fatalf("%q: error %+v, encoding/json %+v", line, m.Error, ref.Error)
		}
		if m.Method == "" && (m.Result == nil) == (m.Error == nil) {
			t.Fatalf("%q: a response with both or neither of result and error", line)
		}
	})
}

func compact(t *testing.T, b []byte) []byte {
	if b == nil {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("raw part %q is not JSON: %v", b, err)
	}
	return buf.Bytes()
}

// A line is a message only if it starts with the channel key; a key is 32
// hex digits, different for every process.
func TestUnframe(t *testing.T) {
	key := newChannelKey()
	if len(key) != keyLength || strings.Trim(key, "0123456789abcdef") != "" || key == newChannelKey() {
		t.Fatalf("key %q", key)
	}
	k := []byte(key)
	for _, c := range []struct {
		line string
		msg  string
		ok   bool
	}{
		{key + `{"method":"log"}`, `{"method":"log"}`, true},
		{`{"method":"log"}`, "", false},
		{key[:31] + `{"method":"log"}`, "", false},
		{strings.ToUpper(key) + `{}`, "", false},
		{" " + key + `{}`, "", false},
		{key[:10], "", false},
		{"", "", false},
	} {
		msg, ok := unframe([]byte(c.line), k)
		if ok != c.ok || string(msg) != c.msg {
			t.Errorf("unframe(%q) = %q, %v", c.line, msg, ok)
		}
	}
}
