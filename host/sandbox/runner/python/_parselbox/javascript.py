"""JavaScript from Python: js(code, **kwargs) and require(name, alias=None),
builtins of every session. The JS half is features/js.ts (module _pbx_jsrt,
imported only inside functions: nothing here may hold a JS object at
snapshot time).

Conversions (PARSELBOX-BEHAVIOUR.md §19): into JS, dict → plain object,
list/tuple → array, bytes → Uint8Array, a callable → a JS function (released
after the call), a JsProxy of ours → the object it holds. Out of js(): a JSON
round trip, bytes kept. Out of a require()d module: primitives and plain data
as Python values, bytes as bytes, class instances, classes and other objects
as JsProxy objects that keep their methods; functions as Python callables.
"""

import builtins
import json
import os
import re

from pyodide.ffi import JsException, create_proxy, to_js

from . import MAIN, on_configure
from .hostcall import _decode_bytes, host_call, run_sync

_isinstance, _callable, _type, _str = isinstance, callable, type, str
_VALUE, _JSONTEXT, _BYTES, _PROXY, _CLASS, _FUNCTION = range(6)
_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


def _rt():
    import _pbx_jsrt

    return _pbx_jsrt


def _object_fromentries(entries):
    from js import Object

    return Object.fromEntries(entries)


class _Call:
    """The proxies one call creates, released when it ends."""

    def __init__(self, convert_callbacks):
        from js import Array

        self.proxies = Array.new()
        self.convert_callbacks = convert_callbacks
        self.error = None  # what a callback raised, raised again by the call

    def arg(self, v, depth=0):
        """v ready for to_js: callables proxied, our proxies unwrapped."""
        if depth > 200:
            raise ValueError("the value is nested too deeply to pass to JavaScript")
        if _isinstance(v, JsProxy):
            return object.__getattribute__(v, "_pbx_obj")
        if _type(v) is dict:
            return {k: self.arg(x, depth + 1) for k, x in v.items()}
        if _type(v) in (list, tuple):
            return [self.arg(x, depth + 1) for x in v]
        if _callable(v) and not _isinstance(v, type) and not hasattr(v, "_prevent_proxy"):
            p = create_proxy(self._callback(v))
            self.proxies.push(p)
            return p
        return v

    def to_js(self, v):
        v = self.arg(v)
        if v is None or _type(v) in (bool, int, float, _str):
            return v
        return to_js(v, dict_converter=_object_fromentries, pyproxies=self.proxies)

    def _callback(self, f):
        convert = self.convert_callbacks

        def callback(*args):
            if convert:
                args = [_from_js(a, False) for a in args]
            try:
                r = f(*args)
            except BaseException as e:
                self.error = e
                raise
            return _to_plain_js(r) if convert else r

        return callback

    def reraise(self, e):
        """Raises what a callback raised, if e is that error coming back."""
        if self.error is not None:
            raise self.error from None
        raise e

    def release(self):
        for p in self.proxies:
            try:
                p.destroy()
            except Exception:
                pass
        self.proxies.length = 0


def _to_plain_js(v):
    # A callback's result: converted, its proxies left alive (JS may keep it).
    c = _Call(True)
    return c.to_js(v)


class _Keep:
    """Callback proxies that a JS object may still call (a lazy chain such as
    lodash's _(xs).map(f).value()): released when no proxy of the objects
    made with them remains."""

    __slots__ = ("proxies",)

    def __init__(self, proxies):
        self.proxies = proxies

    def __del__(self):
        try:
            for p in self.proxies:
                p.destroy()
        except Exception:
            pass


def _from_js(v, attr, this=None, keep=()):
    """A JS value as Python sees it (see the module's doc)."""
    kind, value = _rt().classify(v, attr)
    return _wrap(kind, value, this, keep)


def _wrap(kind, value, this=None, keep=()):
    if kind == _VALUE:
        return value
    if kind == _JSONTEXT:
        return _decode_bytes(json.loads(value))
    if kind == _BYTES:
        return value.to_bytes()
    if kind == _FUNCTION:
        return _function(value, this, keep)
    if kind == _CLASS:
        return JsProxy(value, None, keep)  # a constructor or a plain function, never a method
    return JsProxy(value, this, keep)


