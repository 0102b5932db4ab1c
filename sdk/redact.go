package sdk

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Redacted is what a Redactor puts in place of a secret.
const Redacted = "[REDACTED]"

// minSecret is the length, in characters, of the shortest value that
// NewRedactor takes as a secret: shorter values would blank out ordinary
// text, and are no secret anyway.
const minSecret = 4

// A Redactor removes credentials from what the sandbox sees: results,
// error messages, log lines and help text. The host runs everything a
// bridge sends to the sandbox through one, built from the secrets it knows
// (the configuration's and those the bridge reports: see
// ConfigureRequest.AddSecrets); a bridge may run its calls through its own
// too, as a second layer (see Middleware).
//
// A secret is found as it is and in its common encodings: inside a JSON
// string (with any of the escapes encoders use), URL-encoded
// (query and path escaping, upper- or lower-case hex), base64 and
// base64url (whole, and at any of the three alignments it can have inside
// a longer encoded payload: the part of the payload that encodes only the
// secret's bytes), and hex (both cases). In a JSON document, bytes
// ({"__b64__": "<base64>"}) are decoded, redacted and encoded again.
//
// Build one with NewRedactor. A Redactor is immutable and safe for
// concurrent use. A nil *Redactor is valid and redacts nothing.
type Redactor struct {
	forms     []string // every form of every secret, longest first
	formBytes [][]byte // forms, as bytes
	encoded   [][]byte // the forms a secret takes inside a JSON string, longest first
}

// NewRedactor returns a Redactor of the given secrets. Each is trimmed of
// surrounding white space; values shorter than 4 characters after that,
// and repeats, are ignored. A secret that contains another is replaced
// whole.
func NewRedactor(secrets ...string) *Redactor {
	var forms, encoded []string
	for _, s := range secrets {
		s = strings.TrimSpace(s)
		if utf8.RuneCountInString(s) < minSecret {
			continue
		}
		inJSON, other := jsonForms(s), encodedForms(s)
		forms = slices.Concat(forms, []string{s}, inJSON, other)
		encoded = append(encoded, inJSON...)
		for _, e := range other {
			encoded = append(encoded, e)
			if strings.Contains(e, "/") {
				encoded = append(encoded, strings.ReplaceAll(e, "/", `\/`))
			}
		}
	}
	forms, encoded = distinct(forms), distinct(encoded)
	longestFirst := func(a, b string) int { return cmp.Compare(len(b), len(a)) }
	slices.SortStableFunc(forms, longestFirst)
	slices.SortStableFunc(encoded, longestFirst)
	return &Redactor{forms: forms, formBytes: byteSlices(forms), encoded: byteSlices(encoded)}
}

// byteSlices returns each of list as a []byte.
func byteSlices(list []string) [][]byte {
	out := make([][]byte, len(list))
	for i, s := range list {
		out[i] = []byte(s)
	}
	return out
}

// minCore is the shortest part of a base64 payload taken as a secret's
// encoding when the secret is not aligned with the payload's groups:
// shorter runs would match unrelated data.
const minCore = 8

// encodedForms returns the forms of s in the encodings a server or a tool
// may put it in (see Redactor), other than as it is.
func encodedForms(s string) []string {
	var out []string
	for _, e := range []string{url.QueryEscape(s), url.PathEscape(s)} {
		if e != s {
			out = append(out, e, lowerPercent(e))
		}
	}
	b := []byte(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, enc.EncodeToString(b))
		raw := enc.WithPadding(base64.NoPadding)
		for d := range 3 {
			n := (len(b) - d) / 3 * 3
			if n <= 0 {
				continue
			}
			if core := raw.EncodeToString(b[d : d+n]); len(core) >= minCore {
				out = append(out, core)
			}
		}
	}
	h := hex.EncodeToString(b)
	return append(out, h, strings.ToUpper(h))
}

// lowerPercent writes the hex digits of s's percent escapes in lower case.
func lowerPercent(s string) string { return percentEscape.ReplaceAllStringFunc(s, strings.ToLower) }

var percentEscape = regexp.MustCompile(`%[0-9A-F]{2}`)

