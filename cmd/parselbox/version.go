package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/pflag"

	"github.com/parselbox/parselbox/host/sandbox"
)

// commit is set at build time (make build: -ldflags "-X main.commit=...");
// otherwise the VCS stamp of the build, if any, is used.
var commit = ""

// runVersion prints parselbox's version, the module's, the commit and the
// versions of the runtime it finds (Deno, Pyodide, just-bash).
func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("parselbox version", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := newVersionFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	fmt.Fprintf(stdout, "parselbox %s\n", version)
	mod, rev, goVersion := "(unknown)", commit, "(unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		mod = bi.Main.Path + " " + bi.Main.Version
		goVersion = bi.GoVersion
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if rev == "" {
					rev = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && rev != "" {
			rev += " (modified)"
		}
	}
	if rev == "" {
		rev = "(unknown: built without VCS information)"
	}
	row := func(k, v string) { fmt.Fprintf(stdout, "  %-10s %s\n", k, v) }
	row("module", mod)
	row("commit", rev)
	row("go", goVersion)
	rt, err := sandbox.FindRuntime(*dir)
	if err != nil {
		row("runtime", "not found: "+err.Error())
		return exitOK
	}
	row("runtime", rt.Dir)
	for _, p := range []struct{ name, pkg string }{
		{"deno", "@deno/linux-x64-glibc"}, {"pyodide", "pyodide"}, {"just-bash", "just-bash"},
	} {
		v := rt.PackageVersion(p.pkg)
		if v == "" {
			v = "(not installed: make runtime)"
		}
		row(p.name, v)
	}
	return exitOK
}

// newVersionFlags defines the flags of parselbox version.
func newVersionFlags(fs *pflag.FlagSet) *string {
	return fs.String("runtime-dir", "", "runtime `dir`ectory (default: $PARSELBOX_RUNTIME, then next to the binary)")
}
