package host_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/packages/pkgtest"
)

// With package_index naming a simple index, micropip's default index is
// that one, not PyPI: micropip.install("x") downloads from it, under the
// network rules (the index's address allowed).
func TestMicropipDefaultSimpleIndex(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, append(pkgtest.Fixtures(), pkgtest.Micropip())...)
	u, err := url.Parse(ix.URL)
	if err != nil {
		t.Fatal(err)
	}
	// (micropip by its wheel's URL: by name, a simple index resolves it
	// against Pyodide's distribution, on the internet)
	wheel := ix.URL + "/files/" + pkgtest.Micropip().FileName()
	sb := newSandbox(t, host.Config{Packages: []string{wheel}, PackageIndex: ix.SimpleURL(), PackageDir: t.TempDir(), AllowNet: []string{u.Host}})
	got := value(t, exec(t, sb, `import micropip
await micropip.install("alphapkg")
import alphapkg
[alphapkg.GREETING, micropip._package_manager_singleton.index_urls]`))
	if want := fmt.Sprint([]any{"alpha+beta", []any{strings.TrimSuffix(ix.SimpleURL(), "/")}}); fmt.Sprint(got) != want {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, want := range []string{"/simple/alphapkg/", "/files/alphapkg-1.0-py3-none-any.whl", "/simple/betapkg/"} {
		if !slices.Contains(ix.Requests(), want) {
			t.Errorf("micropip did not ask the index for %s: %q", want, ix.Requests())
		}
	}
}

// With package_index naming a Pyodide index, micropip's lock is that
// index's: a package of it is installed by the host from it
// (allow_runtime_packages), with the sandbox's network off; a name it does
// not have is not looked up on PyPI.
func TestMicropipDefaultPyodideIndex(t *testing.T) {
	t.Parallel()
	ix := pkgtest.NewIndex(t, append(pkgtest.Fixtures(), pkgtest.Micropip())...)
	cfg := host.Config{Packages: []string{"micropip"}, PackageIndex: ix.PyodideURL(), PackageDir: t.TempDir(), AllowRuntimePackages: true}
	sb := newSandbox(t, cfg)
	got := value(t, exec(t, sb, `import micropip
await micropip.install("gammadata")
import gammadata
gammadata.words()`))
	if fmt.Sprint(got) != "[one two three]" {
		t.Errorf("got %v", got)
	}
	if !slices.Contains(ix.Requests(), "/pyodide/gammadata-1.0-py3-none-any.whl") {
		t.Errorf("the host did not install gammadata from its index: %q", ix.Requests())
	}
	e := raised(t, exec(t, sb, "import micropip\nawait micropip.install('nosuchpkg')"), "")
	if strings.Contains(e.Message, "pypi") || !strings.Contains(e.Message, "nosuchpkg") {
		t.Errorf("a name the index does not have: %s: %s", e.Type, e.Message)
	}
}
