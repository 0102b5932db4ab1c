package browsertest

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/parselbox/parselbox/internal/testenv"
)

// RequireEnv, when set, turns a missing Chromium into a test failure.
const RequireEnv = "PARSELBOX_REQUIRE_BROWSER"

// Browser is a headless Chromium for one test.
type Browser struct {
	t   *testing.T
	Ctx context.Context // for chromedp.Run

	mu       sync.Mutex
	requests []string // URLs requested, in every frame and worker
}

// Path finds Chromium: $CHROMIUM, or chromium / chromium-browser /
// google-chrome on $PATH.
func Path() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// New starts Chromium for t (closed with it), or skips t when there is
// none (fails it under RequireEnv). The browser resolves no host name
// but localhost: a request that would leave the machine fails, and is
// recorded.
func New(t *testing.T) *Browser {
	t.Helper()
	path := Path()
	if path == "" {
		testenv.Missing(t, RequireEnv, "no Chromium: install Debian's chromium (`make browser` does: apt-get install -y chromium) or set $CHROMIUM")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // tests run as root
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"),
		chromedp.WindowSize(900, 700),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	b := &Browser{t: t, Ctx: ctx}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// Record the requests of the page and its (same-process) frames.
	if err := chromedp.Listen(ctx, b.record); err != nil {
		t.Fatalf("starting Chromium (%s): %v", path, err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("Chromium (%s): enabling the network domain: %v", path, err)
	}
	return b
}

func (b *Browser) record(ev any) {
	if e, ok := ev.(*network.EventRequestWillBeSent); ok {
		b.mu.Lock()
		b.requests = append(b.requests, e.Request.URL)
		b.mu.Unlock()
	}
}

// Requests are the URLs the browser requested so far.
func (b *Browser) Requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.requests)
}

// Offsite are the requests to anything but this machine (data:, blob:,
// about: and loopback addresses are on it).
func (b *Browser) Offsite() []string {
	return slices.DeleteFunc(b.Requests(), onMachine)
}

// onMachine reports whether a request for URL r stays on this machine.
func onMachine(r string) bool {
	u, err := url.Parse(r)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return u.Scheme == "data" || u.Scheme == "blob" || u.Scheme == "about" ||
		h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.")
}

// Screenshot writes a PNG of the page to <name>.png under the test's
// artifact directory (go test -artifacts keeps it) and logs its path.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return ""
	}
	p := filepath.Join(b.t.ArtifactDir(), name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return ""
	}
	b.t.Logf("screenshot: %s", p)
	return p
}
