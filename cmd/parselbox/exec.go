package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/config"
)

// execOutput is what `parselbox exec` prints.
type execOutput struct {
	Output json.RawMessage `json:"output"`
	Stdout string          `json:"stdout"`
	Stderr string          `json:"stderr"`
	Error  *host.Error     `json:"error"`
	Files  []string        `json:"files"`
}

func runExec(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("parselbox exec", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: parselbox exec [flags] CODE\n\nRuns CODE (- reads it from stdin) in a fresh sandbox and prints one JSON object\n{output, stdout, stderr, error, files}. Exit status: 0 success, 1 the code raised,\n2 bad usage or configuration, 3 the host failed.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	flags := newSandboxFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(stderr, "parselbox exec:", err)
		return exitUsage
	}
	code, err := oneArg(fs)
	if err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(stderr, "parselbox exec:", err)
		if errors.Is(err, errArgCount) {
			fs.Usage()
		}
		return exitUsage
	}
	if code == "-" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			fmt.Fprintln(stderr, "parselbox exec: reading stdin:", err)
			return exitUsage
		}
		code = string(b)
	}
	file, err := flags.load()
	if err != nil {
		fmt.Fprintln(stderr, "parselbox exec:", err)
		return exitUsage
	}
	cfg := file.Config
	cfg.Logger = newLogger(stderr, flags.verbose)
	cfg.Notify = notifier(stderr)

	sb, err := host.New(ctx, *cfg)
	if err != nil {
		err = file.Locate(err)
		fmt.Fprintln(stderr, "parselbox exec:", err)
		if isConfigError(err) {
			return exitUsage
		}
		return exitInternal
	}
	defer sb.Close()
	r, err := sb.Execute(ctx, code)
	if err != nil {
		fmt.Fprintln(stderr, "parselbox exec:", err)
		return exitInternal
	}
	out := execOutput{Output: r.Output, Stdout: r.Stdout, Stderr: r.Stderr, Error: r.Error, Files: r.Files}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return exitInternal
	}
	if r.Error != nil {
		return exitRaised
	}
	return exitOK
}

var errArgCount = errors.New("expected exactly one CODE argument (use - to read stdin)")

// oneArg is the one positional argument of fs, parsed with flags before it
// (CODE may start with "-", so the first argument that is not a flag is
// CODE) and after it (`exec 'x' --timeout 5`).
func oneArg(fs *pflag.FlagSet) (string, error) {
	if fs.NArg() == 0 {
		return "", errArgCount
	}
	code := fs.Arg(0)
	if rest := fs.Args()[1:]; len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return "", err
		}
		if fs.NArg() > 0 {
			return "", errArgCount
		}
	}
	return code, nil
}

// isConfigError tells configuration mistakes (exit 2) from host failures.
func isConfigError(err error) bool {
	var fileErr *config.Error
	var cfgErr *host.ConfigError
	return errors.As(err, &fileErr) || errors.As(err, &cfgErr) || isUsage(err)
}
