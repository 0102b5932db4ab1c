"""The session's start: environment, globals, working directory, and no
host path in what Python shows (sys.executable, the environment)."""

import base64
import json
import os
import posix
import re
import sys

from . import MAIN, on_configure


def prepare():
    """The globals every session starts with."""
    for name, mod in (("asyncio", __import__("asyncio")), ("json", json), ("os", os), ("sys", sys), ("re", re), ("base64", base64)):
        MAIN[name] = mod
    for p in ("/workspace", "/mnt"):
        if p not in sys.path:
            sys.path.insert(0, p)


@on_configure
def _start(config):
    env = {"HOME": "/workspace", "USER": "user"}
    env.update(config.get("env") or {})
    from . import packages

    if packages.library_path():  # the host's packages have shared libraries
        env.setdefault("LD_LIBRARY_PATH", packages.library_path())
    os.environ.clear()
    os.environ.update(env)
    # posix.environ is the environment as it was when the interpreter
    # started (os.environ is built from it): it must not show the runtime's.
    posix.environ.clear()
    posix.environ.update({k.encode(): v.encode() for k, v in env.items()})
    # The runtime's path, not an interpreter anyone can run.
    sys.executable = ""
    sys._base_executable = ""
    sys.argv = [""]
    sys.orig_argv = []
    for name, value in (config.get("globals") or {}).items():
        MAIN[name] = value
    os.chdir("/workspace")
    # The snapshot was taken before these directories existed: forget that.
    # (importlib.invalidate_caches() would do it too, for every finder.)
    for p in ("/workspace", "/mnt"):
        sys.path_importer_cache.pop(p, None)
