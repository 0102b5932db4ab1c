package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/pflag"

	"github.com/parselbox/parselbox/host"
	"github.com/parselbox/parselbox/host/sandbox"
)

// Prompts of the REPL, as Python's.
const (
	promptFirst = ">>> "
	promptMore  = "... "
)

// replHelp is what :help prints.
const replHelp = `Python in a Parselbox sandbox; its state is kept across inputs.
  A block (a line ending in ":") ends with an empty line. Results are shown as JSON.
  :files   the files in /workspace
  :info    sbx.info(): namespaces, mounts, network, limits
  :reset   a fresh sandbox (all state is lost)
  :help    this text
  Ctrl-C interrupts running code (or drops the input typed so far); Ctrl-D exits.
`

// runRepl is `parselbox repl`: one sandbox kept across inputs, for a person
// at a terminal. The terminal edits lines (cooked mode); Ctrl-C is SIGINT.
func runRepl(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("parselbox repl", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: parselbox repl [flags]\n\nAn interactive Python session in one sandbox, kept across inputs (the same\nflags and configuration as exec). Type :help in it.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	flags := newSandboxFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(stderr, "parselbox repl:", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "parselbox repl: takes no arguments (flags only)")
		return exitUsage
	}
	file, err := flags.load()
	if err != nil {
		fmt.Fprintln(stderr, "parselbox repl:", err)
		return exitUsage
	}
	cfg := *file.Config
	cfg.Logger = newLogger(stderr, flags.verbose)
	cfg.Notify = notifier(stderr)

	// Ctrl-C interrupts the running code, not the REPL (main leaves
	// SIGINT to us).
	sigint := make(chan os.Signal, 1)
	signal.Notify(sigint, os.Interrupt)
	defer signal.Stop(sigint)

	sb, err := host.New(ctx, cfg)
	if err != nil {
		err = file.Locate(err)
		fmt.Fprintln(stderr, "parselbox repl:", err)
		if isConfigError(err) {
			return exitUsage
		}
		return exitInternal
	}
	defer func() { sb.Close() }()
	fmt.Fprintf(stdout, "Parselbox %s: Python in a sandbox. :help for help, Ctrl-D to exit.\n", version)

	lines := make(chan string)
	go func() {
		defer close(lines)
		r := bufio.NewReader(stdin)
		for {
			line, err := r.ReadString('\n')
			if line != "" || err == nil {
				lines <- strings.TrimRight(line, "\r\n")
			}
			if err != nil {
				return
			}
		}
	}()

	r := repl{ctx: ctx, sb: &sb, cfg: cfg, sigint: sigint, stdout: stdout, stderr: stderr}
	var buf []string
	for {
		if len(buf) == 0 {
			fmt.Fprint(stdout, promptFirst)
		} else {
			fmt.Fprint(stdout, promptMore)
		}
		var line string
		select {
		case l, ok := <-lines:
			if !ok { // Ctrl-D (or the end of the input)
				fmt.Fprintln(stdout)
				return exitOK
			}
			line = l
		case <-sigint:
			fmt.Fprintln(stdout, "\nKeyboardInterrupt")
			buf = nil
			continue
		case <-ctx.Done():
			fmt.Fprintln(stdout)
			return exitOK
		}
		if len(buf) == 0 && strings.HasPrefix(strings.TrimSpace(line), ":") {
			if !r.command(strings.TrimSpace(line)) {
				return exitInternal
			}
			continue
		}
		if len(buf) == 0 && strings.TrimSpace(line) == "" {
			continue
		}
		buf = append(buf, line)
		src := strings.Join(buf, "\n")
		if incomplete(src) {
			continue
		}
		buf = nil
		if !r.run(src) {
			return exitInternal
		}
	}
}

// repl holds the session's sandbox.
type repl struct {
	ctx            context.Context
	sb             **host.Sandbox
	cfg            host.Config
	sigint         chan os.Signal
	stdout, stderr io.Writer
}

// execute runs code, interrupting it on Ctrl-C.
func (r *repl) execute(code string) (*host.Result, error) {
	type outcome struct {
		res *host.Result
		err error
	}
	done := make(chan outcome, 1)
	sb := *r.sb
	go func() {
		res, err := sb.Execute(r.ctx, code)
		done <- outcome{res, err}
	}()
	for {
		select {
		case o := <-done:
			return o.res, o.err
		case <-r.sigint:
			sb.Interrupt()
		}
	}
}

