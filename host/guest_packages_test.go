package host_test

// Attacks on the host's package installer by code in the sandbox: what it
// asks the host to install is untrusted (allow_runtime_packages).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/packages/pkgtest"
	"github.com/parselbox/parselbox/internal/testenv"
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

// require("NAME@VERSION") installs a version from the registry; a version
// that is a host path (file:), a URL or a git repository is refused: the
// host's deno install would link a host directory into node_modules, or
// fetch what the sandbox may not.
func TestRequireNPMVersionNotAPath(t *testing.T) {
	t.Parallel()
	testenv.Runtime(t)
	secret := t.TempDir() // on the host, not mounted
	for name, body := range map[string]string{
		"package.json": `{"name": "left-pad", "version": "9.9.9", "main": "index.js"}`,
		"index.js":     `module.exports = "host-only " + require("fs").readdirSync(__dirname).join(",")`,
	} {
		if err := os.WriteFile(filepath.Join(secret, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pkgDir := t.TempDir()
	sb := newSandbox(t, host.Config{AllowRuntimePackages: true, PackageDir: pkgDir})
	for _, spec := range []string{"left-pad@file:" + secret, "left-pad@link:" + secret, "left-pad@https://127.0.0.1:1/x.tgz",
		"left-pad@git+ssh://git@127.0.0.1/x.git"} {
		r := exec(t, sb, fmt.Sprintf("require(%q)", spec))
		if r.Error == nil || r.Error.Type != "ValueError" && r.Error.Type != "ModuleNotFoundError" {
			t.Errorf("require(%q): %v %+v", spec, r.Output, r.Error)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(pkgDir, "npm", "*", "package.json"))
	for _, m := range matches {
		if b, _ := os.ReadFile(m); strings.Contains(string(b), secret) || strings.Contains(string(b), "127.0.0.1") {
			t.Errorf("%s names what the sandbox asked for: %s", m, b)
		}
	}
	links, _ := filepath.Glob(filepath.Join(pkgDir, "npm", "*", "node_modules", "left-pad"))
	for _, l := range links {
		if target, err := os.Readlink(l); err == nil {
			t.Errorf("node_modules links %s to a host directory: %s", l, target)
		}
	}
}

// A sandbox's npm.install request cannot change the version of a declared
// npm package: the set's node_modules is shared by every sandbox of the
// configuration (other sessions too), which would load the guest's choice.
func TestRuntimeNPMKeepsDeclaredVersion(t *testing.T) {
	t.Parallel()
	testenv.Runtime(t)
	testenv.NPMRegistry(t)
	pkgDir := t.TempDir()
	cfg := host.Config{Packages: []string{"npm:left-pad@1.3.0"}, AllowRuntimePackages: true, PackageDir: pkgDir}
	sb := newSandbox(t, cfg)
	r := exec(t, sb, `from _parselbox.hostcall import host_call
host_call("npm.install", {"package": "left-pad@1.1.3"})`)
	if r.Error == nil {
		t.Errorf("the host installed another version of a declared package: %s", r.Output)
	}
	matches, _ := filepath.Glob(filepath.Join(pkgDir, "npm", "*", "node_modules", "left-pad", "package.json"))
	if len(matches) != 1 {
		t.Fatalf("left-pad's package.json: %v", matches)
	}
	b, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	var pj struct{ Version string }
	if err := json.Unmarshal(b, &pj); err != nil || pj.Version != "1.3.0" {
		t.Errorf("the set's left-pad is now %q (%v), not the declared 1.3.0", pj.Version, err)
	}
}
