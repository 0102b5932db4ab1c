package packages

import (
	"archive/zip"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"
)

// Store is a package directory: the wheels the host downloaded (wheels/),
// each unpacked once (site/NAME-SHA/), and the lock files of the indexes it
// used (indexes/). Sandboxes read site/ only, read-only. Several hosts may
// share one directory: writers take a file lock, and every file appears by
// an atomic rename, complete.
type Store struct {
	Dir    string
	Client *http.Client // nil: http.DefaultClient
	Log    hclog.Logger // nil: discard
}

// Wheel is a wheel in the store, unpacked.
type Wheel struct {
	Name   string // the package's name
	File   string // the wheel file, in the store or where the configuration named it
	SHA256 string
	// Site is the unpacked wheel's directory, relative to SiteDir.
	Site string
	// Imports are its top-level import names.
	Imports []string
	// Depends are the packages it needs, where known (from the lock or
	// the simple index).
	Depends []string `json:",omitempty"`
	// Binary says it holds compiled code: extension modules or shared
	// libraries (WebAssembly side modules, *.so), which Pyodide's dynamic
	// loader loads when they are imported.
	Binary bool `json:",omitempty"`
	// Libs are the directories (relative to SiteDir) of a shared library
	// package's libraries, which the sandbox's dynamic loader searches
	// (LD_LIBRARY_PATH) for the extension modules that need them, as
	// Pyodide does for the libraries it installs in /usr/lib.
	Libs []string `json:",omitempty"`
}

// SiteDir is the directory holding the unpacked wheels.
func (s *Store) SiteDir() string { return filepath.Join(s.Dir, "site") }

func (s *Store) log() hclog.Logger { return cmp.Or(s.Log, hclog.NewNullLogger()) }

func (s *Store) client() *http.Client { return cmp.Or(s.Client, http.DefaultClient) }

