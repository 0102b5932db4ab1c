package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parselbox/parselbox/internal/testenv"
)

func completionScript(t *testing.T, shell string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"completion", shell}, nil, &out, &errb); code != exitOK {
		t.Fatalf("completion %s: exit %d, %s", shell, code, errb.String())
	}
	return out.String()
}

// The bash script completes subcommands, each one's own flags, and paths
// after a flag that takes one; run by a real bash.
func TestCompletionBash(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		testenv.Missing(t, testenv.RequireEnv, "no bash")
	}
	script := filepath.Join(t.TempDir(), "parselbox.bash")
	os.WriteFile(script, []byte(completionScript(t, "bash")), 0o644)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "conf.hcl"), nil, 0o644)
	for words, want := range map[string]string{
		"parselbox ch":                          "check",
		"parselbox exec --tim":                  "--timeout",
		"parselbox --trans":                     "--transport",
		"parselbox exec --trans":                "", // a server flag, not exec's
		"parselbox doctor --js":                 "--json",
		"parselbox completion z":                "zsh",
		"parselbox check --config " + dir + "/": dir + "/conf.hcl",
	} {
		cmd := exec.Command("bash", "-c", `source "$1"; read -ra COMP_WORDS <<< "$2"; [[ $2 == *" " ]] && COMP_WORDS+=(""); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); _parselbox; echo "${COMPREPLY[*]}"`, "bash", script, words)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", words, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("%q completes to %q, want %q", words, got, want)
		}
	}
}

// zsh and fish get scripts their shells parse (when the shell is here),
// naming every subcommand; an unknown shell is a usage error.
func TestCompletionZshFish(t *testing.T) {
	t.Parallel()
	for shell, want := range map[string][]string{
		"zsh":  {"#compdef parselbox", "bashcompinit", "complete -F _parselbox parselbox"},
		"fish": {"complete -c parselbox -n __fish_use_subcommand -a exec", "complete -c parselbox -n '__fish_seen_subcommand_from exec' -l timeout -r -d 'timeout of one execution in seconds'", "-l config -r -F"},
	} {
		s := completionScript(t, shell)
		for _, w := range want {
			if !strings.Contains(s, w) {
				t.Errorf("%s script lacks %q", shell, w)
			}
		}
		if _, err := exec.LookPath(shell); err == nil {
			f := filepath.Join(t.TempDir(), "script")
			os.WriteFile(f, []byte(s), 0o644)
			if out, err := exec.Command(shell, "-n", f).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", shell, err, out)
			}
		}
	}
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"completion", "tcsh"}, nil, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), `unknown shell "tcsh"`) {
		t.Errorf("tcsh: exit %d, %s", code, errb.String())
	}
}

// requireShells makes the tests of the zsh and fish scripts fail, rather
// than skip, without zsh or fish (make test sets it when `make shells`
// installed them).
const requireShells = "PARSELBOX_REQUIRE_SHELLS"

// The zsh script completes in a real interactive zsh (compinit, a
// pseudo-terminal, Tab): subcommands, a subcommand's flags, paths after
// --config. Each completed line is printed by zsh itself: Tab, then Ctrl-A
// and `print -r -- ` before it, then Enter.
func TestCompletionZsh(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("zsh"); err != nil {
		testenv.Missing(t, requireShells, "no zsh (make shells)")
	}
	home := t.TempDir()
	script := filepath.Join(home, "_parselbox")
	os.WriteFile(script, []byte(completionScript(t, "zsh")), 0o644)
	os.WriteFile(filepath.Join(home, "conf.hcl"), nil, 0o644)
	cmd := exec.Command("zsh", "-f", "-i")
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "TERM=xterm", "PATH=" + os.Getenv("PATH")}
	tm := startTerminal(t, cmd)
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// (The prompt is written as two strings, so that the echo of this line
	// is not taken for it.)
	tm.send("PS1='READY''> '; autoload -U compinit && compinit -u -D && source " + script + "\r")
	tm.expect("READY> ")
	for _, tc := range []struct{ typed, want string }{
		{"parselbox ch", "parselbox check"},
		{"parselbox exec --tim", "parselbox exec --timeout"},
		{"parselbox doctor --js", "parselbox doctor --json"},
		{"parselbox completion f", "parselbox completion fish"},
		{"parselbox check --config con", "parselbox check --config conf.hcl"},
	} {
		tm.send(tc.typed + "\t\x01print -r -- \r")
		tm.expect("\n" + tc.want)
		tm.expect("READY> ")
	}
	if out := tm.output(); strings.Contains(out, "_parselbox:") {
		t.Errorf("zsh reported an error in the script:\n%s", out)
	}
	tm.send("exit\r")
}

// The fish script completes in fish (complete -C, fish's own engine).
func TestCompletionFish(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("fish"); err != nil {
		testenv.Missing(t, requireShells, "no fish (make shells)")
	}
	home := t.TempDir()
	script := filepath.Join(home, "parselbox.fish")
	os.WriteFile(script, []byte(completionScript(t, "fish")), 0o644)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "conf.hcl"), nil, 0o644)
	for words, want := range map[string]string{
		"parselbox ch":                          "check",
		"parselbox exec --tim":                  "--timeout",
		"parselbox exec --trans":                "", // a server flag, not exec's
		"parselbox --trans":                     "--transport",
		"parselbox completion z":                "zsh",
		"parselbox check --config " + dir + "/": dir + "/conf.hcl",
	} {
		cmd := exec.Command("fish", "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", script, words)
		cmd.Env = []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home, "XDG_DATA_HOME=" + home, "PATH=" + os.Getenv("PATH")}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", words, err, out)
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if c, _, _ := strings.Cut(line, "\t"); c != "" {
				got = append(got, c)
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%q completes to %q, want %q", words, got, want)
		}
	}
}