// run executes one input and shows what it gave; false when the host
// failed and the REPL cannot go on.
func (r *repl) run(code string) bool {
	res, err := r.execute(code)
	if err != nil {
		fmt.Fprintln(r.stderr, "parselbox repl:", err)
		return r.ctx.Err() == nil && !errors.Is(err, sandbox.ErrClosed)
	}
	io.WriteString(r.stdout, res.Stdout)
	io.WriteString(r.stderr, res.Stderr)
	if res.Error != nil {
		if tb := strings.TrimSpace(res.Error.Traceback); tb != "" {
			fmt.Fprintln(r.stderr, tb)
		} else {
			fmt.Fprintf(r.stderr, "%s: %s\n", res.Error.Type, res.Error.Message)
		}
		return true
	}
	if len(res.Output) > 0 && string(res.Output) != "null" {
		fmt.Fprintln(r.stdout, pretty(res.Output))
	}
	if len(res.Files) > 0 {
		fmt.Fprintf(r.stdout, "(wrote %s)\n", strings.Join(res.Files, ", "))
	}
	return true
}

// pretty indents a JSON value for reading.
func pretty(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// command runs a :command; false when the REPL cannot go on.
func (r *repl) command(cmd string) bool {
	switch cmd {
	case ":help", ":h", ":?":
		fmt.Fprint(r.stdout, replHelp)
	case ":files":
		res, err := r.execute(`sorted(__p for __p in __import__("glob").glob("/workspace/**", recursive=True) if __import__("os").path.isfile(__p))`)
		if err != nil {
			fmt.Fprintln(r.stderr, "parselbox repl:", err)
			return r.ctx.Err() == nil
		}
		var files []string
		_ = json.Unmarshal(res.Output, &files)
		if len(files) == 0 {
			fmt.Fprintln(r.stdout, "(no files in /workspace)")
		}
		for _, f := range files {
			fmt.Fprintln(r.stdout, f)
		}
	case ":info":
		res, err := r.execute("sbx.info()")
		if err != nil {
			fmt.Fprintln(r.stderr, "parselbox repl:", err)
			return r.ctx.Err() == nil
		}
		fmt.Fprintln(r.stdout, pretty(res.Output))
	case ":reset":
		(*r.sb).Close()
		sb, err := host.New(r.ctx, r.cfg)
		if err != nil {
			fmt.Fprintln(r.stderr, "parselbox repl: starting a fresh sandbox:", err)
			return false
		}
		*r.sb = sb
		fmt.Fprintln(r.stdout, "(a fresh sandbox: all state was reset)")
	default:
		fmt.Fprintf(r.stdout, "unknown command %s: :files, :info, :reset or :help\n", cmd)
	}
	return true
}

// incomplete reports whether src needs more lines, as Python's own REPL
// decides it: an open bracket, string or triple-quoted string, a trailing
// backslash, or a block (a compound statement, or a line ending in ":")
// not yet closed by an empty line.
func incomplete(src string) bool {
	depth := 0
	var quote string // the open string's delimiter
	block := false
	lines := strings.Split(src, "\n")
	for _, line := range lines {
		code := []rune(line)
		last := rune(0)
		for i := 0; i < len(code); i++ {
			c := code[i]
			if quote != "" {
				switch {
				case c == '\\':
					i++
				case strings.HasPrefix(string(code[i:]), quote):
					i += len(quote) - 1
					quote = ""
				}
				continue
			}
			switch c {
			case '#':
				i = len(code)
				continue
			case '"', '\'':
				q := string(c)
				if strings.HasPrefix(string(code[i:]), strings.Repeat(q, 3)) {
					q = strings.Repeat(q, 3)
				}
				quote = q
				i += len(q) - 1
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth--
			}
			if c != ' ' && c != '\t' {
				last = c
			}
		}
		if quote != "" && len(quote) == 1 {
			quote = "" // a one-quote string does not go past its line (SyntaxError: Python says so)
		}
		if last == ':' && depth == 0 {
			block = true
		}
	}
	first := strings.Fields(lines[0])
	if len(first) > 0 && compound[strings.TrimRight(first[0], ":")] {
		block = true // `for x in y: f(x)` too, as in Python's REPL
	}
	switch {
	case quote != "" || depth > 0:
		return true
	case strings.HasSuffix(strings.TrimRight(src, " \t"), "\\"):
		return true
	case block:
		return strings.TrimSpace(lines[len(lines)-1]) != ""
	}
	return false
}

// compound are the keywords that start a compound statement.
var compound = map[string]bool{
	"if": true, "for": true, "while": true, "def": true, "class": true, "with": true, "try": true,
	"async": true, "match": true,
}
