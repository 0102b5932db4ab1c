package serve_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/serve"
	"github.com/parselbox/parselbox/internal/testenv"
)

// calc is a namespace whose tools the handlers call.
type calc struct{}

func (calc) Add(a, b int) int { return a + b }
func (calc) ParamNames() map[string][]string {
	return map[string][]string{"Add": {"a", "b"}}
}

func newServed(t *testing.T, c *host.ServeConfig) *host.Sandbox {
	t.Helper()
	if c == nil {
		c = &host.ServeConfig{Addr: "127.0.0.1:0", MaxUploadMB: 1}
	}
	sb, err := host.New(t.Context(), host.Config{
		RuntimeDir: testenv.Runtime(t).Dir, CacheDir: testenv.CacheDir(t), Logger: testenv.Logger(t),
		Context: map[string]any{"calc": calc{}}, Serve: c,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

type reply struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, method, url string, body io.Reader, header map[string]string) reply {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return reply{res.StatusCode, res.Header, string(b)}
}

func exec(t *testing.T, sb *host.Sandbox, code string) {
	t.Helper()
	r, err := sb.Execute(t.Context(), code)
	if err != nil || r.Error != nil {
		t.Fatalf("%s: %v %v", code, err, r.Error)
	}
}

func TestServe(t *testing.T) {
	t.Parallel()
	sb := newServed(t, nil)
	base := sb.ServeURL()
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("ServeURL %q", base)
	}
	exec(t, sb, `
import os
open("index.html", "w").write("<h1 class='text-2xl'>home</h1>")
os.makedirs("sub", exist_ok=True)
open("sub/data.json", "w").write('{"a": 1}')
open("app.ts", "w").write("let x = 1")
open(".secret", "w").write("s")
open("/files/in.txt", "w").write("input")
state = {"n": 0}

@api.get("/const")
def const(params):
    return {"ok": True, "q": params.get("q")}

@api.post("add")
def add(body):
    state["n"] += 1
    return {"sum": calc.add(a=body["a"], b=body["b"]), "calls": state["n"]}

@api.post("/api/async")
async def a(body):
    t = calc.add.task(a=1, b=2)
    return {"body": body, "task": await t}

@api.get("/boom")
def boom(params):
    raise ValueError("no such thing")
`)
	for name, tc := range map[string]struct {
		method, path, body string
		header             map[string]string
		status             int
		contains           string
	}{
		"index":           {"GET", "/", "", nil, 200, "<h1 class='text-2xl'>home</h1>"},
		"index has pbx":   {"GET", "/index.html", "", nil, 200, `EventSource("/_live")`},
		"json":            {"GET", "/sub/data.json", "", nil, 200, `{"a": 1}`},
		"ts as text":      {"GET", "/app.ts", "", nil, 200, "let x = 1"},
		"files":           {"GET", "/files/in.txt", "", nil, 200, "input"},
		"missing":         {"GET", "/nope.html", "", nil, 404, `"error":"File not found"`},
		"traversal":       {"GET", "/%2e%2e/%2e%2e/etc/passwd", "", nil, 400, "Invalid path"},
		"traversal files": {"GET", "/files/..%2f..%2fetc%2fpasswd", "", nil, 400, "Invalid path"},
		"encoded slash":   {"GET", "/sub%2f..%2f..%2fx", "", nil, 400, "Invalid path"},
		"hidden":          {"GET", "/.secret", "", nil, 400, "Invalid path"},
		"task logs":       {"GET", "/.parselbox/tasks/x", "", nil, 400, "Invalid path"},
		"get route":       {"GET", "/api/const?q=hi", "", nil, 200, `{"ok":true,"q":"hi"}`},
		"post tool":       {"POST", "/api/add", `{"a": 2, "b": 3}`, nil, 200, `{"sum":5,"calls":1}`},
		"async task":      {"POST", "/api/async", `[1]`, nil, 200, `{"body":[1],"task":3}`},
		"raises":          {"GET", "/api/boom", "", nil, 500, `"error":"no such thing"`},
		"unknown":         {"GET", "/api/nothing", "", nil, 404, `No handler for GET /api/nothing`},
		"wrong method":    {"POST", "/api/const", "", nil, 404, `No handler for POST /api/const`},
		"bad json":        {"POST", "/api/add", `{nope`, nil, 400, `Invalid JSON body`},
		"routes":          {"GET", "/_routes", "", nil, 200, `[{"method":"GET","path":"/api/const"},{"method":"POST","path":"/api/add"}`},
		"rebinding":       {"GET", "/", "", map[string]string{"Host": "evil.example:80"}, 403, "unknown host"},
	} {
		var body io.Reader
		if tc.body != "" {
			body = strings.NewReader(tc.body)
		}
		r := do(t, tc.method, base+tc.path, body, tc.header)
		if r.status != tc.status || !strings.Contains(r.body, tc.contains) {
			t.Errorf("%s: %s %s: %d %s (want %d with %q)", name, tc.method, tc.path, r.status, r.body, tc.status, tc.contains)
		}
		if a := r.header.Get("Access-Control-Allow-Origin"); a != "" {
			t.Errorf("%s: Access-Control-Allow-Origin %q without a foreign origin", name, a)
		}
	}
	if r := do(t, "GET", base+"/app.ts", nil, nil); !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Errorf("app.ts served as %s", r.header.Get("Content-Type"))
	}
	if r := do(t, "GET", base+"/sub/data.json", nil, nil); r.header.Get("Content-Type") != "application/json" {
		t.Errorf("data.json served as %s", r.header.Get("Content-Type"))
	}
	// Session state: the handler's counter is the code's.
	r, _ := sb.Execute(t.Context(), "state['n']")
	if string(r.Output) != "1" {
		t.Errorf("state after one POST: %s", r.Output)
	}

	// A directory without an index.html lists what it holds (not its
	// hidden files), as a served page; the root greets as well, until the
	// code writes an index.html there; one with an index.html shows it.
	exec(t, sb, `import os
os.remove("index.html")
os.makedirs("site", exist_ok=True)
open("site/index.html", "w").write("<p>the site</p>")
open("sub/a b.txt", "w").write("x")`)
	for _, tc := range []struct {
		path      string
		want, not []string
	}{
		{"/", []string{"hello from parselbox!", `<a href="./app.ts">app.ts</a>`, `<a href="./sub/">sub/</a>`, `EventSource("/_live")`}, []string{".secret", ".parselbox"}},
		{"/sub/", []string{`<a href="./a%20b.txt">a b.txt</a>`, `<a href="./data.json">data.json</a>`, `<a href="../">../</a>`}, []string{"hello from parselbox!"}},
		{"/sub", []string{`<a href="./data.json">data.json</a>`}, nil}, // redirected to /sub/
		{"/site/", []string{"<p>the site</p>"}, []string{"<ul>"}},
	} {
		r := do(t, "GET", base+tc.path, nil, nil)
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Errorf("GET %s: %d %s %s", tc.path, r.status, r.header.Get("Content-Type"), r.body)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(r.body, w) {
				t.Errorf("GET %s: no %q in %s", tc.path, w, r.body)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(r.body, n) {
				t.Errorf("GET %s: %q in %s", tc.path, n, r.body)
			}
		}
	}
	exec(t, sb, `open("index.html", "w").write("<p>written</p>")`)
	if r := do(t, "GET", base+"/", nil, nil); r.status != 200 || !strings.Contains(r.body, "<p>written</p>") || strings.Contains(r.body, "hello from parselbox!") {
		t.Errorf("GET / once index.html is written: %d %s", r.status, r.body)
	}
	if r := do(t, "GET", base+"/files/", nil, nil); r.status != 404 {
		t.Errorf("GET /files/ (input files are not listed): %d %s", r.status, r.body)
	}
}

