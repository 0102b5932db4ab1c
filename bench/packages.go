package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/parselbox/parselbox/host/packages"
	"github.com/parselbox/parselbox/host/packages/pkgtest"
	"github.com/parselbox/parselbox/host/sandbox"
)

var packageTargets = []target{
	{"boot_snapshot_with_pkgs_ms", "boot_snapshot_bare_ms", "≤ 1.3 × bare snapshot", func(r results) bool {
		return r.v("boot_snapshot_with_pkgs_ms") <= 1.3*r.v("boot_snapshot_bare_ms")
	}},
	{"pkg_install_cached_ms", "", "", nil},
}

// runPackages measures a start whose packages are all in the package
// directory already (pkg_install_cached_ms: what the host does before the
// sandbox starts), and boots from the package set's snapshot, which has
// them imported (boot_snapshot_with_pkgs_ms), against bare snapshot boots
// in the same loop (boot_snapshot_bare_ms: boot_snapshot_ms measured
// alongside, under the same load).
func (b *bench) runPackages(ctx context.Context) error {
	wheels := filepath.Join(b.cacheDir, "wheels-src")
	if err := os.MkdirAll(wheels, 0o755); err != nil {
		return err
	}
	for _, p := range pkgtest.Fixtures() {
		w, err := p.Build()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(wheels, p.FileName()), w, 0o644); err != nil {
			return err
		}
	}
	store := &packages.Store{Dir: filepath.Join(b.cacheDir, "packages")}
	if _, err := store.Install(ctx, packages.Source{}, []string{wheels}); err != nil {
		return err
	}
	var ws []packages.Wheel
	for range b.runs {
		began := time.Now()
		var err error
		if ws, err = store.Install(ctx, packages.Source{}, []string{wheels}); err != nil {
			return err
		}
		b.add("pkg_install_cached_ms", ms(time.Since(began)))
	}
	pk := &sandbox.Packages{Dir: store.SiteDir()}
	for _, w := range ws {
		pk.Paths = append(pk.Paths, w.Site)
		pk.Preload = append(pk.Preload, w.Imports...)
	}
	start := func() (*sandbox.Supervisor, error) {
		wsDir, err := os.MkdirTemp(b.cacheDir, "ws-")
		if err != nil {
			return nil, err
		}
		return sandbox.Start(ctx, sandbox.Options{Runtime: b.rt, CacheDir: b.cacheDir, Workspace: wsDir, Packages: pk})
	}
	bare, err := b.start(ctx, false) // the bare snapshot, built if missing
	if err != nil {
		return err
	}
	bare.Close()
	sb, err := start() // builds the package set's snapshot
	if err != nil {
		return err
	}
	if !sb.Ready().Snapshot {
		sb.Close()
		return fmt.Errorf("the package sandbox did not boot from a snapshot")
	}
	sb.Close()
	for range b.boots {
		began := time.Now()
		sb, err := start()
		if err != nil {
			return err
		}
		b.add("boot_snapshot_with_pkgs_ms", ms(time.Since(began)))
		snap := sb.Ready().Snapshot
		sb.Close()
		if !snap {
			return fmt.Errorf("boot_snapshot_with_pkgs_ms: the sandbox did not boot from its snapshot")
		}
		began = time.Now()
		if sb, err = b.start(ctx, false); err != nil {
			return err
		}
		b.add("boot_snapshot_bare_ms", ms(time.Since(began))) // boot_snapshot_ms, in this loop
		snap = sb.Ready().Snapshot
		sb.Close()
		if !snap {
			return fmt.Errorf("boot_snapshot_bare_ms: the sandbox did not boot from the snapshot")
		}
	}
	return nil
}
