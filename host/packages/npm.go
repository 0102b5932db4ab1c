package packages

// npm packages for require(), installed on the host by the runtime's own
// Deno binary (`deno install` over a package.json): it resolves versions and
// dependencies, downloads the tarballs from the registry, checks each against
// the registry's integrity hash, records those hashes in deno.lock (checked
// again on every later install) and lays out node_modules. Lifecycle scripts
// are not run (Deno runs them only with --allow-scripts). The sandbox then
// reads node_modules from disk, read-only, and needs no network for them.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// npmStamp records, in an npm directory, the package.json that node_modules
// was installed from.
const npmStamp = "node_modules/.parselbox-installed"

// NPMDir is the directory (under the store's npm/) holding the npm packages
// of one declared set: its package.json, deno.lock and node_modules.
// Packages installed at run time (allow_runtime_packages) join the set's
// directory.
func (s *Store) NPMDir(pkgs []NPM) string {
	specs := make([]string, len(pkgs))
	for i, p := range pkgs {
		specs[i] = p.String()
	}
	slices.Sort(specs)
	sum := sha256.Sum256([]byte(strings.Join(specs, "\n")))
	return filepath.Join(s.Dir, "npm", hex.EncodeToString(sum[:8]))
}

type packageJSON struct {
	Private      bool              `json:"private"`
	Dependencies map[string]string `json:"dependencies"`
}

// InstallNPM makes pkgs ready in dir (see NPMDir), with what is already
// there, using the Deno binary deno. A set already installed costs a read
// of two small files. What cannot be installed is an *InstallError that
// quotes Deno.
func (s *Store) InstallNPM(ctx context.Context, deno, dir string, pkgs []NPM) error {
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("npm package directory: %w", err)
	}
	pj := packageJSON{Private: true}
	if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil {
		if err := json.Unmarshal(b, &pj); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, "package.json"), err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if pj.Dependencies == nil {
		pj.Dependencies = map[string]string{}
	}
	for _, p := range pkgs {
		// A version replaces the one there; none keeps it, or is "latest".
		if _, ok := pj.Dependencies[p.Name]; !ok || p.Version != "" {
			pj.Dependencies[p.Name] = cmp.Or(p.Version, "latest")
		}
	}
	b, err := json.MarshalIndent(pj, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if stamp, err := os.ReadFile(filepath.Join(dir, npmStamp)); err == nil && bytes.Equal(stamp, b) {
		return nil // installed from this very package.json
	}
	if err := writeAtomic(filepath.Join(dir, "package.json"), b); err != nil {
		return err
	}
	if len(pj.Dependencies) == 0 {
		return nil
	}
	names := make([]string, 0, len(pkgs))
	for _, p := range pkgs {
		names = append(names, p.String())
	}
	s.log().Info("installing npm packages", "packages", names, "dir", dir)
	cmd := exec.CommandContext(ctx, deno, "install", "--quiet")
	cmd.Dir = dir
	cmd.Env = npmEnv(filepath.Join(s.Dir, "npm", ".deno"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &InstallError{Problems: []string{fmt.Sprintf("npm %s: deno install failed (%v): %s",
			strings.Join(names, ", "), err, lastLines(out.String(), 6))}}
	}
	return writeAtomic(filepath.Join(dir, npmStamp), b)
}

// npmEnv is the environment of the host's deno install: its own cache
// (tarballs, shared by the store's sets), and the host's registry and proxy
// settings (registry, proxies, certificate authorities), nothing else.
func npmEnv(denoDir string) []string {
	env := []string{"DENO_DIR=" + denoDir, "DENO_NO_UPDATE_CHECK=1", "NO_COLOR=1"}
	for _, k := range []string{"HOME", "NPM_CONFIG_REGISTRY", "npm_config_registry", "HTTPS_PROXY", "https_proxy",
		"HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "DENO_AUTH_TOKENS",
		"DENO_CERT", "DENO_TLS_CA_STORE", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// lastLines is the end of a command's output, on one line.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
