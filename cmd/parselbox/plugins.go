package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/bridges"
	"github.com/parselbox/parselbox/host/config"
)

// runPlugins lists the bridge plugins found in the plugin directories, with
// the sha256 to pin each in a configuration file.
func runPlugins(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("parselbox plugins", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	dirs, cfgPath := newPluginsFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	var configured []host.PluginCheck
	if *cfgPath != "" {
		file, err := config.LoadFile(*cfgPath)
		if err != nil {
			fmt.Fprintln(stderr, "parselbox plugins:", err)
			return exitUsage
		}
		*dirs = append(file.Config.PluginDirs, *dirs...)
		file.Config.PluginDirs = *dirs
		if configured, err = host.Check(*file.Config); err != nil {
			fmt.Fprintln(stderr, "parselbox plugins:", file.Locate(err))
			return exitUsage
		}
	}
	m := bridges.NewManager(bridges.Options{PluginDirs: *dirs})
	list, err := m.List()
	if err != nil {
		fmt.Fprintln(stderr, "parselbox plugins:", err)
		return exitInternal
	}
	fmt.Fprintf(stdout, "searched: %v\n", m.Dirs())
	for _, p := range list {
		sum, err := bridges.FileSHA256(p.Path)
		if err != nil {
			sum = "(" + err.Error() + ")"
		}
		fmt.Fprintf(stdout, "%-16s %s\n  sha256 = %q\n", p.Name, p.Path, sum)
	}
	if *cfgPath != "" {
		fmt.Fprintf(stdout, "\nin %s:\n", *cfgPath)
		writePlugins(stdout, configured)
	}
	return exitOK
}

// newPluginsFlags defines the flags of parselbox plugins.
func newPluginsFlags(fs *pflag.FlagSet) (dirs *[]string, cfgPath *string) {
	return fs.StringArray("plugin-dir", nil, "also search `dir` (repeatable)"),
		fs.String("config", "", "also search the plugin_dirs of this configuration `file`, and resolve its bridges")
}
