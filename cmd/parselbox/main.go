// Command parselbox runs Python in a sandbox whose tools execute on the host.
//
//	parselbox [flags]             serve MCP over stdio or streamable HTTP (--transport http)
//	parselbox exec [flags] CODE   run CODE (or - for stdin) and print the result as JSON
//	parselbox repl [flags]        an interactive Python session in one sandbox
//	parselbox check [flags]       check a configuration and resolve its plugins; start nothing
//	parselbox plugins [flags]     list bridge plugins and their sha256
//	parselbox doctor [flags]      which kernel layers confine the sandbox, and why any does not
//	parselbox version             print the versions of parselbox and of its runtime
//	parselbox completion SHELL    print a completion script for bash, zsh or fish
//
// See README.md for the flags and the configuration file.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"
)

// Exit statuses.
const (
	exitOK       = 0
	exitRaised   = 1 // the code raised an exception
	exitUsage    = 2 // bad flags or configuration
	exitInternal = 3 // the host failed
)

var version = "0.1.0-dev"

func main() {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if len(os.Args) > 1 && os.Args[1] == "repl" {
		sigs = sigs[1:] // Ctrl-C interrupts the REPL's code, not the REPL
	}
	// The MCP server over HTTP drains on the first signal; anything else
	// stops.
	ctx, stop := withSignals(context.Background(), notifier(os.Stderr), sigs...)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if _, err := envLogLevel(); err != nil {
		fmt.Fprintln(stderr, "parselbox:", err)
		return exitUsage
	}
	if len(args) == 0 || (strings.HasPrefix(args[0], "-") && !isHelp(args[0]) && !isVersion(args[0])) {
		return runServe(ctx, args, stdin, stdout, stderr)
	}
	switch args[0] {
	case "exec":
		return runExec(ctx, args[1:], stdin, stdout, stderr)
	case "repl":
		return runRepl(ctx, args[1:], stdin, stdout, stderr)
	case "completion":
		return runCompletion(args[1:], stdout, stderr)
	case "check":
		return runCheck(args[1:], stdout, stderr)
	case "plugins":
		return runPlugins(args[1:], stdout, stderr)
	case "doctor":
		return runDoctor(args[1:], stdout, stderr)
	case "packages":
		return runPackages(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		return runVersion(args[1:], stdout, stderr)
	case "help", "-h", "--help", "-help":
		usage(stdout)
		fmt.Fprint(stdout, "\nFlags of the MCP server (parselbox [flags]):\n")
		fs := pflag.NewFlagSet("parselbox", pflag.ContinueOnError)
		fs.SetOutput(stdout)
		newServeFlags(fs)
		fs.PrintDefaults()
		return exitOK
	default:
		fmt.Fprintf(stderr, "parselbox: unknown command %q\n", args[0])
		usage(stderr)
		return exitUsage
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage:
  parselbox [flags]             serve MCP: one tool, execute_code, over stdio (the default)
                                or streamable HTTP (--transport http, at /mcp)
  parselbox exec [flags] CODE   run Python CODE (- reads it from stdin) in a fresh sandbox;
                                prints {output, stdout, stderr, error, files} as JSON
  parselbox repl [flags]        an interactive Python session in one sandbox, kept across
                                inputs (:help in it; Ctrl-C interrupts, Ctrl-D exits)
  parselbox check [flags] [FILE]
                                check a configuration (and the flags over it) and resolve
                                its plugins with their sha256; starts nothing; exit 0 or 2
  parselbox plugins [--config FILE]
                                list the bridge plugins found, with their sha256 (and the
                                configuration's bridges)
  parselbox doctor [flags]      which kernel layers confine the sandbox here, and why any does not
  parselbox packages fetch [--index URL] [--dir DIR] NAMES...
                                download Python packages with their dependencies into DIR, a
                                Pyodide index to use as package_index on a host without the internet
  parselbox version             print the versions: parselbox, its module and commit, Go, and
                                the runtime's Deno, Pyodide and just-bash
  parselbox completion SHELL    print a completion script for bash, zsh or fish

Run 'parselbox -h' or 'parselbox exec -h' for the flags.
`)
}

func isHelp(arg string) bool { return arg == "-h" || arg == "--help" || arg == "-help" }

func isVersion(arg string) bool { return arg == "--version" || arg == "-version" }

// newLogger writes to stderr: stdout is for results (and, later, MCP).
func newLogger(w io.Writer, verbose bool) hclog.Logger {
	level := hclog.Warn
	if verbose {
		level = hclog.Debug
	}
	if l, _ := envLogLevel(); l != hclog.NoLevel {
		level = l
	}
	return hclog.New(&hclog.LoggerOptions{Name: "parselbox", Level: level, Output: inert{w}})
}

// inert writes what it is given with its control characters shown as
// escapes (\x1b, \u009b), newlines and tabs apart: hclog writes the lines of
// a value that holds a newline as they are, and a value may be the
// guest's (a tool's path, a package name), whose escape sequences must not
// reach the terminal of whoever reads the log (to set its title, write
// its clipboard, or hide lines).
type inert struct{ w io.Writer }

func (t inert) Write(p []byte) (int, error) {
	if utf8.Valid(p) && !bytes.ContainsFunc(p, isControl) {
		return t.w.Write(p)
	}
	var b strings.Builder
	for _, r := range string(p) { // (a byte that is not UTF-8 becomes U+FFFD)
		switch {
		case !isControl(r):
			b.WriteRune(r)
		case r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	if _, err := io.WriteString(t.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// isControl says r is a control character other than a newline or a tab.
func isControl(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }

// notifier writes what a person waiting should hear (host.Config.Notify)
// to stderr, one line each: stdout is for results and MCP.
func notifier(stderr io.Writer) func(string) {
	var mu sync.Mutex
	return func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(stderr, "parselbox:", msg)
	}
}

// logLevelEnv sets the level of the logs on stderr.
const logLevelEnv = "PARSELBOX_LOG_LEVEL"

// envLogLevel is the level $PARSELBOX_LOG_LEVEL sets, hclog.NoLevel when
// it is unset or empty, and an error when it names no level.
func envLogLevel() (hclog.Level, error) {
	s := os.Getenv(logLevelEnv)
	if strings.TrimSpace(s) == "" {
		return hclog.NoLevel, nil
	}
	if l := hclog.LevelFromString(s); l != hclog.NoLevel {
		return l, nil
	}
	return hclog.NoLevel, fmt.Errorf("$%s: must be trace, debug, info, warn, error or off, got %q", logLevelEnv, s)
}

// usageError marks errors that are the user's input.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func isUsage(err error) bool {
	var u usageError
	return errors.As(err, &u)
}