// The guest names the files a directory listing shows (any byte but "/"
// and NUL): a name that is
// markup or a script URL is text and a link to that file, never a tag, an
// attribute or a link elsewhere.
func TestServeListingHostileNames(t *testing.T) {
	t.Parallel()
	sb := newServed(t, nil)
	base := sb.ServeURL()
	names := []string{
		"<script>alert(1)",
		`"><img src=x onerror=alert(1)>`,
		"' onmouseover='alert(1)",
		"javascript:alert(1)",
		"a&amp;b",
		"%2e%2e",
		"?q=1#frag",
		"<h1>owned",
	}
	// A name the server refuses (a backslash) is not listed: no link that
	// cannot be followed.
	unlisted := `\\evil.example`
	code := "import os, json\nos.makedirs('d/<b>dir', exist_ok=True)\n" +
		"for i, n in enumerate(json.loads(" + strconvQuote(append(names, unlisted)) + ")):\n" +
		"    open('d/' + n, 'w').write('file %d' % i)\n" +
		"    open('d/<b>dir/' + n, 'w').write('inner %d' % i)\n"
	exec(t, sb, code)
	for _, dir := range []struct{ path, content string }{
		{"/d/", "file"},
		{"/d/%3Cb%3Edir/", "inner"},
	} {
		r := do(t, "GET", base+dir.path, nil, nil)
		if r.status != 200 {
			t.Fatalf("GET %s: %d %s", dir.path, r.status, r.body)
		}
		for _, bad := range []string{"<script>alert", "<img", "onmouseover='", `href="javascript:`, `href="\\`, "<h1>owned", "<b>dir"} {
			if strings.Contains(r.body, bad) {
				t.Errorf("GET %s: the listing holds %q unescaped:\n%s", dir.path, bad, r.body)
			}
		}
		links := hrefs(r.body)
		if _, ok := links[unlisted]; ok {
			t.Errorf("GET %s: %q is listed, but the server refuses it", dir.path, unlisted)
		}
		for i, n := range names {
			href, ok := links[n]
			if !ok {
				t.Errorf("GET %s: no link shown as %q in %v", dir.path, n, links)
				continue
			}
			if !strings.HasPrefix(href, "./") {
				t.Errorf("GET %s: link to %q is %q, not relative to the directory", dir.path, n, href)
				continue
			}
			want := dir.content + " " + strconv.Itoa(i)
			if r := do(t, "GET", base+dir.path+href[2:], nil, nil); r.status != 200 || r.body != want {
				t.Errorf("GET %s%s (the link to %q): %d %q, want %q", dir.path, href[2:], n, r.status, r.body, want)
			}
		}
	}
}

