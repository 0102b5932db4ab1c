"""The packages the host installed (package packages on the host): each
an unpacked wheel in a read-only directory under /lib/packages, put on
sys.path at every start. The sandbox installs nothing itself and needs no
network for packages.

A ModuleNotFoundError for a top-level module says how the host would
install it."""

import ast
import importlib
import importlib.util
import os
import sys

from . import on_configure

ROOT = "/lib/packages"


class _State:
    runtime = False
    # micropip's index when the host names one: {"index_urls": [...],
    # "lock": {name: entry}} (httplibs applies it as micropip is imported)
    micropip = None
    libs = []  # the host's shared libraries' directories
    # Pyodide's own library path (/usr/lib and site-packages), from before
    # the session's environment replaced it.
    default_libs = ""


_state = _State()


def add_paths(paths):
    """Puts the host's unpacked wheels on sys.path (after what is there)."""
    for p in paths:
        p = str(p)
        if "/" in p or p.startswith("."):
            continue
        full = f"{ROOT}/{p}"
        if full not in sys.path:
            sys.path.append(full)
    importlib.invalidate_caches()


def add_libs(libs):
    """Puts the host's shared libraries' directories (under /lib/packages)
    on the dynamic loader's search path (LD_LIBRARY_PATH), after Pyodide's
    own (/usr/lib and site-packages): an extension module that needs one
    (a side module's needed library, as scipy needs libopenblas) finds it
    there, as Pyodide finds the libraries it installs in /usr/lib."""
    for p in libs:
        p = str(p)
        if p.startswith("/") or p.startswith(".") or ".." in p.split("/"):
            continue
        full = f"{ROOT}/{p}"
        if full not in _state.libs:
            _state.libs.append(full)
    if _state.libs:
        os.environ["LD_LIBRARY_PATH"] = library_path()


def library_path():
    """The dynamic loader's search path the host's shared libraries need
    ("" when there are none)."""
    if not _state.libs:
        return ""
    return ":".join([d for d in _state.default_libs.split(":") if d] + _state.libs)


def missing(code):
    """The top-level modules code imports that cannot be found (not loaded,
    not importable, not a file or directory of the working directory)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    out = []
    for name in sorted(names):
        if name in sys.modules or name in sys.builtin_module_names:
            continue
        if os.path.exists(name + ".py") or os.path.isdir(name):
            continue
        try:
            if importlib.util.find_spec(name) is not None:
                continue
        except Exception:
            continue
        out.append(name)
    return out


@on_configure
def _configure(config):
    packages = config.get("packages") or {}
    _state.runtime = bool(packages.get("runtime"))
    _state.micropip = packages.get("micropip")
    add_paths(packages.get("paths") or [])
    add_libs(packages.get("libs") or [])  # (session's start sets the variable)


def _holds_js(modules):
    """Whether modules keep a JS object (in their globals or their classes'
    attributes): the memory snapshot cannot hold one (micropip keeps
    Pyodide's loadPackage, for one)."""
    from pyodide.ffi import JsProxy

    for m in modules:
        if isinstance(m, JsProxy):
            return True
        for v in list(getattr(m, "__dict__", {}).values()):
            if isinstance(v, JsProxy):
                return True
            if isinstance(v, type) and v.__module__ == getattr(m, "__name__", None):
                if any(isinstance(a, JsProxy) for a in list(vars(v).values())):
                    return True
    return False


def preload(packages_json):
    """Before the snapshot: the host's packages on sys.path, and their
    modules imported. A module that fails to import, or that keeps a JS
    object (which the snapshot cannot hold), is reported on stderr and left
    out: it is imported when the code imports it."""
    import gc
    import json

    packages = json.loads(packages_json)
    add_paths(packages.get("paths") or [])
    for name in packages.get("preload") or []:
        before = set(sys.modules)
        try:
            importlib.import_module(name)
        except BaseException as e:
            print(f"preloading {name}: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        new = [sys.modules[n] for n in set(sys.modules) - before]
        so = sorted(n for n, m in ((n, sys.modules[n]) for n in set(sys.modules) - before)
                    if str(getattr(m, "__file__", "") or "").endswith(".so"))
        if so:
            # A dynamic library is loaded now: the snapshot (the heap only)
            # would hold its data without its code. The host leaves
            # compiled packages out of the preload; this one imports one.
            raise ImportError(
                f"preloading {name}: it imports compiled modules ({', '.join(so)}), "
                "which a memory snapshot cannot hold"
            )
        if _holds_js(new):
            for n in set(sys.modules) - before:
                del sys.modules[n]
            del new
            gc.collect()
            print(f"preloading {name}: not in the snapshot (it keeps a JS object); imported on first use", file=sys.stderr)


def hint(err, e):
    """err (an execution's error dict) with a hint on how the host installs
    the module a ModuleNotFoundError names."""
    if type(e) is not ModuleNotFoundError or not getattr(e, "name", None):
        return err
    name = e.name.split(".")[0]
    if _state.runtime:
        more = f" (allow_runtime_packages is on, but the host could not install {name!r}: see the host's log)"
    else:
        more = (
            f"; the host installs packages: add {name!r} to packages (--packages {name}), "
            "or set allow_runtime_packages (--allow-runtime-packages) to install what the code imports"
        )
    err["message"] = err["message"] + more
    return err


def prepare():
    from . import execute

    # importlib.invalidate_caches() (add_paths, at every start with packages)
    # imports importlib.metadata on its first call, ~230 ms: in the snapshot
    # it is paid once, at build.
    import importlib.metadata  # noqa: F401

    _state.default_libs = os.environ.get("LD_LIBRARY_PATH", "")
    error = execute.error
    execute.error = lambda e: hint(error(e), e)