def _unwrap_answer(answer):
    if answer[0] == 2:
        raise KeyboardInterrupt
    return answer[1]


def _call(fn, this, args, kwargs, keep=()):
    c = _Call(True)
    kept = False
    try:
        jsargs = [c.to_js(a) for a in args]
        if kwargs:
            jsargs.append(c.to_js(dict(kwargs)))
        try:
            promise, r = _rt().call(fn, this, to_js(jsargs))
            if promise:
                r = _unwrap_answer(run_sync(_rt().wait(r)))
        except JsException as e:
            c.reraise(e)
        kind, value = _rt().classify(r, False)
        if kind in (_PROXY, _CLASS, _FUNCTION) and c.proxies.length:
            keep = keep + (_Keep(c.proxies),)
            kept = True
        return _wrap(kind, value, None, keep)
    finally:
        if not kept:
            c.release()


def _function(fn, this, keep=()):
    def function(*args, **kwargs):
        return _call(fn, this, args, kwargs, keep)

    try:
        function.__name__ = str(fn.name) or "function"
    except Exception:
        pass
    function.__doc__ = f"JavaScript function {function.__name__}(): arguments and result converted."
    return function


class JsProxy:
    """A JavaScript object, class or module seen from Python: attributes and
    methods reach the JS object (a Promise is awaited), class instances stay
    proxies with their methods, plain data comes back as dict and list, and
    calling a class constructs it (new is added when needed)."""

    __slots__ = ("_pbx_obj", "_pbx_this", "_pbx_keep")

    def __init__(self, obj, this=None, keep=()):
        object.__setattr__(self, "_pbx_obj", obj)
        object.__setattr__(self, "_pbx_this", this)
        object.__setattr__(self, "_pbx_keep", keep)

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        obj = object.__getattribute__(self, "_pbx_obj")
        kind, value = _rt().get(obj, name)
        if kind == _VALUE and value is None and not _rt().has(obj, name):
            raise AttributeError(f"JavaScript object has no attribute '{name}'")
        return _wrap(kind, value, obj, object.__getattribute__(self, "_pbx_keep"))

    def __getitem__(self, key):
        obj = object.__getattribute__(self, "_pbx_obj")
        kind, value = _rt().get(obj, key)
        return _wrap(kind, value, obj)

    def __setattr__(self, name, value):
        c = _Call(False)
        _rt().set(object.__getattribute__(self, "_pbx_obj"), name, c.to_js(value))

    def __call__(self, *args, **kwargs):
        get = object.__getattribute__
        return _call(get(self, "_pbx_obj"), get(self, "_pbx_this"), args, kwargs, get(self, "_pbx_keep"))

    def __dir__(self):
        return list(_rt().keys(object.__getattribute__(self, "_pbx_obj")))

    def __repr__(self):
        return str(_rt().repr(object.__getattribute__(self, "_pbx_obj")))

    def __json__(self):
        text = _rt().json(object.__getattribute__(self, "_pbx_obj"))
        return None if text is None else _decode_bytes(json.loads(text))


JsProxy.__name__ = JsProxy.__qualname__ = "ParselboxJsProxy"


def js(code, **kwargs):
    """js(code, **kwargs): runs code as the body of a fresh async JavaScript
    function (use return; await works; nothing persists between calls) and
    returns its result as Python data (bytes for typed arrays). In scope:
    resolvePath(p) (a sandbox path's host path, for Deno's file APIs),
    sbx.progress(done, total, message) (as in Python), each
    require()d module by its alias, and the keyword arguments (dict → object,
    list → array, bytes → Uint8Array, functions callable from JS). JS has the
    same files and network rules as Python, and no environment or processes."""
    if not _isinstance(code, _str):
        raise TypeError(f"js() takes the code as a str, not {type(code).__name__}")
    for name in kwargs:
        if not _IDENT.match(name):
            raise ValueError(f"js(): {name!r} is not a JavaScript identifier")
    c = _Call(False)
    try:
        values = [c.to_js(v) for v in kwargs.values()]
        try:
            answer = run_sync(_rt().run(code, to_js(list(kwargs)), to_js(values)))
        except JsException as e:
            c.reraise(e)
        text = _unwrap_answer(answer)
        return None if text is None else _decode_bytes(json.loads(text))
    finally:
        c.release()


