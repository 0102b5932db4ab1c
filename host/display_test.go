package host_test

import (
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/ui"
)

func TestDisplay(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t, host.Config{})

	// HTML; the last call wins; the view is a full document.
	r := exec(t, sb, `display("<p>first</p>")
display("<p class='text-xl'>second & last</p>")
1`)
	if value(t, r) != 1.0 {
		t.Fatalf("output %s", r.Output)
	}
	for _, want := range []string{"<!DOCTYPE html>\n<html", "<p class='text-xl'>second & last</p>", ui.AssetsMarker, "window.pbx="} {
		if !strings.Contains(r.View, want) {
			t.Errorf("view lacks %q:\n%s", want, r.View)
		}
	}
	if strings.Contains(r.View, "first") {
		t.Errorf("an earlier display() survived: %s", r.View)
	}
	if !strings.HasPrefix(r.View, "<!DOCTYPE html>") || !strings.HasSuffix(r.View, "</body></html>") {
		t.Errorf("not a full document: %s", r.View)
	}

	// The next execution starts without a view.
	if r := exec(t, sb, "2"); r.View != "" {
		t.Errorf("view carried over: %q", r.View)
	}

	// A file path, relative to /workspace, and a pathlib.Path.
	r = exec(t, sb, `import pathlib
pathlib.Path("chart.html").write_text("<html><body><svg id='c'></svg></body></html>")
display(pathlib.Path("chart.html"))`)
	if r.Error != nil || !strings.Contains(r.View, "<svg id='c'>") || !strings.HasPrefix(r.View, "<!DOCTYPE html>\n<html><head>") {
		t.Errorf("display(path): error %v, view %q", r.Error, r.View)
	}
	r = exec(t, sb, `display("/workspace/chart.html")`)
	if !strings.Contains(r.View, "<svg id='c'>") {
		t.Errorf("display(absolute path): %q", r.View)
	}

	// Errors, as the reference says; the view of a failed execution is
	// still what was displayed before the error.
	for code, want := range map[string]string{
		`display(42)`:                  "TypeError: display() expects HTML or a file path, got int",
		`display(b"<p>")`:              "TypeError: display() expects HTML or a file path, got bytes",
		`display("nothing-here.html")`: "FileNotFoundError: display(): 'nothing-here.html' is neither HTML nor an existing file",
		`display("<b>x</b>"); 1/0`:     "ZeroDivisionError: division by zero",
	} {
		r := exec(t, sb, code)
		if r.Error == nil || r.Error.Error() != want {
			t.Errorf("%s: got %v, want %s", code, r.Error, want)
		}
	}
}

func TestRenderView(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ in, prefix, contains string }{
		"fragment":   {"<b>x</b>", "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">", "<body><b>x</b></body></html>"},
		"no doctype": {"<html><head><title>t</title></head><body>y</body></html>", "<!DOCTYPE html>\n<html><head><title>t</title>" + ui.AssetsMarker, "</head><body>y"},
		"doctype":    {"  <!doctype html><html><HEAD></HEAD><body></body></html>", "  <!doctype html><html><HEAD>" + ui.AssetsMarker, "</HEAD>"},
		"no head":    {"<html><body>z</body></html>", "<!DOCTYPE html>\n<html><head>" + ui.AssetsMarker, "</head><body>z"},
		"neither":    {"<html lang=de>w</html>", "<!DOCTYPE html>\n<html lang=de><head>" + ui.AssetsMarker, "</head>w</html>"},
	} {
		got := ui.Render(tc.in, "", "")
		if !strings.HasPrefix(got, tc.prefix) || !strings.Contains(got, tc.contains) {
			t.Errorf("%s: Render(%q) =\n%s", name, tc.in, got)
		}
	}
	// The base and the key are JSON in the script: no way out of it.
	got := ui.Render("<p>", "http://127.0.0.1:1/</script><script>alert(1)//", "k")
	if strings.Count(got, "</script>") != 1 {
		t.Errorf("base broke out of the script: %s", got)
	}
}
