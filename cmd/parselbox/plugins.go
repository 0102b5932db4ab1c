package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/parselbox/parselbox/host/bridges"
)

// runPlugins lists the bridge plugins found in the plugin directories, with
// the sha256 to pin each in a configuration file.
func runPlugins(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("parselbox plugins", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	dirs := fs.StringArray("plugin-dir", nil, "also search `dir` (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		return exitUsage
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
	return exitOK
}
