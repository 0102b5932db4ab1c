package ui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/ui"
	"github.com/parselbox/parselbox/internal/browsertest"
	"github.com/parselbox/parselbox/internal/testenv"
)

// viewHTML has a daisyUI button and Tailwind utilities.
const viewHTML = `<div id="card" class="p-4 m-2 text-xl font-bold bg-blue-500 text-white rounded-lg">Hello</div>
<button id="go" class="btn btn-primary">Go</button>`

// styles reads computed styles in the page (or in the document doc, an
// expression) once Tailwind has generated its CSS.
const styles = `(() => { const d = DOC; const cs = (id) => getComputedStyle(d.getElementById(id));
  const c = cs("card"), b = cs("go");
  return {pad: c.paddingTop, size: c.fontSize, weight: c.fontWeight, bg: c.backgroundColor, radius: c.borderTopLeftRadius,
    btnDisplay: b.display, btnBg: b.backgroundColor, btnPad: b.paddingLeft, btnRadius: b.borderTopLeftRadius, btnCursor: b.cursor}; })()`

type computed struct {
	Pad, Size, Weight, Bg, Radius                   string
	BtnDisplay, BtnBg, BtnPad, BtnRadius, BtnCursor string
}

// check asserts the styles Tailwind and daisyUI give the view's elements.
func (c computed) check(t *testing.T) {
	t.Helper()
	if c.Pad != "16px" || c.Size != "20px" || c.Weight != "700" || c.Radius != "8px" {
		t.Errorf("Tailwind utilities not applied: %+v", c)
	}
	if c.Bg == "" || c.Bg == "rgba(0, 0, 0, 0)" {
		t.Errorf("bg-blue-500 not applied: %q", c.Bg)
	}
	if c.BtnDisplay != "inline-flex" || c.BtnBg == "rgba(0, 0, 0, 0)" || c.BtnPad == "0px" || c.BtnCursor != "pointer" {
		t.Errorf("daisyUI btn btn-primary not applied: %+v", c)
	}
}

// A view made by display() in a real sandbox, with the assets inlined
// (Standalone), renders with the styles applied and without the network.
func TestViewInBrowser(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t)
	rt := testenv.Runtime(t)
	sb, err := host.New(t.Context(), host.Config{RuntimeDir: rt.Dir, CacheDir: testenv.CacheDir(t), Logger: testenv.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	r, err := sb.Execute(t.Context(), "display('''"+viewHTML+"''')")
	if err != nil || r.Error != nil || r.View == "" {
		t.Fatalf("display: %v %v %q", err, r.Error, r.View)
	}
	a, err := ui.Load(rt.Dir)
	if err != nil {
		t.Fatal(err)
	}
	page := a.Standalone(r.View)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(page))
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(b.Ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`getComputedStyle(document.getElementById("card")).paddingTop === "16px"`)); err != nil {
		t.Fatalf("Tailwind never styled the view: %v", err)
	}
	c, err := chromedp.Run(ctx, chromedp.Evaluate[computed](replaceDoc(styles, "document")))
	if err != nil {
		t.Fatal(err)
	}
	c.check(t)
	b.Screenshot("view")
	if off := b.Offsite(); len(off) > 0 {
		t.Errorf("requests left the machine: %v", off)
	}
	for _, u := range b.Requests() {
		if !strings.HasPrefix(u, "data:") && u != srv.URL+"/" && u != srv.URL+"/favicon.ico" {
			t.Errorf("a request for an asset: %s (the page holds them all)", u)
		}
	}
}

func replaceDoc(js, doc string) string {
	out := []byte{}
	for i := 0; i < len(js); i++ {
		if i+3 <= len(js) && js[i:i+3] == "DOC" {
			out = append(out, doc...)
			i += 2
			continue
		}
		out = append(out, js[i])
	}
	return string(out)
}
