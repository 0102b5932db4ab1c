package host_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/parselbox/parselbox/host"
)

// What the guest chooses (a tool path, an exception's message) does not
// make the audit trail's lines as long as it likes: three calls to a
// made-up 8 MB path and an 8 MB exception write kilobytes, not megabytes.
func TestAuditLinesBounded(t *testing.T) {
	t.Parallel()
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	sb := newSandbox(t, host.Config{AuditLog: logPath})
	r := exec(t, sb, `from _parselbox.hostcall import host_call
for i in range(3):
    try:
        host_call("call", {"path": "x" * (8 << 20) + ".t", "args": [], "kwargs": {}})
    except Exception:
        pass
raise ValueError("y" * (8 << 20))`)
	if r.Error == nil || r.Error.Type != "ValueError" {
		t.Fatalf("want ValueError, got %+v", r.Error)
	}
	fi, err := os.Stat(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 256<<10 {
		t.Errorf("the audit trail grew by %d bytes", fi.Size())
	}
}
