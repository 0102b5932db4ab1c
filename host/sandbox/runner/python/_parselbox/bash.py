"""bash(command): a shell over the sandbox's files (features/bash.ts).

The shell is just-bash, emulated in JS in the sandbox process: no process
is started. It sees /workspace, /files and the mounts as Python does (what
one writes, the other reads at once), starts in /workspace with Python's
os.environ, and keeps nothing between calls but the files.
"""

import builtins
import json
import os

from . import MAIN, on_configure
from .hostcall import run_sync


def bash(command):
    """bash(command: str) -> str

    Runs a shell command line over the sandbox's files and returns its stdout.
    The shell is just-bash, emulated in the sandbox: pipes, redirections,
    loops, functions, globs and the usual tools (ls, cat, grep, sed, awk, jq,
    sort, find, curl ...); no processes are started, and there is no process
    substitution (<(...)).
    - It sees the same files as Python (/workspace, /files, /mnt/* with their
      read-only or read/write modes; what one writes the other reads at once),
      starts in /workspace and has Python's os.environ.
    - Each call is a fresh shell: cd, variables and functions do not persist;
      files do.
    - A non-zero exit with something on stderr raises
      RuntimeError("bash exit N: <stderr>"); otherwise stdout is returned.
    - curl follows the sandbox's network rules.
    - Limits per call: 50 000 commands and loop iterations, call depth 100;
      the execution's timeout ends it.
    - A WASI program in a directory's bin/ (/workspace/bin/tool.wasm, or a
      mount's bin/) is the command tool, usable in pipelines."""
    import _pbx_bash

    if not isinstance(command, str):
        raise TypeError(f"bash() takes a command line (str), not {type(command).__name__}")
    answer = run_sync(_pbx_bash.run(command, json.dumps(dict(os.environ))))
    if answer[0] == 2:
        raise KeyboardInterrupt
    _, stdout, stderr, code = answer
    if code != 0 and stderr.strip():
        raise RuntimeError(f"bash exit {code}: {stderr.strip()}")
    return stdout


@on_configure
def _install(config):
    builtins.bash = bash
    MAIN["bash"] = bash
