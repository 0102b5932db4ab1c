package packages

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Target is the platform compiled packages must be built for: the pinned
// Pyodide's, as its lock file says (info.abi_version, info.platform,
// info.python).
type Target struct {
	ABIVersion string // "2026_0"
	Platform   string // "emscripten_5_0_3"
	Python     string // "3.14.2"
}

// runtimeLock reads the pinned Pyodide's own lock file.
func runtimeLock(src Source) (*Lock, error) {
	b, err := os.ReadFile(src.RuntimeLock)
	if err != nil {
		return nil, fmt.Errorf("the runtime's %s: %w", LockFile, err)
	}
	return ParseLock(b)
}

// runtimeTarget reads the runtime's lock file's target; a missing or
// unreadable lock gives the zero Target, with which only pure-Python
// wheels are accepted.
func runtimeTarget(src Source) Target {
	l, err := runtimeLock(src)
	if err != nil {
		return Target{}
	}
	return Target{ABIVersion: l.Info.ABIVersion, Platform: l.Info.Platform, Python: l.Info.Python}
}

// platformTags are the wheel platform tags Pyodide installs: the ABI's
// (pyemscripten_2026_0_wasm32, and its older spelling pyodide_...) and the
// Emscripten version's (emscripten_5_0_3_wasm32).
func (t Target) platformTags() []string {
	var tags []string
	if t.ABIVersion != "" {
		tags = append(tags, "pyemscripten_"+t.ABIVersion+"_wasm32", "pyodide_"+t.ABIVersion+"_wasm32")
	}
	if t.Platform != "" {
		tags = append(tags, t.Platform+"_wasm32")
	}
	return tags
}

// String names the target as a wheel's platform tag does.
func (t Target) String() string {
	if tags := t.platformTags(); len(tags) > 0 {
		return tags[0]
	}
	return "an unknown Pyodide platform"
}

// minor is the Python minor version (14 for 3.14.2), 0 when unknown.
func (t Target) minor() int {
	_, rest, _ := strings.Cut(t.Python, ".")
	minor, _, _ := strings.Cut(rest, ".")
	n, _ := strconv.Atoi(minor)
	return n
}

// wheelTags splits a wheel file name into its version and tags.
func wheelTags(fileName string) (version, py, abi, plat string, ok bool) {
	stem, ok := strings.CutSuffix(fileName, ".whl")
	parts := strings.Split(stem, "-")
	if !ok || len(parts) < 5 {
		return "", "", "", "", false
	}
	n := len(parts)
	return parts[1], parts[n-3], parts[n-2], parts[n-1], true
}

// Compatible says why a wheel cannot be installed in the target's Pyodide
// (nil when it can): a pure-Python 3 wheel always can; a compiled one must
// be built for the target's platform (pyemscripten_2026_0_wasm32 or
// emscripten_5_0_3_wasm32), for its CPython (cp314) or the stable ABI
// (abi3) of a version not newer than it.
func (t Target) Compatible(fileName string) error {
	_, py, abi, plat, ok := wheelTags(fileName)
	if !ok {
		return fmt.Errorf("%q is not a wheel file name (NAME-VERSION-PYTHON-ABI-PLATFORM.whl)", fileName)
	}
	if abi == "none" && plat == "any" {
		if slices.ContainsFunc(strings.Split(py, "."), func(p string) bool { return strings.HasPrefix(p, "py3") }) {
			return nil
		}
		return fmt.Errorf("%s is not a Python 3 wheel", fileName)
	}
	tags := t.platformTags()
	if !slices.ContainsFunc(strings.Split(plat, "."), func(p string) bool { return slices.Contains(tags, p) }) {
		return fmt.Errorf("%s is built for %s, not for this Pyodide (%s): only pure-Python wheels and wheels built for it can be installed", fileName, plat, t)
	}
	minor := t.minor()
	for _, p := range strings.Split(py, ".") {
		v, ok := strings.CutPrefix(p, "cp3")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			continue
		}
		if (abi == "abi3" && n <= minor) || (abi == "cp3"+v && n == minor) || (abi == "none" && n == minor) {
			return nil
		}
	}
	return fmt.Errorf("%s is built for %s/%s, not for this Pyodide's Python %s (cp3%d, or abi3)", fileName, py, abi, t.Python, minor)
}