// hrefs maps the text of each link in a listing, unescaped, to its href,
// unescaped once as a browser reads the attribute.
func hrefs(page string) map[string]string {
	m := map[string]string{}
	for _, part := range strings.Split(page, `<li><a href="`)[1:] {
		href, rest, ok := strings.Cut(part, `">`)
		if !ok {
			continue
		}
		text, _, _ := strings.Cut(rest, "</a>")
		m[html.UnescapeString(text)] = html.UnescapeString(href)
	}
	return m
}

func strconvQuote(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return strconv.Quote(string(b))
}

// A page elsewhere cannot drive the API; one with the token (a view) can.
func TestServeCORS(t *testing.T) {
	t.Parallel()
	sb := newServed(t, nil)
	base := sb.ServeURL()
	exec(t, sb, "@api.post('/x')\ndef x(body):\n    return 'done'")
	evil := map[string]string{"Origin": "https://evil.example", "Content-Type": "text/plain"}
	if r := do(t, "POST", base+"/api/x", strings.NewReader("{}"), evil); r.status != 403 || r.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("a foreign origin without the token: %d %v %s", r.status, r.header, r.body)
	}
	if r := do(t, "GET", base+"/", nil, evil); r.status != 403 {
		t.Errorf("a foreign origin reads pages: %d", r.status)
	}
	pre := do(t, "OPTIONS", base+"/api/x", nil, map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
	if a := pre.header.Get("Access-Control-Allow-Origin"); a == "*" {
		t.Errorf("wildcard CORS")
	}
	// The view's key (in window.pbx of a rendered view).
	r, _ := sb.Execute(t.Context(), "display('<b>v</b>')")
	key := between(r.View, `key:"`, `"`)
	if key == "" || !strings.Contains(r.View, `base="`+base+`"`) {
		t.Fatalf("the view has no key or base: %s", r.View)
	}
	ok := map[string]string{"Origin": "https://host.example", serve.TokenHeader: key, "Content-Type": "application/json"}
	if r := do(t, "POST", base+"/api/x", strings.NewReader("{}"), ok); r.status != 200 || r.body != `"done"` ||
		r.header.Get("Access-Control-Allow-Origin") != "https://host.example" {
		t.Errorf("a view with the key: %d %s %v", r.status, r.body, r.header)
	}
	ok[serve.TokenHeader] = key + "x"
	if r := do(t, "POST", base+"/api/x", strings.NewReader("{}"), ok); r.status != 403 {
		t.Errorf("a wrong key: %d", r.status)
	}
}