// lock takes the store's file lock, for writing.
func (s *Store) lock() (func(), error) {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("package directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("package directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking the package directory: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// errNotFound is a 404 (or a missing file).
var errNotFound = errors.New("not found")

// get reads a URL (http, https, file) or a file path.
func (s *Store) get(ctx context.Context, src string) ([]byte, error) {
	src = strings.TrimPrefix(src, "file://")
	if !strings.Contains(src, "://") {
		b, err := os.ReadFile(src)
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", src, errNotFound)
		}
		return b, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/vnd.pypi.simple.v1+json, text/html;q=0.5, */*;q=0.1")
	resp, err := s.client().Do(req)
	if err != nil {
		// Offline, the default index (the official distribution) is out
		// of reach: say what works without the internet.
		return nil, fmt.Errorf("%w (the package index is out of reach: without internet, set package_index "+
			"(--package-index) to a mirror, a directory of wheels, or a bundle made by 'parselbox packages fetch')", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("GET %s: %w", src, errNotFound)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", src, resp.Status)
	}
	if resp.ContentLength > maxDownload {
		return nil, fmt.Errorf("GET %s: %d bytes, more than the %d MB a download may be", src, resp.ContentLength, maxDownload>>20)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDownload+1))
	if err == nil && int64(len(b)) > maxDownload {
		return nil, fmt.Errorf("GET %s: more than the %d MB a download may be", src, maxDownload>>20)
	}
	s.log().Debug("downloaded", "url", src)
	return b, err
}

// maxDownload bounds what one download (a lock file, an index's page, a
// wheel) may be: an index that answers without end is cut off. A variable
// for the test that must not send 512 MB.
var maxDownload int64 = 512 << 20

// writeAtomic writes a file so that it appears complete or not at all.
func writeAtomic(dst string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ChecksumError is a download whose sha256 is not the one expected.
type ChecksumError struct {
	File, Want, Got string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("%s: checksum mismatch: expected sha256 %s, got %s (the file was not kept)", e.File, e.Want, e.Got)
}

// fetchWheel makes sure the wheel fileName is in the store, downloading it
// from src when it is not there with the expected checksum (want; empty
// when nobody says). It returns its path and checksum.
// A shared library package of a Pyodide index is a zip file (NAME.zip).
func (s *Store) fetchWheel(ctx context.Context, src, fileName, want string) (string, string, error) {
	if strings.ContainsAny(fileName, `/\`) || !(strings.HasSuffix(fileName, ".whl") || strings.HasSuffix(fileName, ".zip")) {
		return "", "", fmt.Errorf("%q is not a wheel (or shared library zip) file name", fileName)
	}
	dst := filepath.Join(s.Dir, "wheels", fileName)
	if b, err := os.ReadFile(dst); err == nil {
		got := sha256Hex(b)
		if want == "" || strings.EqualFold(got, want) {
			return dst, got, nil
		}
	}
	b, err := s.get(ctx, src)
	if err != nil {
		return "", "", err
	}
	got := sha256Hex(b)
	if want != "" && !strings.EqualFold(got, want) {
		return "", "", &ChecksumError{File: fileName, Want: want, Got: got}
	}
	if err := writeAtomic(dst, b); err != nil {
		return "", "", fmt.Errorf("storing %s: %w", fileName, err)
	}
	return dst, got, nil
}

// unpackedWheel is what unpack made of a wheel.
type unpackedWheel struct {
	dir     string   // the directory, relative to SiteDir
	imports []string // top-level import names
	libDirs []string // the directories of its *.so files, relative to SiteDir
}

// unpack unpacks a wheel (or a shared library zip) into site/, once. A
// *.so file that is not a WebAssembly module (a Linux or macOS build) is
// refused: Pyodide could not load it.
func (s *Store) unpack(file, sum string) (unpackedWheel, error) {
	stem := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(file), ".whl"), ".zip")
	name, _, _ := strings.Cut(stem, "-")
	dirName := Normalize(name) + "-" + sum[:16]
	dst := filepath.Join(s.SiteDir(), dirName)
	b, err := os.ReadFile(file)
	if err != nil {
		return unpackedWheel{}, err
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return unpackedWheel{}, fmt.Errorf("%s: not a wheel: %w", filepath.Base(file), err)
	}
	// (archive/zip stops a member at its declared size: the sum holds.)
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
	}
	if total > maxUnpacked {
		return unpackedWheel{}, fmt.Errorf("%s unpacks to more than %d MB: refused", filepath.Base(file), maxUnpacked>>20)
	}
	u := unpackedWheel{dir: dirName, imports: topLevel(zr)}
	for _, f := range zr.File {
		if rel, ok := wheelPath(f.Name); ok && isLib(rel) {
			if err := wasmMember(f); err != nil {
				return unpackedWheel{}, fmt.Errorf("%s: %w", filepath.Base(file), err)
			}
			if d := path.Join(dirName, path.Dir(rel)); !slices.Contains(u.libDirs, d) {
				u.libDirs = append(u.libDirs, d)
			}
		}
	}
	if _, err := os.Stat(dst); err == nil {
		return u, nil
	}
	if err := os.MkdirAll(s.SiteDir(), 0o755); err != nil {
		return unpackedWheel{}, err
	}
	tmp, err := os.MkdirTemp(s.SiteDir(), ".tmp-")
	if err != nil {
		return unpackedWheel{}, err
	}
	defer os.RemoveAll(tmp)
	for _, f := range zr.File {
		rel, ok := wheelPath(f.Name)
		if !ok || strings.HasSuffix(f.Name, "/") {
			continue
		}
		out := filepath.Join(tmp, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return unpackedWheel{}, err
		}
		if err := writeMember(f, out); err != nil {
			return unpackedWheel{}, fmt.Errorf("%s: %s: %w", filepath.Base(file), f.Name, err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return unpackedWheel{}, err
	}
	if err := os.Rename(tmp, dst); err != nil {
		if _, statErr := os.Stat(dst); statErr == nil {
			return u, nil // unpacked by another host meanwhile
		}
		return unpackedWheel{}, err
	}
	return u, nil
}

// wheelPath is where a wheel's member goes in site-packages: as it is, or
// for NAME.data/purelib|platlib/..., without that prefix; members outside
// site-packages (scripts, headers, data) and unsafe paths are skipped.
func wheelPath(name string) (string, bool) {
	clean := path.Clean(name)
	if path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(clean, `\`) {
		return "", false
	}
	first, rest, _ := strings.Cut(clean, "/")
	if strings.HasSuffix(first, ".data") {
		kind, rel, ok := strings.Cut(rest, "/")
		if ok && (kind == "purelib" || kind == "platlib") {
			return rel, true
		}
		return "", false
	}
	return clean, true
}

// topLevel is a wheel's top-level import names: its top_level.txt, else its
// top-level packages and modules.
func topLevel(zr *zip.Reader) []string {
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".dist-info/top_level.txt") && strings.Count(f.Name, "/") == 1 {
			b, err := readMember(f)
			if err != nil {
				break
			}
			var names []string // nil, not empty, when the file lists none
			return append(names, strings.Fields(string(b))...)
		}
	}
	seen := map[string]bool{}
	var names []string
	for _, f := range zr.File {
		rel, ok := wheelPath(f.Name)
		if !ok {
			continue
		}
		first, rest, nested := strings.Cut(rel, "/")
		var mod string
		switch {
		case nested && rest == "__init__.py":
			mod = first
		case !nested && strings.HasSuffix(first, ".py"):
			mod = strings.TrimSuffix(first, ".py")
		case !nested && strings.HasSuffix(first, ".so") && !strings.HasPrefix(first, "lib"):
			mod, _, _ = strings.Cut(first, ".") // an extension module (NAME.abi3.so)
		}
		if mod != "" && !seen[mod] {
			seen[mod] = true
			names = append(names, mod)
		}
	}
	return names
}

// maxUnpacked is the most a wheel may unpack to (1 GB, half the sandbox's
// default memory): a zip bomb is refused before it is read.
const maxUnpacked = 1 << 30

// writeMember writes a zip member to the file out, streamed.
func writeMember(f *zip.File, out string) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	w, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, rc)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// readMember reads a zip member.
func readMember(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// isLib says whether a member is a shared object (NAME.so, NAME.so.1).
func isLib(rel string) bool {
	base := path.Base(rel)
	return strings.HasSuffix(base, ".so") || strings.Contains(base, ".so.")
}

// wasmMember checks that a zip member is a WebAssembly module.
func wasmMember(f *zip.File) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	defer rc.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(rc, magic); err != nil || string(magic) != "\x00asm" {
		return fmt.Errorf("%s is not a WebAssembly module: it was built for another platform than Pyodide's (emscripten wasm32)", f.Name)
	}
	return nil
}