// jsonForms returns the ways an encoder writes s inside a JSON string,
// without the quotes, as far as they differ only in optional escapes:
// Go's (which escapes "<", ">" and "&"), without those escapes, and each
// with "/" escaped as "\/". Other optional escapes ("\u0041" for "A") are
// found by RedactJSON's decoding.
func jsonForms(s string) []string {
	plain, _ := encodeJSON(s)
	html, _ := json.Marshal(s)
	var out []string
	for _, b := range [][]byte{html, plain} {
		e := string(b[1 : len(b)-1])
		out = append(out, e)
		if strings.Contains(e, "/") {
			out = append(out, strings.ReplaceAll(e, "/", `\/`))
		}
	}
	return out
}

// Redact returns s with every secret replaced by Redacted.
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	for _, v := range r.forms {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return s
}

// RedactJSON returns the JSON document doc with every secret in its strings
// (keys included) replaced by Redacted, and a number that holds a secret
// turned into the redacted string. Bytes ({"__b64__": "<base64>"}) are
// decoded and redacted as bytes, then encoded again. A document without secrets is returned
// as it is. Another encoder may escape a string differently from Go ("\/",
// "\u0041"), so a document that has such escapes is decoded, and rewritten
// (compactly, keeping the order of keys and the text of numbers) when a
// secret hides there. A doc that is not JSON is redacted as text.
func (r *Redactor) RedactJSON(doc json.RawMessage) json.RawMessage {
	if r == nil || len(r.forms) == 0 || len(doc) == 0 {
		return doc
	}
	if bytes.Contains(doc, bytesMarker) {
		doc = r.redactBytesValues(doc)
	}
	if out, hit := replaceAll(doc, r.encoded); hit {
		if !json.Valid(out) {
			// A secret outside a string (in a number), or no JSON at all.
			return r.decoded(doc)
		}
		doc = out
	}
	if !bytes.Contains(doc, []byte(`\/`)) && !bytes.Contains(doc, []byte(`\u`)) {
		return doc
	}
	return r.decoded(doc)
}

// decoded redacts doc token by token (see rewrite), or as text if it is not
// JSON.
func (r *Redactor) decoded(doc json.RawMessage) json.RawMessage {
	if out, ok := r.rewrite(doc); ok {
		return out
	}
	return r.RedactBytes(doc)
}

var (
	bytesMarker = []byte(`"` + BytesKey + `"`)
	// bytesValue matches an object {"__b64__": "<base64>"} in a JSON
	// document. It cannot match inside a JSON string: a quote there is
	// escaped, and only white space may stand between "{" and the key.
	bytesValue = regexp.MustCompile(`\{\s*"` + BytesKey + `"\s*:\s*"([A-Za-z0-9+/=]*)"\s*\}`)
)

// redactBytesValues redacts the bytes inside doc's {"__b64__": ...}
// objects.
func (r *Redactor) redactBytesValues(doc json.RawMessage) json.RawMessage {
	return bytesValue.ReplaceAllFunc(doc, func(m []byte) []byte {
		b64 := bytesValue.FindSubmatch(m)[1]
		data, err := base64.StdEncoding.DecodeString(string(b64))
		if err != nil {
			return m // redacted as text afterwards
		}
		red := r.RedactBytes(data)
		if bytes.Equal(red, data) {
			return m
		}
		return []byte(`{"` + BytesKey + `":"` + base64.StdEncoding.EncodeToString(red) + `"}`)
	})
}

// RedactBytes returns b with every secret, in any of its forms, replaced by
// Redacted; b itself when it holds none.
func (r *Redactor) RedactBytes(b []byte) []byte {
	if r == nil {
		return b
	}
	out, _ := replaceAll(b, r.formBytes)
	return out
}

// replaceAll replaces each of olds in doc by Redacted; hit reports whether
// any was there. doc is not modified.
func replaceAll(doc []byte, olds [][]byte) (out []byte, hit bool) {
	out = doc
	for _, v := range olds {
		if bytes.Contains(out, v) {
			out, hit = bytes.ReplaceAll(out, v, []byte(Redacted)), true
		}
	}
	return out, hit
}

