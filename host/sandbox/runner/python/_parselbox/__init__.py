"""The Python half of the Parselbox sandbox: package `_parselbox`.

The runner imports it once, before the memory snapshot is taken (prepare),
so no module here may keep a reference to a JavaScript object: the JS
helpers (module `_pbx_js`) are registered after every start and imported
only inside functions. After every start the runner calls configure() with
the host's configuration.

Each module is one concern; a module registers what it needs with
on_configure (run after every start) and may define prepare() (run once,
before the snapshot). A new feature adds a module here; prepare() finds it.
"""

import importlib
import pkgutil
import sys

MAIN = sys.modules["__main__"].__dict__
FILENAME = "scratchpad.py"
PACKAGE_DIR = "/lib/parselbox"

_configure_hooks = []


def on_configure(fn):
    """Registers fn(config) to run after every start, in import order."""
    _configure_hooks.append(fn)
    return fn


def python_version():
    return sys.version.split()[0]


def prepare():
    """Runs once, before the snapshot: imports every module of the package
    (in name order) and runs their prepare()."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        mod = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(mod, "prepare"):
            mod.prepare()
    if PACKAGE_DIR in sys.path:
        sys.path.remove(PACKAGE_DIR)


def configure(config):
    """Runs after every start with the host's configuration: a dict with
    env, globals and namespaces."""
    for hook in _configure_hooks:
        hook(config)
