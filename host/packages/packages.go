package packages

import (
	"archive/zip"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// NPMPrefix marks an npm package in a list of packages.
const NPMPrefix = "npm:"

// NPM is an npm package as the configuration names it.
type NPM struct {
	// Name is the package's name, scope included ("lodash", "@scope/pkg").
	Name string
	// Version is what follows the name's "@": a version or a range; empty
	// for the latest.
	Version string
}

func (p NPM) String() string {
	if p.Version == "" {
		return NPMPrefix + p.Name
	}
	return NPMPrefix + p.Name + "@" + p.Version
}

// Split separates a list of packages into the Python ones, as they are, and
// the npm ones ("npm:NAME[@VERSION]"), parsed.
func Split(entries []string) (python []string, npm []NPM, err error) {
	for _, e := range entries {
		e = strings.TrimSpace(e)
		spec, ok := strings.CutPrefix(e, NPMPrefix)
		if !ok {
			python = append(python, e)
			continue
		}
		p, err := ParseNPM(spec)
		if err != nil {
			return nil, nil, fmt.Errorf("package %q: %w", e, err)
		}
		npm = append(npm, p)
	}
	return python, npm, nil
}

// ParseNPM parses "NAME[@VERSION]", where NAME may be scoped ("@scope/pkg").
func ParseNPM(spec string) (NPM, error) {
	name, version := spec, ""
	at := strings.LastIndexByte(spec, '@')
	if at > 0 { // a leading "@" is the scope's
		name, version = spec[:at], spec[at+1:]
		if version == "" {
			return NPM{}, fmt.Errorf("an empty version after %q", name+"@")
		}
	}
	if len(name) > 214 || !npmName.MatchString(name) {
		return NPM{}, fmt.Errorf("%q is not an npm package name", name)
	}
	return NPM{Name: name, Version: version}, nil
}

// FromRegistry says the version is one the registry resolves: a version, a
// range or a dist-tag ("1.3.0", "^4 || 5.x", "latest"), not a host path
// (file:, link:), a URL or a git repository, which deno install would link
// or fetch as they are.
func (p NPM) FromRegistry() bool { return npmRegistryVersion.MatchString(p.Version) }

var npmRegistryVersion = regexp.MustCompile(`^[A-Za-z0-9.^~<>=|*+ -]*$`)

// npmName follows npm's rules for new package names: lower case, URL-safe,
// an optional "@scope/" prefix, neither part starting with "." or "_" (and
// at most 214 characters, checked apart).
var npmName = regexp.MustCompile(`^(@[a-z0-9~-][a-z0-9._~-]*/)?[a-z0-9~-][a-z0-9._~-]*$`)

// Dir is the default package directory under a cache directory.
func Dir(cacheDir string) string { return filepath.Join(cacheDir, "packages") }

// StdlibModules are the top-level module names of a Python standard
// library zip (the runtime's python_stdlib.zip): names in packages that
// are among them need no installing.
func StdlibModules(stdlibZip string) (map[string]bool, error) {
	zr, err := zip.OpenReader(stdlibZip)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	mods := map[string]bool{}
	for _, f := range zr.File {
		top, _, _ := strings.Cut(f.Name, "/")
		top = strings.TrimSuffix(strings.TrimSuffix(top, ".pyc"), ".py")
		if top != "" {
			mods[top] = true
		}
	}
	return mods, nil
}

// IsName reports whether a Python entry of packages is a name (to resolve
// on an index), not a wheel file or URL or a directory.
func IsName(entry string) bool {
	e := strings.TrimSpace(entry)
	return !strings.Contains(e, "://") && !strings.ContainsAny(e, `/\`) && !strings.HasSuffix(strings.SplitN(e, "#", 2)[0], ".whl")
}
