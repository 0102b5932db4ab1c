package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// ErrPathNotOnDisk means a sandbox path is not backed by a host directory
// (it is in the sandbox's memory, or it escapes its mount).
var ErrPathNotOnDisk = errors.New("path not backed by disk")

// ErrReadOnly means a write to a read-only mount.
var ErrReadOnly = errors.New("read-only mount")

// fsMap maps sandbox paths to host directories: /workspace, /files and the
// mounts, longest prefix first.
type fsMap []fsRoot

type fsRoot struct {
	prefix   string // sandbox path: /workspace, /files, /mnt/data
	dir      string // host directory, symlinks resolved
	readOnly bool
}

// holds reports whether the host path p is r's directory or inside it.
func (r fsRoot) holds(p string) bool {
	return p == r.dir || strings.HasPrefix(p, r.dir+string(filepath.Separator))
}

func newFSMap(roots ...fsRoot) (fsMap, error) {
	m := make(fsMap, 0, len(roots))
	for _, r := range roots {
		real, err := filepath.EvalSymlinks(r.dir)
		if err != nil {
			return nil, err
		}
		r.dir = real
		m = append(m, r)
	}
	sort.Slice(m, func(i, j int) bool { return len(m[i].prefix) > len(m[j].prefix) })
	return m, nil
}

// resolve returns the host path for a sandbox path: relative paths are
// under /workspace; the result, with symlinks resolved, must stay inside the
// directory it maps to.
func (m fsMap) resolve(p string) (string, fsRoot, error) {
	if !path.IsAbs(p) {
		p = "/workspace/" + p
	}
	clean := path.Clean(p)
	for _, r := range m {
		if clean != r.prefix && !strings.HasPrefix(clean, r.prefix+"/") {
			continue
		}
		host := filepath.Join(r.dir, filepath.FromSlash(strings.TrimPrefix(clean, r.prefix)))
		real, err := realPath(host)
		if err != nil {
			return "", r, err
		}
		if !r.holds(real) {
			return "", r, fmt.Errorf("%w: %s", ErrPathNotOnDisk, p)
		}
		return real, r, nil
	}
	return "", fsRoot{}, fmt.Errorf("%w: %s", ErrPathNotOnDisk, p)
}

// realPath resolves symlinks in the longest existing prefix of p.
func realPath(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p, nil
	}
	rp, err := realPath(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(rp, filepath.Base(p)), nil
}

// ReadFile reads a file of the sandbox by its sandbox path ("/workspace/out.csv",
// "out.csv", "/files/in.txt", "/mnt/data/x"). Text is its UTF-8 bytes.
func (s *Sandbox) ReadFile(p string) ([]byte, error) {
	host, _, err := s.files.resolve(p)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", p, err)
	}
	switch fi, err := os.Stat(host); {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("reading %s: file not found: %w", p, fs.ErrNotExist)
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", p, err)
	case fi.IsDir():
		return nil, fmt.Errorf("reading %s: is a directory", p)
	}
	return os.ReadFile(host)
}

// WriteFile writes a file into the sandbox, creating parent directories. It
// works before the first execution and refuses read-only mounts.
func (s *Sandbox) WriteFile(p string, data []byte) error {
	host, root, err := s.files.resolve(p)
	if err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if root.readOnly {
		return fmt.Errorf("writing %s: %w", p, ErrReadOnly)
	}
	if host == root.dir {
		return fmt.Errorf("writing %s: is a directory", p)
	}
	if err := os.MkdirAll(filepath.Dir(host), 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return os.WriteFile(host, data, 0o644)
}
