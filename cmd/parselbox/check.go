package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/parselbox/parselbox/host"
)

// runCheck loads and checks a configuration (the file, with any flag over
// it) as the server and exec would, resolves its plugins with their
// sha256, and starts nothing: exit 0 when it is fine, 2 when not.
func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("parselbox check", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: parselbox check [flags] [FILE]\n\nLoads and checks a configuration (FILE is --config) with the flags over it, as\nparselbox and parselbox exec would, and resolves its plugins (with their sha256);\nstarts nothing. Exit status: 0 fine, 2 a problem (said on stderr).\n\nFlags:\n")
		fs.PrintDefaults()
	}
	flags := newServeFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(stderr, "parselbox check:", err)
		return exitUsage
	}
	switch {
	case fs.NArg() == 1 && flags.configPath == "":
		flags.configPath = fs.Arg(0)
	case fs.NArg() > 0:
		fmt.Fprintln(stderr, "parselbox check: expected at most one FILE (or --config FILE)")
		return exitUsage
	}
	file, err := flags.load()
	if err != nil {
		fmt.Fprintln(stderr, "parselbox check:", err)
		return exitUsage
	}
	plugins, err := host.Check(*file.Config)
	if err != nil {
		fmt.Fprintln(stderr, "parselbox check:", file.Locate(err))
		return exitUsage
	}
	name := flags.configPath
	if name == "" {
		name = "(no file: the defaults and flags)"
	}
	fmt.Fprintf(stdout, "%s: ok\n", name)
	writePlugins(stdout, plugins)
	return exitOK
}

// writePlugins lists the plugin bridges of a configuration.
func writePlugins(w io.Writer, plugins []host.PluginCheck) {
	for _, p := range plugins {
		what := "bridge"
		if p.MCP {
			what = "MCP server"
		}
		pin := ""
		if p.Pinned {
			pin = " (pinned)"
		}
		fmt.Fprintf(w, "%s %s: %s\n  sha256 = %q%s\n", what, p.Namespace, p.Path, p.SHA256, pin)
	}
}