def _alias(name):
    """The alias of a module name (§19.3): the name if it is an identifier,
    else camelCase of the file stem or the package name without its scope."""
    if _IDENT.match(name) and "$" not in name:
        return name
    base = name
    if base.startswith((".", "/")):
        base = os.path.basename(base)
        for ext in (".d.ts", ".tsx", ".ts", ".mjs", ".cjs", ".jsx", ".js", ".wasm"):
            if base.endswith(ext) and len(base) > len(ext):
                base = base[: -len(ext)]
                break
    else:
        if base.startswith("npm:"):
            base = base[4:]
        if base.startswith("@") and "/" in base:
            base = base.split("/", 1)[1]
        base = _version_split(base)[0] if "@" in base else base
    parts = [p for p in re.split(r"[^A-Za-z0-9]+", base) if p]
    if not parts:
        raise ValueError(f"Could not derive alias from {name!r}. Provide alias= (a JavaScript identifier).")
    alias = parts[0].lower() + "".join(p[:1].upper() + p[1:].lower() for p in parts[1:])
    if alias[0].isdigit():
        raise ValueError(f"Could not derive alias from {name!r}. Provide alias= (a JavaScript identifier).")
    return alias


def _version_split(spec):
    """("name", "version") of "name[@version]" (a leading "@" is the scope's)."""
    at = spec.rfind("@")
    if at > 0:
        return spec[:at], spec[at + 1 :]
    return spec, ""


_modules = {}


def require(name, alias=None):
    """require(name, alias=None): loads a JavaScript module and returns it as
    a proxy (its functions callable from Python, its classes constructible).
    Local files start with "." or "/" (.js, .mjs or .ts, compiled by Deno and
    re-imported on every call, so edits are picked up; .wasm: a library's
    exports, or a WASI command as a callable); anything else is an
    npm package ("lodash", "@scope/pkg"), installed by the host: declared in
    packages (packages = ["npm:lodash@4.17.21"]), or installed on request when
    allow_runtime_packages is on. The module is also in js()'s scope under
    its alias (the name if it is an identifier, else camelCase:
    js-yaml → jsYaml, ./my-utils.ts → myUtils)."""
    if not _isinstance(name, _str) or not name:
        raise TypeError("require() takes the module's name as a non-empty str")
    if alias is not None and (not _isinstance(alias, _str) or not _IDENT.match(alias)):
        raise ValueError(f"require(): alias {alias!r} is not a JavaScript identifier")
    alias = alias or _alias(name)
    if name.startswith((".", "/")):
        path = name if name.startswith("/") else os.path.normpath(os.path.join(os.getcwd(), name))
        if name.endswith(".wasm"):
            from .wasm import WasiCommand, load_wasm

            mod = load_wasm(path)  # features/wasm.ts: compiled once per path and version
            if _isinstance(mod, WasiCommand):
                return mod  # a Python callable (not in js()'s scope)
            _rt().set_alias(alias, mod)
            return _from_js(mod, True)
        mod = run_sync(_rt().local(path))
    else:
        spec = name[4:] if name.startswith("npm:") else name
        pkg = _version_split(spec)[0] if not spec.startswith("@") or spec.count("@") > 1 else spec
        if pkg in _modules:
            mod = _modules[pkg]
        else:
            answer = run_sync(_rt().npm(pkg))
            if answer[0] == 1:
                # Not installed: the host installs it, if it may.
                host_call("npm.install", {"package": spec})
                answer = run_sync(_rt().npm(pkg))
                if answer[0] == 1:
                    raise ModuleNotFoundError(f"npm package {pkg!r} is still not found after the host installed it")
            mod = answer[1]
            _modules[pkg] = mod
    _rt().set_alias(alias, mod)
    return _from_js(mod, True)


@on_configure
def _install(config):
    _modules.clear()
    builtins.js = js
    builtins.require = require
    MAIN["ParselboxJsProxy"] = JsProxy
