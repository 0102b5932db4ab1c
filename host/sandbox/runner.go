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
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
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

// runnerKey is runnerHash with the version of the runtime's Deno, which
// what Deno compiles from the runner is valid for: the runner directory
// and the snapshot, whose build compiles it for the sandboxes to read
// (compiledRunner), are named for both.
func runnerKey(rt *Runtime) string {
	sum := sha256.Sum256([]byte(runnerHash + "\x00" + rt.DenoVersion))
	return hex.EncodeToString(sum[:])
}

// entryPoint is the module Deno runs, relative to the runner directory.
const entryPoint = "main.ts"

// installRunner writes the runner into cacheDir, once per runner version and
// runtime, and returns its directory. deps.ts imports Pyodide by absolute
// path, statically, so the sandbox needs no read permission on the module
// files themselves; it names just-bash's module, which the first bash()
// call imports (its ~1 MB would slow every boot).
func installRunner(cacheDir string, rt *Runtime) (string, error) {
	deps := fmt.Sprintf("export { loadPyodide } from %q;\nexport { default as createPyodideModule } from %q;\nexport const justBashURL = %q;\n",
		fileURL(filepath.Join(rt.Pyodide, "pyodide.mjs")), fileURL(filepath.Join(rt.Pyodide, "pyodide.asm.mjs")),
		fileURL(filepath.Join(rt.Modules, filepath.FromSlash(justBashModule))))
	sum := sha256.Sum256([]byte(runnerKey(rt) + "\x00" + deps))
	dir := filepath.Join(cacheDir, "runner-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "deps.ts")); err == nil {
		// Its mtime says it is in use (pruneRunners).
		now := time.Now()
		_ = os.Chtimes(dir, now, now)
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

// runnerKeep is how long a runner directory of another version is kept
// after its last use: a host of that version, sharing the cache directory,
// refreshes its mtime whenever it prepares a sandbox (installRunner).
const runnerKeep = 24 * time.Hour

// pruned holds the cache directories this process has pruned.
var pruned sync.Map

// pruneRunners removes, once per process and cache directory, the runner
// directories of other versions unused for runnerKeep, with what Deno
// compiled from them into its cache (<cacheDir>/deno/gen/file/<path>):
// otherwise both grow with every upgrade, and a confined sandbox copies the
// whole Deno cache at each boot. A host whose compiled files are gone only
// compiles them again. Symbolic links are never followed: only real
// directories named runner-<16 hex digits> go. It reads one directory when
// there is nothing to remove (a few µs).
func pruneRunners(log hclog.Logger, cacheDir, keep string, now time.Time) {
	if _, done := pruned.LoadOrStore(cacheDir, true); done {
		return
	}
	entries, err := os.ReadDir(cacheDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || e.Type()&fs.ModeSymlink != 0 || !isRunnerName(name) || name == keep {
			continue
		}
		dir := filepath.Join(cacheDir, name)
		info, err := os.Lstat(dir)
		if err != nil || !info.IsDir() || now.Sub(info.ModTime()) < runnerKeep {
			continue
		}
		// Compiled output first: a runner directory without it is whole.
		for _, gen := range denoGenDirs(cacheDir, name) {
			if err := os.RemoveAll(gen); err != nil {
				log.Warn("could not remove an old runner's compiled files", "path", gen, "error", err)
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			log.Warn("could not remove an old runner", "path", dir, "error", err)
			continue
		}
		log.Debug("removed an old runner", "path", dir, "unused_since", info.ModTime())
	}
}

// isRunnerName reports whether name is runner- and 16 lower-case hex digits.
func isRunnerName(name string) bool {
	h, ok := strings.CutPrefix(name, "runner-")
	return ok && len(h) == 16 && strings.Trim(h, "0123456789abcdef") == ""
}

// denoGenDirs are the directories, under DENO_DIR (denoEnv), where Deno
// keeps what it compiled from the runner directory name in cacheDir: its
// path is the module's, absolute, under gen/file. Only those reached from
// cacheDir without a symbolic link are returned.
func denoGenDirs(cacheDir, name string) []string {
	bases := []string{cacheDir}
	if r, err := filepath.EvalSymlinks(cacheDir); err == nil && r != cacheDir {
		bases = append(bases, r)
	}
	var out []string
	for _, base := range bases {
		rel := filepath.Join("deno", "gen", "file", strings.TrimPrefix(filepath.Join(base, name), string(filepath.Separator)))
		if realDir(cacheDir, rel) {
			out = append(out, filepath.Join(cacheDir, rel))
		}
	}
	return out
}

// compiledRunner are the directories of denoGenDirs, relative to DENO_DIR,
// that hold Deno's compiled output of every module of the runner: a
// confined sandbox reads them rather than copying them (confine.Spec.Linked).
// The directory's name covers Deno's version (runnerKey); a module missing
// would cost every boot a write that fails, retried for 150 ms.
func compiledRunner(cacheDir, runnerDir string) []string {
	var out []string
	for _, gen := range denoGenDirs(cacheDir, filepath.Base(runnerDir)) {
		complete := true
		for _, n := range slices.Concat(runnerFiles, []string{"deps.ts"}) {
			if strings.HasSuffix(n, ".ts") {
				_, err := os.Stat(filepath.Join(gen, filepath.FromSlash(n)+".js"))
				complete = complete && err == nil
			}
		}
		if complete {
			rel, _ := filepath.Rel(filepath.Join(cacheDir, "deno"), gen)
			out = append(out, rel)
		}
	}
	return out
}

// realDir reports whether base/rel is a directory reached from base through
// directories only, no symbolic link.
func realDir(base, rel string) bool {
	p := base
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		if c == "" {
			continue
		}
		p = filepath.Join(p, c)
		info, err := os.Lstat(p)
		if err != nil || !info.IsDir() {
			return false
		}
	}
	return true
}

func fileURL(p string) string {
	return "file://" + strings.ReplaceAll(path.Clean(filepath.ToSlash(p)), " ", "%20")
}
