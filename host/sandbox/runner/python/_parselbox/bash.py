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
    """bash(command) runs a shell command line in the sandbox and returns its
    stdout (str). Pipes, redirections, loops, functions, globs and the usual
    tools (ls, cat, grep, sed, awk, jq, sort, find, curl ...) are there; each
    call is a fresh shell in /workspace (cd, variables and functions do not
    persist; files do). A non-zero exit with something on stderr raises
    RuntimeError("bash exit N: <stderr>"). WASI programs in a mount's bin/
    (bin/NAME.wasm) are commands too."""
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