func between(s, a, b string) string {
	i := strings.Index(s, a)
	if i < 0 {
		return ""
	}
	s = s[i+len(a):]
	return s[:max(0, strings.Index(s, b))]
}

func multipartBody(t *testing.T, files map[string]string) (io.Reader, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, content := range files {
		w, _ := mw.CreateFormFile("file", name)
		w.Write([]byte(content))
	}
	mw.Close()
	return &buf, mw.FormDataContentType()
}

func TestServeUpload(t *testing.T) {
	t.Parallel()
	sb := newServed(t, nil)
	base := sb.ServeURL()
	body, ctype := multipartBody(t, map[string]string{"../../evil.txt": "e", "...hidden": "h", "ok.csv": "a,b"})
	r := do(t, "POST", base+"/_upload", body, map[string]string{"Content-Type": ctype})
	var got struct {
		Uploaded []struct {
			Name, Path string
			Size       int
		}
	}
	json.Unmarshal([]byte(r.body), &got)
	names := map[string]bool{}
	for _, u := range got.Uploaded {
		names[u.Path] = true
	}
	if r.status != 200 || !names["/files/evil.txt"] || !names["/files/hidden"] || !names["/files/ok.csv"] || len(names) != 3 {
		t.Errorf("upload: %d %s", r.status, r.body)
	}
	res, _ := sb.Execute(t.Context(), "import os; sorted(os.listdir('/files')), open('/files/ok.csv').read()")
	if string(res.Output) != `[["evil.txt","hidden","ok.csv"],"a,b"]` {
		t.Errorf("/files after the upload: %s", res.Output)
	}
	// Nothing landed outside /files.
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(base)), "evil.txt")); err == nil {
		t.Error("evil.txt outside")
	}
	big, ctype := multipartBody(t, map[string]string{"big.bin": strings.Repeat("x", 2<<20)})
	if r := do(t, "POST", base+"/_upload", big, map[string]string{"Content-Type": ctype}); r.status != 413 {
		t.Errorf("an upload over 1 MiB: %d %s", r.status, r.body)
	}
	res, _ = sb.Execute(t.Context(), "os.path.exists('/files/big.bin')")
	if string(res.Output) != "false" {
		t.Errorf("the oversized upload was kept: %s", res.Output)
	}
	empty, ctype := multipartBody(t, nil)
	if r := do(t, "POST", base+"/_upload", empty, map[string]string{"Content-Type": ctype}); r.status != 400 || !strings.Contains(r.body, "No files in request") {
		t.Errorf("no files: %d %s", r.status, r.body)
	}
}

