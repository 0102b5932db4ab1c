"""WebAssembly modules from the sandbox's files (features/wasm.ts).

load_wasm(path) is the entry that require("x.wasm") uses: a self-contained
library comes back as its exports (call them as methods:
load_wasm("add.wasm").add(20, 22) == 42); a WASI command as a WasiCommand,
a callable that runs it over the sandbox's files. Other modules raise
ImportError saying why. Modules are compiled once per path and recompiled
when the file changes.
"""

import json
import os

_isinstance = isinstance


def _js():
    import _pbx_wasm

    return _pbx_wasm


def _path(path):
    path = os.fspath(path)
    return os.path.normpath(path if path.startswith("/") else os.path.join(os.getcwd(), path))


class WasiCommand:
    """A WASI command: call it as name(args=None, stdin="", env=None,
    preopens=None, argv0=None)."""

    def __init__(self, name, path):
        self.__name__ = name
        self._path = path
        self.__doc__ = (
            f"WASI command '{name}' — runs sandboxed, in-process.\n\n"
            f"{name}(args=None, stdin='', env=None, preopens=None, argv0=None) -> "
            "{'exit': int, 'stdout': bytes, 'stderr': str, 'missing': [str]}\n"
            "  args: the arguments (argv[0] is argv0 or the name); stdin: str or bytes;\n"
            "  env: variables over HOME=/ and LANG=C.UTF-8; preopens: {guest_dir: sandbox_dir}\n"
            "  besides '/' (the sandbox's root) and '.' (/workspace). Files it writes are\n"
            "  reported; read-only mounts stay read-only. 'missing' names the WASI calls\n"
            "  it made that are not implemented."
        )

    def __call__(self, args=None, stdin="", env=None, preopens=None, argv0=None):
        if _isinstance(stdin, (bytes, bytearray, memoryview)):
            from pyodide.ffi import to_js

            stdin = to_js(bytes(stdin))
        elif stdin is None:
            stdin = ""
        elif not _isinstance(stdin, str):
            raise TypeError(f"stdin must be str or bytes, not {type(stdin).__name__}")
        args = [str(a) for a in (args or [])]
        env = {str(k): str(v) for k, v in (env or {}).items()}
        preopens = {str(k): _path(v) for k, v in (preopens or {}).items()}
        answer = _js().run(self._path, json.dumps(args), stdin, json.dumps(env), json.dumps(preopens), argv0 or "")
        if answer[0] != 0:
            raise RuntimeError(answer[1])
        return {
            "exit": answer[1],
            "stdout": answer[2].to_bytes(),
            "stderr": answer[3],
            "missing": list(answer[4]),
        }

    def __repr__(self):
        return f"<WasiCommand {self.__name__} ({self._path})>"


def load_wasm(path):
    """The module at path (relative to the working directory): a library's
    exports, or a WasiCommand."""
    answer = _js().load(_path(path))
    if answer[0] != 0:
        raise ImportError(answer[1])
    if answer[1] == "library":
        return answer[4]
    return WasiCommand(answer[2], answer[3])