// rewrite re-encodes the JSON document doc with its strings (keys too)
// and numbers redacted, keeping the order of keys and the text of numbers;
// out is doc itself when no token held a secret, ok reports whether doc is
// JSON.
func (r *Redactor) rewrite(doc json.RawMessage) (out json.RawMessage, ok bool) {
	found := false
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var buf bytes.Buffer
	type frame struct {
		object bool
		n      int // tokens written in this container
	}
	var stack []frame
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	str := func(s string) {
		red := r.Redact(s)
		found = found || red != s
		_ = enc.Encode(red)
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
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
		if len(stack) == 0 && buf.Len() > 0 {
			return doc, false // a second value: not one document
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
			str(t)
		case json.Number:
			if s := t.String(); r.Redact(s) != s {
				str(s)
			} else {
				buf.WriteString(s)
			}
		case bool:
			buf.WriteString(strconv.FormatBool(t))
		case nil:
			buf.WriteString("null")
		}
	}
	if len(stack) > 0 {
		return doc, false // cut short
	}
	if !found {
		return doc, true
	}
	return buf.Bytes(), true
}

// RedactError returns err itself when its message holds no secret, and
// otherwise a *ToolError with the redacted message and the code that
// ErrorResult gives err (so that the sandbox raises the same exception).
// It returns nil for nil.
func (r *Redactor) RedactError(err error) error {
	if r == nil || err == nil {
		return err
	}
	msg := err.Error()
	red := r.Redact(msg)
	if red == msg {
		return err
	}
	return &ToolError{Code: ErrorResult(err).Error.Code, Message: red}
}

// RedactEvents returns an EventSink that redacts the log lines and
// progress messages it passes on to sink. It returns sink itself when r is
// nil, and nil when sink is nil.
func (r *Redactor) RedactEvents(sink EventSink) EventSink {
	if r == nil || sink == nil {
		return sink
	}
	if rs, ok := sink.(redactingSink); ok && rs.r == r {
		return sink
	}
	return redactingSink{r: r, next: sink}
}

// redactingSink redacts the log lines and progress messages of a call.
type redactingSink struct {
	r    *Redactor
	next EventSink
}

func (s redactingSink) Log(line string) { s.next.Log(s.r.Redact(line)) }

func (s redactingSink) Progress(progress, total float64, message string) {
	s.next.Progress(progress, total, s.r.Redact(message))
}

// CallTool runs call with req and redacts everything the call shows the
// sandbox: the log lines and progress messages it reports (call gets a
// copy of req whose Events redact), the result's Content (RedactJSON) and
// Error.Message, and the error returned (RedactError). A panic in call is
// raised again with its value as a redacted string. Middleware wraps a
// bridge's every call with it. With a nil *Redactor, CallTool is
// call(ctx, req).
func (r *Redactor) CallTool(ctx context.Context, req *CallToolRequest,
	call func(context.Context, *CallToolRequest) (*CallToolResult, error),
) (*CallToolResult, error) {
	if r == nil {
		return call(ctx, req)
	}
	if req != nil && req.Events != nil {
		cp := *req
		cp.Events = r.RedactEvents(req.Events)
		req = &cp
	}
	defer func() {
		if v := recover(); v != nil {
			panic(r.Redact(fmt.Sprint(v)))
		}
	}()
	res, err := call(ctx, req)
	if res != nil {
		cp := *res
		cp.Content = r.RedactJSON(res.Content)
		if res.Error != nil {
			cp.Error = &ToolError{Code: res.Error.Code, Message: r.Redact(res.Error.Message)}
		}
		res = &cp
	}
	return res, r.RedactError(err)
}

// Middleware returns the middleware that runs every call of a bridge
// through the redactor that current returns then (the configuration's, which
// a bridge keeps as it changes):
//
//	b := sdk.NewBridge(info, &sdk.Options{
//		Middleware: []sdk.Middleware{sdk.RedactMiddleware(func() *sdk.Redactor { return myRedactor.Load() })},
//	})
func RedactMiddleware(current func() *Redactor) Middleware {
	return func(next ToolHandler) ToolHandler {
		return func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
			return current().CallTool(ctx, req, next)
		}
	}
}

// secretWords are the parts of a name (of a header, query parameter or
// environment variable) that say its value is a credential.
var secretWords = []string{"auth", "token", "key", "secret", "session", "cookie", "passw", "credential", "signature"}