// Beyond loopback a token is required: the configuration is refused
// without one; with one, a request without it is refused.
func TestServeToken(t *testing.T) {
	t.Parallel()
	err := (&host.Config{Serve: &host.ServeConfig{Addr: "0.0.0.0:0"}}).Validate()
	if err == nil || !strings.Contains(err.Error(), "serve.addr") || !strings.Contains(err.Error(), "token") {
		t.Errorf("no token beyond loopback: %v", err)
	}
	const token = "0123456789abcdef-token"
	sb := newServed(t, &host.ServeConfig{Addr: "0.0.0.0:0", Token: token})
	base := sb.ServeURL()
	exec(t, sb, "open('index.html','w').write('<p>hi</p>')")
	if r := do(t, "GET", base+"/", nil, nil); r.status != 401 {
		t.Errorf("no token: %d", r.status)
	}
	if r := do(t, "GET", base+"/", nil, map[string]string{"Authorization": "Bearer " + token}); r.status != 200 {
		t.Errorf("bearer token: %d", r.status)
	}
	r := do(t, "GET", base+"/?token="+token, nil, nil)
	if r.status != 200 || !strings.Contains(r.header.Get("Set-Cookie"), "HttpOnly") {
		t.Errorf("?token=: %d %v", r.status, r.header)
	}
}

