package host_test

// Attacks on the host's package installer by code in the sandbox: what it
// asks the host to install is untrusted (allow_runtime_packages).

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/packages/pkgtest"
)

// The sandbox asks the host for packages of its index by name only: a host
// directory of wheels, a wheel's host path, or a URL that the sandbox names
// (packages.install) is refused, neither read nor fetched.
func TestGuestPackagesByNameOnly(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, pkgtest.Fixtures()...)
	secret := pkgtest.Package{Name: "hostsecret", Files: map[string]string{"hostsecret.py": "KEY = 'host-only'\n"}}
	dir := t.TempDir() // on the host, not mounted
	if err := os.WriteFile(filepath.Join(dir, secret.FileName()), secret.Wheel(t), 0o644); err != nil {
		t.Fatal(err)
	}
	other := pkgtest.NewIndex(t, secret) // a server the sandbox may not reach
	sb := newSandbox(t, host.Config{AllowRuntimePackages: true, PackageIndex: ix.PyodideURL(), PackageDir: t.TempDir()})
	for _, name := range []string{dir, filepath.Join(dir, secret.FileName()), "file://" + filepath.Join(dir, secret.FileName()),
		other.URL + "/files/" + secret.FileName()} {
		r := exec(t, sb, fmt.Sprintf(`from _parselbox.hostcall import host_call
host_call("packages.install", {"names": [%q]})`, name))
		if r.Error == nil {
			t.Errorf("the host installed %s for the sandbox: %s", name, r.Output)
		}
		if r := exec(t, sb, "import hostsecret\nhostsecret.KEY"); r.Error == nil {
			t.Fatalf("after asking for %s, the sandbox imports the host's wheel: %s", name, r.Output)
		}
	}
	if reqs := other.Requests(); len(reqs) > 0 {
		t.Errorf("the host fetched a URL the sandbox named: %q", reqs)
	}
	// By name, from the index: as before.
	if got := value(t, exec(t, sb, `from _parselbox.hostcall import host_call
host_call("packages.install", {"names": ["betapkg"]})
import betapkg
betapkg.NAME`)); got != "beta" {
		t.Errorf("by name: %v", got)
	}
}
