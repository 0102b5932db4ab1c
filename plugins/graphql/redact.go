package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/parselbox/parselbox/sdk"
)

// redacted replaces a credential in what the sandbox sees.
const redacted = "[REDACTED]"

// minSecret is the shortest value treated as a credential: shorter values
// would blank out ordinary text, and are no secret anyway.
const minSecret = 4

// redactor removes credentials from results, error messages and log lines.
// The bridge never puts them there itself; this catches a server that
// echoes them (an error page quoting the Authorization header, a field
// that returns request headers).
type redactor struct {
	secrets []string // longest first, so that a secret containing another goes whole
	encoded [][]byte // each secret as it appears inside a JSON string
}

// newRedactor collects the credentials of c: the token, the values of
// headers whose names say they carry one (and their part after a scheme
// such as "Basic "), and the password and sensitive query values of the
// endpoint URL.
func newRedactor(c *config) *redactor {
	var s []string
	add := func(v string) {
		if v = strings.TrimSpace(v); len(v) >= minSecret && !slices.Contains(s, v) {
			s = append(s, v)
		}
	}
	add(c.Token)
	for name, value := range c.Headers {
		if sensitive(name) {
			add(value)
			if _, cred, ok := strings.Cut(strings.TrimSpace(value), " "); ok {
				add(cred)
			}
		}
	}
	if u, err := url.Parse(c.Endpoint); err == nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
		for name, values := range u.Query() {
			if sensitive(name) {
				for _, v := range values {
					add(v)
				}
			}
		}
	}
	slices.SortFunc(s, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	r := &redactor{secrets: s}
	for _, v := range s {
		b, _ := json.Marshal(v)
		r.encoded = append(r.encoded, b[1:len(b)-1])
	}
	return r
}

// sensitive reports whether a header or query parameter name suggests that
// its value is a credential.
func sensitive(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "token", "key", "secret", "session", "cookie", "password", "passwd", "credential", "signature"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// text redacts a message.
func (r *redactor) text(s string) string {
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, redacted)
	}
	return s
}

// json redacts a JSON document. Go encodes a string rune by rune, so a
// secret inside a string that Go encoded is its own encoding; a server may
// escape differently ("\/", "\u0041"), so a document with such escapes is
// also decoded token by token, and rewritten if a secret hides there.
func (r *redactor) json(doc json.RawMessage) json.RawMessage {
	if len(r.secrets) == 0 {
		return doc
	}
	for _, v := range r.encoded {
		if bytes.Contains(doc, v) {
			doc = bytes.ReplaceAll(doc, v, []byte(redacted))
		}
	}
	// Other encoders differ from Go only in optional escapes: "\/" and
	// "\uXXXX" for any character.
	if !bytes.Contains(doc, []byte(`\/`)) && !bytes.Contains(doc, []byte(`\u`)) {
		return doc
	}
	if out, found := r.rewrite(doc); found {
		return out
	}
	return doc
}

// rewrite re-encodes doc with its strings (keys too) redacted, keeping the
// order of keys and the text of numbers; found reports whether a string
// held a secret.
func (r *redactor) rewrite(doc json.RawMessage) (out json.RawMessage, found bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var buf bytes.Buffer
	type frame struct {
		object bool
		n      int // tokens written in this container
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return doc, false
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			buf.WriteByte(byte(d))
			stack = stack[:len(stack)-1]
			continue
		}
		if len(stack) > 0 {
			f := &stack[len(stack)-1]
			switch {
			case f.n == 0:
			case f.object && f.n%2 == 1:
				buf.WriteByte(':')
			default:
				buf.WriteByte(',')
			}
			f.n++
		}
		switch t := tok.(type) {
		case json.Delim:
			buf.WriteByte(byte(t))
			stack = append(stack, frame{object: t == '{'})
		case string:
			s := r.text(t)
			found = found || s != t
			b, _ := json.Marshal(s)
			buf.Write(b)
		case json.Number:
			buf.WriteString(t.String())
		case bool:
			buf.WriteString(strconv.FormatBool(t))
		case nil:
			buf.WriteString("null")
		}
	}
	return buf.Bytes(), found
}

// redactingSink redacts the log lines and progress messages of a call.
type redactingSink struct {
	r    *redactor
	next sdk.EventSink
}

func (s redactingSink) Log(line string) { s.next.Log(s.r.text(line)) }

func (s redactingSink) Progress(progress, total float64, message string) {
	s.next.Progress(progress, total, s.r.text(message))
}
