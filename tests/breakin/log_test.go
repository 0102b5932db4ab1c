package breakin

import (
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host"
)

// TestGuestWritesTheLog writes to the host's log from the sandbox: lines
// that pose as the host's own at ERROR level, terminal escapes, forged
// line breaks, and a flood. Guest output is logged at one level, escaped
// and rate-limited.
func TestGuestWritesTheLog(t *testing.T) {
	t.Parallel()
	sb, logs := newSandbox(t, host.Config{})
	run(t, sb, `import js, sys, os
js.console.error("[ERROR] forged-1 the host failed\n2026-01-01T00:00:00Z [ERROR] forged-2 second line\x1b[31mred")
js.console.warn("[WARN] forged-3")
os.write(2, b"[ERROR] forged-4 raw stderr\n")
sys.__stderr__.write("[ERROR] forged-5\n")
for i in range(5000): js.console.log("flood", i)
1`)
	lines := strings.Split(logs.String(), "\n")
	flood := 0
	for _, l := range lines {
		if strings.Contains(l, "forged") {
			if strings.Contains(l, "[ERROR]") && !strings.Contains(l, "[DEBUG]") || strings.HasPrefix(strings.TrimSpace(l), "2026-01-01") {
				t.Errorf("a guest line reached the log as the host's: %q", l)
			}
			if strings.Contains(l, "\x1b") {
				t.Errorf("a terminal escape reached the log: %q", l)
			}
		}
		if strings.Contains(l, "flood") {
			flood++
		}
	}
	for _, l := range lines {
		if strings.Contains(l, "[ERROR]") && !strings.Contains(l, "[DEBUG]") && !strings.Contains(l, "[WARN]") && strings.HasPrefix(l, "2026-01-01") {
			t.Errorf("forged line: %q", l)
		}
	}
	if flood > 1000 {
		t.Errorf("%d lines of a flood reached the log: no rate limit", flood)
	}
	if !strings.Contains(logs.String(), "forged-1") {
		t.Error("control: the guest's stderr is not logged at all, the test proves nothing")
	}
}
