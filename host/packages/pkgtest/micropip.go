package pkgtest

import (
	"embed"
	"io/fs"
	"strings"
)

//go:embed all:testdata/micropip/micropip
var micropipSource embed.FS

// MicropipVersion is the version of micropip that Micropip builds: the one
// the pinned Pyodide's lock file lists.
const MicropipVersion = "0.11.1"

// Micropip is the real micropip (testdata/micropip: its unmodified source,
// as released), as a package to build and serve like the others.
func Micropip() Package {
	files := map[string]string{
		"micropip/_version.py": "__version__ = \"" + MicropipVersion + "\"\n",
	}
	err := fs.WalkDir(micropipSource, "testdata/micropip", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := micropipSource.ReadFile(p)
		if err != nil {
			return err
		}
		files[strings.TrimPrefix(p, "testdata/micropip/")] = string(b)
		return nil
	})
	if err != nil {
		panic("pkgtest: the embedded micropip: " + err.Error()) // cannot happen: the files are compiled in
	}
	return Package{Name: "micropip", Version: MicropipVersion, Files: files}
}
