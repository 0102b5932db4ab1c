package bridges

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// BinaryPrefix starts the file name of every plugin binary: the plugin
// "greeter" is the binary parselbox-bridge-greeter.
const BinaryPrefix = "parselbox-bridge-"

// Plugin is a plugin binary found in the plugin directories.
type Plugin struct {
	// Name is the plugin's name ("greeter").
	Name string
	// Path is the binary's path.
	Path string
}

// Dirs returns the plugin directories in search order: the directory of the
// running executable (Options.ExecutableDir), then Options.PluginDirs.
func (m *Manager) Dirs() []string {
	dirs := make([]string, 0, 1+len(m.opts.PluginDirs))
	if m.opts.ExecutableDir != "" {
		dirs = append(dirs, m.opts.ExecutableDir)
	}
	return append(dirs, m.opts.PluginDirs...)
}

// Find resolves a plugin to its binary: a value containing a slash is a
// path; any other is a name, looked up as BinaryPrefix+name in Dirs, first
// match wins. The binary is looked up again at every (re)start of a plugin,
// so a binary can be swapped without rebuilding or restarting the host.
func (m *Manager) Find(plugin string) (string, error) {
	if strings.ContainsRune(plugin, '/') || strings.ContainsRune(plugin, filepath.Separator) {
		path, err := filepath.Abs(plugin)
		if err == nil {
			err = checkExecutable(path)
		}
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrPluginNotFound, err)
		}
		return path, nil
	}
	dirs := m.Dirs()
	for _, dir := range dirs {
		path := filepath.Join(dir, BinaryPrefix+plugin)
		if checkExecutable(path) == nil {
			return path, nil
		}
	}
	where := "no plugin directory"
	if len(dirs) > 0 {
		where = strings.Join(dirs, ", ")
	}
	return "", fmt.Errorf("%w: no executable %s in %s", ErrPluginNotFound, BinaryPrefix+plugin, where)
}

// List returns the plugins found in Dirs, by name; a name found in several
// directories is listed once, with the binary that Find would use.
func (m *Manager) List() ([]Plugin, error) {
	var found []Plugin
	seen := map[string]bool{}
	for _, dir := range m.Dirs() {
		entries, err := os.ReadDir(dir)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing plugins: %w", err)
		}
		for _, e := range entries {
			name, ok := strings.CutPrefix(e.Name(), BinaryPrefix)
			if !ok || name == "" || seen[name] {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if checkExecutable(path) != nil {
				continue
			}
			seen[name] = true
			found = append(found, Plugin{Name: name, Path: path})
		}
	}
	return found, nil
}

func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

// checkSHA256 compares the sha256 of the file at path with want (hex). The
// file is hashed just before it is started; whoever can replace it in
// between can also replace the configuration, so plugin directories must be
// writable only by those trusted with the host.
func checkSHA256(path, want string) error {
	got, err := FileSHA256(path)
	if err != nil {
		return fmt.Errorf("hashing plugin: %w", err)
	}
	if !strings.EqualFold(got, want) {
		return fmt.Errorf("%w: %s has sha256 %s, the configuration pins %s; refusing to start it",
			ErrChecksumMismatch, path, got, strings.ToLower(want))
	}
	return nil
}

// FileSHA256 is the hex SHA-256 of a file: what a bridge's sha256 pins.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// executableDir returns the directory of the running executable, with
// symbolic links resolved, or "" when it cannot be known.
func executableDir() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	return filepath.Dir(exe)
}
