package host_test

// The isolation tests of Python, repeated from JavaScript: js() runs under
// the same Deno permissions and the same kernel confinement.

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/confine"
)

// Links out of a mount: Deno's own file functions follow them, with the
// mount's permission; Landlock checks the resolved path and refuses.
func TestJSSymlinkOutOfMountWithLandlock(t *testing.T) {
	t.Parallel()
	needLandlock(t)
	secretDir := t.TempDir()
	os.WriteFile(filepath.Join(secretDir, "secret.txt"), []byte("top secret"), 0o644)
	mnt := t.TempDir()
	os.WriteFile(filepath.Join(mnt, "real.txt"), []byte("inside"), 0o644)
	os.Symlink(secretDir, filepath.Join(mnt, "escape"))
	os.Symlink(filepath.Join(secretDir, "secret.txt"), filepath.Join(mnt, "secret-link.txt"))
	sb := newSandbox(t, host.Config{Mounts: map[string]host.Mount{"data": {Source: mnt}}})
	if !sb.Confinement().Active(confine.LayerLandlock) {
		t.Fatalf("Landlock is not active: %s", sb.Confinement().Summary())
	}
	r := exec(t, sb, `js("""
const out = [];
const host = resolvePath('/mnt/data/real.txt').replace(/real.txt$/, '');
out.push(await Deno.readTextFile(host + 'real.txt'));
for (const p of ['escape/secret.txt', 'secret-link.txt']) {
  try { out.push(await Deno.readTextFile(host + p)); } catch (e) { out.push(e.name + ': ' + e.message); }
  try { resolvePath('/mnt/data/' + p); out.push('resolved'); } catch (e) { out.push('refused'); }
}
const fs = await import('node:fs');
try { out.push(fs.readFileSync(host + 'secret-link.txt', 'utf8')); } catch (e) { out.push(e.name); }
return out;
""")`)
	got := value(t, r).([]any)
	if strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(toString(got)), "\n", " ")), " "), "top secret") {
		t.Fatalf("a link led out of the mount: %v", got)
	}
	if got[0] != "inside" || got[2] != "refused" || got[4] != "refused" {
		t.Errorf("reads: %v", got)
	}
	for _, i := range []int{1, 3} {
		if s, _ := got[i].(string); !strings.Contains(s, "Permission denied") {
			t.Errorf("read %d not refused by the kernel: %v", i, got[i])
		}
	}
}

// The network rules and the environment hold for JS as for Python.
func TestJSNetworkAndEnvironment(t *testing.T) { // not parallel: t.Setenv
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("pong")) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()
	code := `js("try { return await (await fetch('http://` + addr + `/ping')).text() } catch (e) { return e.name }")`

	t.Setenv("PARSELBOX_JS_SECRET", "hunter2")
	off := newSandbox(t, host.Config{Env: map[string]string{"GIVEN": "yes"}})
	if got := value(t, exec(t, off, code)); got == "pong" {
		t.Error("network reachable from JS by default")
	}
	r := exec(t, off, `js("""
const out = [];
for (const f of [() => Deno.env.get('PARSELBOX_JS_SECRET'), () => Deno.env.get('GIVEN'), () => Deno.env.toObject()]) {
  try { out.push(JSON.stringify(f())); } catch (e) { out.push(e.name); }
}
const p = (await import('node:process')).default;
try { out.push(JSON.stringify(p.env)); } catch (e) { out.push(e.name); }
return out;
""")`)
	got := value(t, r).([]any)
	for _, v := range got {
		if s, _ := v.(string); strings.Contains(s, "hunter2") || strings.Contains(s, "yes") {
			t.Errorf("environment visible from JS: %v", got)
		}
	}
	allowed := newSandbox(t, host.Config{AllowNet: []string{addr}})
	if got := value(t, exec(t, allowed, code)); got != "pong" {
		t.Errorf("allowlisted address from JS: %v", got)
	}
	other := newSandbox(t, host.Config{AllowNet: []string{"127.0.0.1:1"}})
	if got := value(t, exec(t, other, code)); got == "pong" {
		t.Error("address outside the allowlist reachable from JS")
	}
}

func toString(v []any) string {
	var b strings.Builder
	for _, x := range v {
		s, _ := x.(string)
		b.WriteString(s + "\n")
	}
	return b.String()
}
