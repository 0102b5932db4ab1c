package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// command is a subcommand as completion knows it: its name, a summary,
// and its flags (the FlagSet its run function parses).
type command struct {
	name, summary string
	flags         func(fs *pflag.FlagSet)
}

// commands are the subcommands; "" is the root command (the MCP server).
func commands() []command {
	return []command{
		{"", "serve MCP over stdio or streamable HTTP", func(fs *pflag.FlagSet) { newServeFlags(fs) }},
		{"exec", "run Python code in a fresh sandbox, print the result as JSON", func(fs *pflag.FlagSet) { newSandboxFlags(fs) }},
		{"repl", "an interactive Python session in one sandbox", func(fs *pflag.FlagSet) { newSandboxFlags(fs) }},
		{"check", "check a configuration and resolve its plugins; start nothing", func(fs *pflag.FlagSet) { newServeFlags(fs) }},
		{"plugins", "list the bridge plugins found, with their sha256", func(fs *pflag.FlagSet) { newPluginsFlags(fs) }},
		{"doctor", "which kernel layers confine the sandbox here", func(fs *pflag.FlagSet) { newDoctorFlags(fs) }},
		{"version", "print the versions of parselbox and its runtime", func(fs *pflag.FlagSet) { newVersionFlags(fs) }},
		{"completion", "print a shell completion script: bash, zsh or fish", func(*pflag.FlagSet) {}},
		{"help", "print the usage", func(*pflag.FlagSet) {}},
	}
}

// flagInfo is one flag of a command.
type flagInfo struct {
	long, short, usage string
	path               bool // its value is a file or directory
	takesValue         bool
}

func (c command) flagInfos() []flagInfo {
	fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	c.flags(fs)
	var out []flagInfo
	fs.VisitAll(func(f *pflag.Flag) {
		varname, usage := pflag.UnquoteUsage(f)
		usage, _, _ = strings.Cut(usage, " (")
		out = append(out, flagInfo{
			long: f.Name, short: f.Shorthand, usage: usage,
			path:       varname == "file" || varname == "dir" || strings.HasSuffix(varname, "dir"),
			takesValue: f.Value.Type() != "bool",
		})
	})
	return out
}

// runCompletion prints the completion script of a shell.
func runCompletion(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || isHelp(args[0]) {
		fmt.Fprint(stderr, `Usage: parselbox completion bash|zsh|fish

Prints a completion script of the subcommands and their flags. To install it:
  bash: parselbox completion bash > ~/.local/share/bash-completion/completions/parselbox
  zsh:  parselbox completion zsh > "${fpath[1]}/_parselbox"   (or: source <(parselbox completion zsh))
  fish: parselbox completion fish > ~/.config/fish/completions/parselbox.fish
`)
		if len(args) == 1 {
			return exitOK
		}
		return exitUsage
	}
	switch args[0] {
	case "bash":
		fmt.Fprint(stdout, bashCompletion())
	case "zsh":
		fmt.Fprint(stdout, "#compdef parselbox\n# zsh completion of parselbox, through zsh's bash completion layer.\n"+
			"autoload -U +X bashcompinit && bashcompinit\n"+bashCompletion())
	case "fish":
		fmt.Fprint(stdout, fishCompletion())
	default:
		fmt.Fprintf(stderr, "parselbox completion: unknown shell %q (bash, zsh or fish)\n", args[0])
		return exitUsage
	}
	return exitOK
}

func bashCompletion() string {
	var b strings.Builder
	var names, pathFlags []string
	for _, c := range commands() {
		if c.name != "" {
			names = append(names, c.name)
		}
		for _, f := range c.flagInfos() {
			if f.path && !slices.Contains(pathFlags, "--"+f.long) {
				pathFlags = append(pathFlags, "--"+f.long)
			}
		}
	}
	b.WriteString("# bash completion of parselbox (parselbox completion bash)\n_parselbox() {\n")
	b.WriteString("  local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"${COMP_WORDS[COMP_CWORD-1]}\" cmd=\"\" w\n")
	// $((...)), not a bare COMP_CWORD-1: zsh's bash layer runs this same
	// function, and zsh reads ":C..." in a parameter expansion as a modifier.
	fmt.Fprintf(&b, "  for w in \"${COMP_WORDS[@]:1:$((COMP_CWORD-1))}\"; do\n    case \"$w\" in %s) cmd=\"$w\"; break;; esac\n  done\n", strings.Join(names, "|"))
	fmt.Fprintf(&b, "  case \"$prev\" in\n    %s) COMPREPLY=($(compgen -f -- \"$cur\")); return;;\n  esac\n", strings.Join(pathFlags, "|"))
	b.WriteString("  if [[ $cmd == completion ]]; then COMPREPLY=($(compgen -W \"bash zsh fish\" -- \"$cur\")); return; fi\n")
	b.WriteString("  local flags\n  case \"$cmd\" in\n")
	for _, c := range commands() {
		var fl []string
		for _, f := range c.flagInfos() {
			fl = append(fl, "--"+f.long)
			if f.short != "" {
				fl = append(fl, "-"+f.short)
			}
		}
		label := c.name
		if label == "" {
			label = `""`
		}
		fmt.Fprintf(&b, "    %s) flags=%q;;\n", label, strings.Join(fl, " "))
	}
	b.WriteString("  esac\n")
	fmt.Fprintf(&b, "  if [[ -z $cmd && $cur != -* ]]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi\n", strings.Join(names, " "))
	b.WriteString("  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\")); return; fi\n")
	b.WriteString("  COMPREPLY=($(compgen -f -- \"$cur\"))\n}\ncomplete -F _parselbox parselbox\n")
	return b.String()
}

func fishCompletion() string {
	var b strings.Builder
	b.WriteString("# fish completion of parselbox (parselbox completion fish)\ncomplete -c parselbox -f\n")
	var names []string
	for _, c := range commands() {
		if c.name != "" {
			names = append(names, c.name)
		}
	}
	for _, c := range commands() {
		cond := "__fish_use_subcommand"
		if c.name != "" {
			fmt.Fprintf(&b, "complete -c parselbox -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
			cond = "__fish_seen_subcommand_from " + c.name
		}
		for _, f := range c.flagInfos() {
			line := fmt.Sprintf("complete -c parselbox -n %s -l %s", fishQuote(cond), f.long)
			if f.short != "" {
				line += " -s " + f.short
			}
			if f.takesValue {
				line += " -r"
			}
			if f.path {
				line += " -F"
			}
			b.WriteString(line + " -d " + fishQuote(f.usage) + "\n")
		}
	}
	b.WriteString("complete -c parselbox -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'\n")
	return b.String()
}

// fishQuote quotes s for fish, in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
