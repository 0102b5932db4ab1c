package packages_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/parselbox/parselbox/host/packages"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	py, npm, err := packages.Split([]string{"numpy", " npm:lodash@4.17.21", "./w/x-1.0-py3-none-any.whl", "npm:@msgpack/msgpack", "npm:@scope/pkg@^2"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"numpy", "./w/x-1.0-py3-none-any.whl"}, py); diff != "" {
		t.Errorf("python (-want +got):\n%s", diff)
	}
	want := []packages.NPM{{Name: "lodash", Version: "4.17.21"}, {Name: "@msgpack/msgpack"}, {Name: "@scope/pkg", Version: "^2"}}
	if diff := cmp.Diff(want, npm); diff != "" {
		t.Errorf("npm (-want +got):\n%s", diff)
	}
	if got := npm[0].String(); got != "npm:lodash@4.17.21" {
		t.Errorf("String() = %q", got)
	}
}

func TestParseNPMErrors(t *testing.T) {
	t.Parallel()
	for spec, want := range map[string]string{
		"":             `"" is not an npm package name`,
		"Lodash":       `"Lodash" is not an npm package name`,
		"lodash@":      `an empty version after "lodash@"`,
		"@scope":       `"@scope" is not an npm package name`,
		"scope/pkg":    `"scope/pkg" is not an npm package name`,
		"../etc":       `"../etc" is not an npm package name`,
		"a b":          `"a b" is not an npm package name`,
		"@/pkg":        `"@/pkg" is not an npm package name`,
		"_private@1.0": `"_private" is not an npm package name`,
	} {
		_, err := packages.ParseNPM(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseNPM(%q) = %v, want %q", spec, err, want)
		}
	}
}