// IsLoopback takes a host as net.SplitHostPort and url.Hostname give it:
// names in any case, no final dot (a name DNS answers), no brackets.
func TestIsLoopback(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"localhost":        true,
		"LOCALHOST":        true,
		"127.0.0.1":        true,
		"127.0.0.2":        true,
		"::1":              true,
		"::ffff:127.0.0.1": true,
		"localhost.":       false,
		"127.0.0.1.":       false,
		"[::1]":            false,
		"localhost.evil":   false,
		"0.0.0.0":          false,
		"::":               false,
		"":                 false,
	} {
		if got := serve.IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

// A browser's navigation with ?token= gets the cookie and a page of the
// server's own that goes to the URL without the token (the guest's page
// never loads where its script would read it); every other request with
// ?token= is answered as before, and no Referer carries the URL on.
func TestServeTokenNavigation(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef-nav-token"
	ws, files := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws, "index.html"), []byte("<p>guest page</p>"), 0o644)
	os.Mkdir(filepath.Join(ws, "sub"), 0o755)
	os.WriteFile(filepath.Join(ws, "sub", "p.html"), []byte("<p>guest sub</p>"), 0o644)
	srv, err := serve.Listen(serve.Options{Addr: "0.0.0.0:0", Token: token, Workspace: ws, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := srv.URL()
	nav := func(dest, site string) map[string]string {
		return map[string]string{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": dest, "Sec-Fetch-Site": site}
	}
	cookieSet := func(r reply) bool {
		c := r.header.Get("Set-Cookie")
		return strings.Contains(c, "="+token) && strings.Contains(c, "HttpOnly") && strings.Contains(c, "SameSite=Strict")
	}
	for name, tc := range map[string]struct {
		path   string
		header map[string]string
		next   string // the link of the page that drops the token; "": the guest's page
		tab    string // the link of the page that opens a tab
		status int
	}{
		"curl":                      {path: "/?token=" + token, status: 200},
		"fetch":                     {path: "/?token=" + token, header: map[string]string{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}, status: 200},
		"a link from another site":  {path: "/?token=" + token, header: nav("document", "cross-site"), next: "/", status: 200},
		"typed":                     {path: "/?token=" + token, header: nav("document", "none"), next: "/", status: 200},
		"other params kept":         {path: "/sub/p.html?a=1&token=" + token + "&b=x%20y", header: nav("document", "cross-site"), next: "/sub/p.html?a=1&amp;b=x%20y", status: 200},
		"an escaped name":           {path: "/?tok%65n=" + token + "&q=1", header: nav("document", "none"), next: "/?q=1", status: 200},
		"a path of another host":    {path: "//evil.example/?token=" + token, header: nav("document", "none"), next: "/evil.example/", status: 200},
		"a frame of the same site":  {path: "/?token=" + token, header: nav("iframe", "same-site"), next: "/", status: 200},
		"a frame of another site":   {path: "/?token=" + token, header: nav("iframe", "cross-site"), tab: "/?token=" + token, status: 200},
		"a wrong token":             {path: "/?token=wrong-" + token, header: nav("document", "cross-site"), status: 401},
		"a form posted (no change)": {path: "/?token=" + token, header: map[string]string{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-Site": "same-origin", "Content-Type": "application/x-www-form-urlencoded"}, status: 405},
	} {
		method := "GET"
		if strings.HasPrefix(name, "a form") {
			method = "POST"
		}
		r := do(t, method, base+tc.path, nil, tc.header)
		if r.status != tc.status {
			t.Errorf("%s: %d %s", name, r.status, r.body)
			continue
		}
		if r.status == 401 {
			if r.header.Get("Set-Cookie") != "" || strings.Contains(r.body, "guest") {
				t.Errorf("%s: %v %s", name, r.header, r.body)
			}
			continue
		}
		if !cookieSet(r) || r.header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: no cookie or Referrer-Policy: %v", name, r.header)
		}
		guest := strings.Contains(r.body, "guest")
		switch {
		case tc.next != "":
			if guest || !strings.Contains(r.body, `<a id="pbx-next" href="`+tc.next+`">`) || strings.Contains(r.body, token) ||
				r.header.Get("Cache-Control") != "no-store" || !strings.Contains(r.header.Get("Content-Security-Policy"), "default-src 'none'; script-src 'sha256-") {
				t.Errorf("%s: not the page that drops the token: %v %s", name, r.header, r.body)
			}
		case tc.tab != "":
			if guest || !strings.Contains(r.body, `href="`+tc.tab+`" target="_blank" rel="noopener"`) {
				t.Errorf("%s: not the page that opens a tab: %s", name, r.body)
			}
		case strings.Contains(r.body, "pbx-next") || strings.Contains(r.body, "_blank") || method == "GET" && !guest:
			t.Errorf("%s: not answered as before: %s", name, r.body)
		}
	}
	// The page's script is the one its CSP allows.
	r := do(t, "GET", base+"/?token="+token, nil, nav("document", "none"))
	script := between(r.body, "<script>", "</script>")
	sum := sha256.Sum256([]byte(script))
	if want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; script == "" || !strings.Contains(r.header.Get("Content-Security-Policy"), want) {
		t.Errorf("the CSP %q does not allow the script %q", r.header.Get("Content-Security-Policy"), script)
	}
	// The cookie opens the clean URL.
	c := strings.SplitN(r.header.Get("Set-Cookie"), ";", 2)[0]
	if r := do(t, "GET", base+"/", nil, map[string]string{"Cookie": c, "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}); r.status != 200 ||
		!strings.Contains(r.body, "guest page") || r.header.Get("Set-Cookie") != "" {
		t.Errorf("the clean URL with the cookie: %d %v %s", r.status, r.header, r.body)
	}
}

// With a token, no service worker is served (it would see the URL of the
// next ?token= navigation); without one, as before.
func TestServeServiceWorker(t *testing.T) {
	t.Parallel()
	ws, files := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws, "sw.js"), []byte("self.onfetch = () => {}"), 0o644)
	const token = "0123456789abcdef-sw-token"
	guarded, err := serve.Listen(serve.Options{Addr: "0.0.0.0:0", Token: token, Workspace: ws, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	defer guarded.Close()
	plain, err := serve.Listen(serve.Options{Addr: "127.0.0.1:0", Workspace: ws, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	worker := map[string]string{"Service-Worker": "script", "Sec-Fetch-Dest": "serviceworker", "Cookie": "x=y"}
	auth := "Bearer " + token
	for name, tc := range map[string]struct {
		url    string
		header map[string]string
		status int
	}{
		"a worker, with the token":    {guarded.URL() + "/sw.js", map[string]string{"Service-Worker": "script", "Authorization": auth}, 403},
		"a worker (Sec-Fetch-Dest)":   {guarded.URL() + "/sw.js", map[string]string{"Sec-Fetch-Dest": "serviceworker", "Authorization": auth}, 403},
		"the script, not as a worker": {guarded.URL() + "/sw.js", map[string]string{"Sec-Fetch-Dest": "script", "Authorization": auth}, 200},
		"a worker, no token set":      {plain.URL() + "/sw.js", worker, 200},
	} {
		if r := do(t, "GET", tc.url, nil, tc.header); r.status != tc.status {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
}
