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
