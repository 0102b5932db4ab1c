package serve_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

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
