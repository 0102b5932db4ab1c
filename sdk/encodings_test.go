package sdk_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/sdk"
)

// The redactor finds a secret in the encodings a server or a tool may put
// it in, also inside longer encoded payloads at any alignment.
func TestRedactEncodings(t *testing.T) {
	t.Parallel()
	const s = "ghp_Secret/Value+42=="
	r := sdk.NewRedactor(s)
	b := []byte(s)
	for name, in := range map[string]string{
		"query escaped":       "q=" + url.QueryEscape(s) + "&x=1",
		"path escaped":        "/p/" + url.PathEscape(s),
		"lower-case percents": regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(url.QueryEscape(s), strings.ToLower),
		"hex":                 "0x" + hex.EncodeToString(b),
		"HEX":                 strings.ToUpper(hex.EncodeToString(b)),
		"base64":              base64.StdEncoding.EncodeToString(b),
		"base64url":           base64.RawURLEncoding.EncodeToString(b),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := r.Redact(in)
			if got == in || !strings.Contains(got, sdk.Redacted) {
				t.Errorf("Redact(%q) = %q", in, got)
			}
		})
	}
	// Inside a longer payload, the part that encodes only the secret's bytes
	// is removed at each of the three alignments, in both alphabets.
	for k := range 3 {
		payload := []byte(strings.Repeat("#", k) + "Authorization: Bearer " + s + "\r\n")
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			in := enc.EncodeToString(payload)
			got := r.Redact(in)
			if !strings.Contains(got, sdk.Redacted) {
				t.Errorf("alignment %d: %q not redacted", k, in)
			}
			// What is left of the payload decodes to no more than two bytes
			// of the secret at either end.
			for _, part := range strings.Split(got, sdk.Redacted) {
				dec, _ := enc.WithPadding(base64.NoPadding).DecodeString(strings.TrimRight(part, "=")[:len(strings.TrimRight(part, "="))/4*4])
				if strings.Contains(string(dec), s[2:len(s)-2]) {
					t.Errorf("alignment %d: %q still decodes to the secret", k, part)
				}
			}
		}
	}
}

// Bytes in a JSON document are redacted as bytes: the secret in a binary
// payload is replaced, and the result is still bytes (valid base64).
func TestRedactJSONBytes(t *testing.T) {
	t.Parallel()
	const s = "tok-8c1f9e2d7b"
	r := sdk.NewRedactor(s)
	body := append([]byte{0xff, 0xfe, 0x00}, []byte("X-Echo: Bearer "+s+"\n"+hex.EncodeToString([]byte(s)))...)
	doc, _ := json.Marshal(map[string]any{"data": map[string]string{sdk.BytesKey: base64.StdEncoding.EncodeToString(body)}, "ok": true})
	got := r.RedactJSON(doc)
	var v struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("RedactJSON = %s: %v", got, err)
	}
	dec, err := base64.StdEncoding.DecodeString(v.Data[sdk.BytesKey])
	if err != nil {
		t.Fatalf("the bytes are no longer base64: %v", err)
	}
	want := append([]byte{0xff, 0xfe, 0x00}, []byte("X-Echo: Bearer "+sdk.Redacted+"\n"+sdk.Redacted)...)
	if string(dec) != string(want) {
		t.Errorf("bytes = %q, want %q", dec, want)
	}
	// A marker inside a string is text, not bytes.
	str, _ := json.Marshal(map[string]string{"s": `{"__b64__":"` + base64.StdEncoding.EncodeToString([]byte(s)) + `"}`})
	if got := string(r.RedactJSON(str)); strings.Contains(got, base64.StdEncoding.EncodeToString([]byte(s))) || !json.Valid([]byte(got)) {
		t.Errorf("RedactJSON(%s) = %s", str, got)
	}
}
