"""No processes: the os functions that would start one raise OSError (ENOSYS)
instead of reaching the runtime, which cannot run them (os.system fails
fatally there). Deno's --deny-run refuses them underneath in any case."""

import errno
import os
import posix

_NAMES = (
    "system", "popen", "fork", "forkpty", "vfork", "posix_spawn", "posix_spawnp",
    "execv", "execve", "execl", "execle", "execlp", "execlpe", "execvp", "execvpe",
    "spawnl", "spawnle", "spawnlp", "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe",
)


def _refuse(name):
    def refused(*args, **kwargs):
        raise OSError(errno.ENOSYS, f"{name}: processes cannot be started in the sandbox")

    refused.__name__ = name
    refused.__qualname__ = name
    return refused


def prepare():
    for name in _NAMES:
        for mod in (os, posix):
            setattr(mod, name, _refuse(f"os.{name}"))
    # subprocess refuses by itself with OSError (Pyodide patches it).
