package pkgtest

import "embed"

//go:embed all:testdata/micropip/micropip all:testdata/urllib3/urllib3
var sources embed.FS

//go:embed testdata/dylib/*.so
var dylibs embed.FS

// Compiled are packages with compiled code for Pyodide's platform tag plat
// ("pyemscripten_2026_0_wasm32"): libpbxtriple, a shared library package
// (as libopenblas is), and tinyext, a wheel with an extension module (the
// stable ABI) that needs it (as scipy needs libopenblas), and depends on
// it. Both are real WebAssembly side modules (testdata/dylib, built from
// the C sources there by build.sh).
func Compiled(plat string) []Package {
	read := func(name string) string {
		b, err := dylibs.ReadFile("testdata/dylib/" + name)
		if err != nil {
			panic("pkgtest: the embedded " + name + ": " + err.Error()) // cannot happen: the files are compiled in
		}
		return string(b)
	}
	return []Package{
		{Name: "libpbxtriple", SharedLibrary: true, Files: map[string]string{"libpbxtriple.so": read("libpbxtriple.so")}},
		{Name: "tinyext", Tag: "cp312-abi3-" + plat, Requires: []string{"libpbxtriple"},
			Files: map[string]string{"tinyext.abi3.so": read("tinyext.abi3.so")}},
	}
}

// MicropipVersion is the version of micropip that Micropip builds: the one
// the pinned Pyodide's lock file lists.
const MicropipVersion = "0.11.1"

// Micropip is the real micropip (testdata/micropip: its unmodified source,
// as released), as a package to build and serve like the others.
func Micropip() Package {
	return embedded("micropip", "micropip", MicropipVersion)
}

// Urllib3Version is the version of urllib3 that Urllib3 builds: the one the
// pinned Pyodide's lock file lists.
const Urllib3Version = "2.6.3"

// Urllib3 is the real urllib3 2 (testdata/urllib3: its unmodified source,
// as released), as a package to build and serve like the others.
func Urllib3() Package {
	return embedded("urllib3", "urllib3", Urllib3Version)
}

// embedded is the package of testdata/NAME/MODULE, with the _version.py a
// release build writes.
func embedded(name, module, version string) Package {
	root := "testdata/" + name + "/"
	files, err := readTree(sources, root+module, root)
	if err != nil {
		panic("pkgtest: the embedded " + name + ": " + err.Error()) // cannot happen: the files are compiled in
	}
	files[module+"/_version.py"] = "__version__ = \"" + version + "\"\n"
	return Package{Name: name, Version: version, Files: files}
}
