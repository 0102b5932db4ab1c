package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/parselbox/parselbox/host/packages"
	"github.com/parselbox/parselbox/host/sandbox"
)

// runPackages is `parselbox packages fetch`: Python packages (and their
// dependencies) from an index into a directory that is itself a Pyodide
// index (wheels + pyodide-lock.json), for package_index on a host without
// the internet.
func runPackages(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "fetch" {
		fmt.Fprint(stderr, "Usage: parselbox packages fetch [--index URL|DIR] [--dir DIR] NAMES...\n")
		if len(args) > 0 && isHelp(args[0]) {
			return exitOK
		}
		return exitUsage
	}
	fs := pflag.NewFlagSet("parselbox packages fetch", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	index := fs.String("index", "", "Pyodide index (`URL or dir`ectory with pyodide-lock.json) or simple index URL (default: the official Pyodide distribution)")
	dir := fs.String("dir", "parselbox-packages", "the bundle's `dir`ectory: a Pyodide index to use as package_index")
	runtimeDir := fs.String("runtime-dir", "", "runtime `dir`ectory (default: $PARSELBOX_RUNTIME, then next to the binary)")
	cacheDir := fs.String("cache-dir", "", "cache `dir`ectory (downloads are kept in its packages folder)")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "parselbox packages fetch: name at least one package")
		return exitUsage
	}
	rt, err := sandbox.FindRuntime(*runtimeDir)
	if err != nil {
		fmt.Fprintln(stderr, "parselbox packages fetch:", err)
		return exitUsage
	}
	cache := *cacheDir
	if cache == "" {
		if cache, err = sandbox.DefaultCacheDir(); err != nil {
			fmt.Fprintln(stderr, "parselbox packages fetch:", err)
			return exitInternal
		}
	}
	store := &packages.Store{Dir: packages.Dir(cache), Log: newLogger(stderr, false)}
	src := packages.Source{Index: *index, RuntimeLock: filepath.Join(rt.Pyodide, packages.LockFile), PyodideVersion: rt.PyodideVersion}
	wheels, err := store.Bundle(ctx, src, fs.Args(), *dir)
	if err != nil {
		fmt.Fprintln(stderr, "parselbox packages fetch:", err)
		var ie *packages.InstallError
		if errors.As(err, &ie) {
			return exitUsage
		}
		return exitInternal
	}
	for _, w := range wheels {
		fmt.Fprintf(stdout, "%s  %s\n", w.SHA256, filepath.Base(w.File))
	}
	abs, _ := filepath.Abs(*dir)
	fmt.Fprintf(stdout, "%d wheels in %s: use it as package_index (--package-index %s)\n", len(wheels), abs, abs)
	return exitOK
}