// SecretName reports whether a header, query parameter or environment
// variable of this name carries a credential: whether the name contains,
// in any case, one of auth, token, key, secret, session, cookie, passw
// (password, passwd, passwort), credential or signature ("Authorization",
// "X-Api-Key", "access_token", "GITHUB_TOKEN"). Bridges use it so that they
// agree on which values they redact.
func SecretName(name string) bool {
	n := strings.ToLower(name)
	return slices.ContainsFunc(secretWords, func(w string) bool { return strings.Contains(n, w) })
}

// HeaderSecrets returns the secrets of a header (or of any name and value
// that a bridge sends as one): none when SecretName(name) is false;
// otherwise the value, its part after a scheme ("Bearer ", "Basic "), and
// for the scheme Basic also the decoded "user:password" and its password;
// of a cookie header ("Cookie: a=1; sid=..."), the value and each cookie's
// value, which a server may show on its own. Empty values and repeats are
// left out.
func HeaderSecrets(name, value string) []string {
	if !SecretName(name) {
		return nil
	}
	value = strings.TrimSpace(value)
	out := []string{value}
	if strings.Contains(strings.ToLower(name), "cookie") {
		for part := range strings.SplitSeq(value, ";") {
			if _, v, ok := strings.Cut(part, "="); ok {
				out = append(out, strings.Trim(strings.TrimSpace(v), `"`))
			}
		}
	} else if scheme, cred, ok := strings.Cut(value, " "); ok {
		cred = strings.TrimSpace(cred)
		out = append(out, cred)
		if strings.EqualFold(scheme, "Basic") {
			if b, err := base64.StdEncoding.DecodeString(cred); err == nil {
				_, password, _ := strings.Cut(string(b), ":")
				out = append(out, string(b), password)
			}
		}
	}
	return distinct(out)
}

// SameOrigin reports whether a and b have the same scheme, host and port
// (the scheme's default port where none is written): a bridge sends its
// credentials only to its configured origin, where a redirect or a URL the
// guest gives may lead elsewhere.
func SameOrigin(a, b *url.URL) bool { return origin(a) == origin(b) }

func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := cmp.Or(u.Port(), map[string]string{"http": "80", "https": "443"}[scheme])
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// URLSecrets returns the secrets of a URL: the password of its userinfo
// (decoded, and as the URL writes it), the credential that Go's HTTP
// client sends for the userinfo (base64 of "user:password", the
// Authorization header's "Basic ..."), and the values (decoded, and as
// written) of query parameters whose names are SecretName. The user name
// is a secret only where the password is empty ("https://KEY@host",
// "https://KEY:@host": the form API keys and tokens take). A URL that does
// not parse has none. Empty values and repeats are left out.
func URLSecrets(rawURL string) []string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	var out []string
	if u.User != nil {
		user := u.User.Username()
		password, _ := u.User.Password()
		out = append(out, password, basicAuth(user, password))
		if _, written, ok := strings.Cut(u.User.String(), ":"); ok {
			out = append(out, written)
		}
		// The userinfo as written, which url.Parse has decoded.
		var writtenUser string
		if _, rest, ok := strings.Cut(rawURL, "://"); ok {
			if i := strings.IndexAny(rest, "/?#"); i >= 0 {
				rest = rest[:i]
			}
			if i := strings.LastIndex(rest, "@"); i >= 0 {
				var written string
				writtenUser, written, _ = strings.Cut(rest[:i], ":")
				out = append(out, written)
			}
		}
		if password == "" {
			out = append(out, user, writtenUser)
		}
	}
	for part := range strings.SplitSeq(u.RawQuery, "&") {
		k, v, _ := strings.Cut(part, "=")
		if name, err := url.QueryUnescape(k); err != nil || !SecretName(name) {
			continue
		}
		out = append(out, v)
		if dv, err := url.QueryUnescape(v); err == nil {
			out = append(out, dv)
		}
	}
	return distinct(out)
}

// distinct returns the non-empty values of list, each once, in order; nil
// if there are none.
func distinct(list []string) []string {
	var out []string
	for _, s := range list {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// basicAuth is the credential of HTTP basic authentication, as net/http
// writes it after "Basic ".
func basicAuth(user, password string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}
