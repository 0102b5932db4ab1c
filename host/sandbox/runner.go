package sandbox

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// The runner (TypeScript, with its features) and its Python package live
// in the binary.
//
//go:embed all:runner
var runnerFS embed.FS

// runnerFiles are the embedded files, as paths relative to runner/, sorted;
// deps.ts is generated next to them.
var runnerFiles = func() []string {
	var names []string
	err := fs.WalkDir(runnerFS, "runner", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, strings.TrimPrefix(p, "runner/"))
		}
		return err
	})
	if err != nil {
		panic(err) // embedded at build time
	}
	return names // WalkDir visits in lexical order
}()

// runnerHash identifies the embedded runner. The snapshot holds the Python
// package's definitions, so it is keyed by this hash too.
var runnerHash = func() string {
	h := sha256.New()
	for _, n := range runnerFiles {
		b, err := runnerFS.ReadFile("runner/" + n)
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}()

// entryPoint is the module Deno runs, relative to the runner directory.
const entryPoint = "main.ts"

// installRunner writes the runner into cacheDir, once per runner version and
// runtime, and returns its directory. deps.ts imports Pyodide and just-bash
// by absolute path, statically, so the sandbox needs no read permission on the module
// files themselves.
func installRunner(cacheDir string, rt *Runtime) (string, error) {
	deps := fmt.Sprintf("export { loadPyodide } from %q;\nexport { default as createPyodideModule } from %q;\nexport * as justBash from %q;\n",
		fileURL(filepath.Join(rt.Pyodide, "pyodide.mjs")), fileURL(filepath.Join(rt.Pyodide, "pyodide.asm.mjs")),
		fileURL(filepath.Join(rt.Modules, filepath.FromSlash(justBashModule))))
	sum := sha256.Sum256([]byte(runnerHash + "\x00" + deps))
	dir := filepath.Join(cacheDir, "runner-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "deps.ts")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return "", fmt.Errorf("creating cache directory: %w", err)
	}
	tmp, err := os.MkdirTemp(cacheDir, ".runner-*")
	if err != nil {
		return "", fmt.Errorf("installing runner: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, n := range runnerFiles {
		b, _ := fs.ReadFile(runnerFS, "runner/"+n)
		dst := filepath.Join(tmp, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return "", fmt.Errorf("installing runner: %w", err)
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			return "", fmt.Errorf("installing runner: %w", err)
		}
	}
	// deps.ts last: its presence marks a complete directory.
	if err := os.WriteFile(filepath.Join(tmp, "deps.ts"), []byte(deps), 0o600); err != nil {
		return "", fmt.Errorf("installing runner: %w", err)
	}
	if err := os.Chmod(tmp, 0o700); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process won the race; its copy is identical.
		if _, statErr := os.Stat(filepath.Join(dir, "deps.ts")); statErr == nil {
			return dir, nil
		}
		return "", fmt.Errorf("installing runner: %w", err)
	}
	return dir, nil
}

func fileURL(p string) string {
	return "file://" + strings.ReplaceAll(path.Clean(filepath.ToSlash(p)), " ", "%20")
}
