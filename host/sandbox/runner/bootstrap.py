"""The Python half of the Parselbox sandbox, loaded as module `_parselbox`.

This file runs once, before the memory snapshot is taken, so it must not keep
a reference to any JavaScript object: the JS helpers (module `_pbx_js`) are
registered by the runner after every start and imported here only inside
functions.
"""

import asyncio
import base64
import builtins
import datetime
import json
import linecache
import math
import os
import sys
import time
import traceback
import types

from pyodide.code import eval_code_async
from pyodide.ffi import JsException, run_sync

MAIN = sys.modules["__main__"].__dict__
FILENAME = "scratchpad.py"

# Frames from these files are runtime internals, trimmed from tracebacks.
_INTERNAL = ("/_pyodide/", "/pyodide/", "/asyncio/")


def _internal(filename):
    return filename == "<parselbox>" or any(s in filename for s in _INTERNAL)

# The builtins that user code may shadow; the serializer uses these.
_id, _isinstance, _repr, _str, _type, _hasattr = id, isinstance, repr, str, type, hasattr


class _State:
    current = None  # the asyncio task running the current execution
    interrupted = False


_state = _State()


def python_version():
    return sys.version.split()[0]


# ---------------------------------------------------------------------------
# Host calls


def _js():
    import _pbx_js

    return _pbx_js


def _is_interrupt(e):
    return _INTERRUPTED in _str(e)


_INTERRUPTED = "PBX_INTERRUPTED"


def _bytes_hook(d):
    """Decodes {"__b64__": ...} from the host into bytes."""
    if len(d) == 1 and "__b64__" in d and _isinstance(d["__b64__"], _str):
        try:
            return base64.b64decode(d["__b64__"])
        except Exception:
            return d
    return d


def _unwrap(envelope):
    reply = json.loads(envelope, object_hook=_bytes_hook)
    if reply["ok"]:
        return reply["result"]
    raise _exception(reply["error"]) from None


_EXCEPTIONS = {
    name: getattr(builtins, name)
    for name in dir(builtins)
    if _isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), Exception)
}


def _exception(err):
    """The Python exception for an error reply {type, message}."""
    if err.get("type") == "CancelledError":
        return asyncio.CancelledError(err.get("message", ""))
    cls = _EXCEPTIONS.get(err.get("type") or "", RuntimeError)
    return cls(err.get("message", ""))


def host_call(method, params):
    """Sends a request to the host and blocks (without blocking the event
    loop) until it answers. Needs a promising entry, which `run` provides."""
    try:
        envelope = run_sync(_js().request(method, json.dumps(params, default=_encode_arg), True))
    except JsException as e:
        if _is_interrupt(e):
            raise KeyboardInterrupt from None
        raise
    return _unwrap(envelope)


async def _await_reply(promise):
    try:
        envelope = await promise
    except JsException as e:
        if _is_interrupt(e):
            raise KeyboardInterrupt from None
        raise
    return _unwrap(envelope)


def _encode_arg(obj):
    """json.dumps fallback for tool arguments."""
    if _isinstance(obj, (bytes, bytearray, memoryview)):
        return {"__b64__": base64.b64encode(bytes(obj)).decode()}
    if _hasattr(obj, "__json__"):
        return obj.__json__()
    if _isinstance(obj, (tuple, set, frozenset)):
        return list(obj)
    if _isinstance(obj, (datetime.date, datetime.datetime, datetime.time)):
        return obj.isoformat()
    return _repr(obj)


def _sleep(seconds):
    """time.sleep that an interrupt can cut short."""
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    try:
        run_sync(_js().sleep(seconds * 1000))
    except JsException as e:
        if _is_interrupt(e):
            raise KeyboardInterrupt from None
        raise


# ---------------------------------------------------------------------------
# Output


def to_json(value):
    """The JSON form of an execution's output (see ARCHITECTURE.md)."""
    return _walk(value, set())


def _walk(v, ancestors):
    if v is None or v is True or v is False or _type(v) in (int, _str):
        return v
    if _isinstance(v, bool):
        return bool(v)
    if _isinstance(v, int):
        return int(v)
    if _isinstance(v, float):
        return None if math.isnan(v) or math.isinf(v) else v
    if _isinstance(v, _str):
        return _str.__str__(v)
    if _isinstance(v, (bytes, bytearray, memoryview)):
        return {"__b64__": base64.b64encode(bytes(v)).decode()}
    if _isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    key = _id(v)
    if key in ancestors:
        return {"type": "circular_reference", "repr": _safe_repr(v)}
    if _hasattr(_type(v), "to_py") and _type(v).__module__ == "pyodide.ffi":
        try:
            v = v.to_py()
        except Exception:
            return {"type": "not_serializable", "repr": _safe_repr(v)}
        return _walk(v, ancestors)
    ancestors.add(key)
    try:
        if _isinstance(v, dict):
            return {_str(k): _walk(x, ancestors) for k, x in v.items()}
        if _isinstance(v, (list, tuple, set, frozenset)):
            return [_walk(x, ancestors) for x in v]
        if _hasattr(_type(v), "__json__"):
            return _walk(v.__json__(), ancestors)
    finally:
        ancestors.discard(key)
    return {"type": "not_serializable", "repr": _safe_repr(v)}


def _safe_repr(v):
    try:
        return _repr(v)
    except Exception as e:  # a broken __repr__ must not break the result
        return f"<{_type(v).__name__} object (repr failed: {e})>"


def _error(e):
    tb = e.__traceback__
    frames = []
    while tb is not None:
        if not _internal(tb.tb_frame.f_code.co_filename):
            frames.append(tb)
        tb = tb.tb_next
    # Re-link the kept frames into one chain.
    kept = None
    for f in reversed(frames):
        kept = types.TracebackType(kept, f.tb_frame, f.tb_lasti, f.tb_lineno)
    text = "".join(traceback.format_exception(_type(e), e, kept, chain=False))
    return {"type": _type(e).__name__, "message": _str(e), "traceback": text}


# ---------------------------------------------------------------------------
# Execution


async def _execute(code):
    try:
        value = await eval_code_async(code, MAIN, filename=FILENAME)
        return True, value
    except BaseException as e:  # KeyboardInterrupt and CancelledError included
        return False, e


async def run(code):
    """Runs one execution and returns {"output", "error"} as JSON text."""
    _state.interrupted = False
    linecache.cache[FILENAME] = (len(code), None, code.splitlines(True), FILENAME)
    task = asyncio.ensure_future(_execute(code))
    _state.current = task
    try:
        ok, value = await task
    except BaseException as e:  # the task itself was cancelled before it started
        ok, value = False, e
    finally:
        _state.current = None
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
    if ok:
        try:
            out = json.dumps({"output": to_json(value), "error": None}, allow_nan=False)
        except Exception as e:
            out = json.dumps({"output": None, "error": _error(e)})
        return out
    if _isinstance(value, asyncio.CancelledError) and _state.interrupted:
        value = KeyboardInterrupt()
    return json.dumps({"output": None, "error": _error(value)})


def interrupt():
    """Called by the runner when the host interrupts or the deadline passes."""
    task = _state.current
    if task is not None and not task.done():
        _state.interrupted = True
        task.cancel()


# ---------------------------------------------------------------------------
# Namespaces: the bridges' tools as Python objects


class Namespace:
    """A remote namespace: its methods execute on the host and return results.

    Call a tool as ns.tool(args) (it looks synchronous), or start it in the
    background with ns.tool.task(args), which returns a Task at once.
    """

    __slots__ = ("_pbx_path",)

    def __init__(self, path):
        object.__setattr__(self, "_pbx_path", path)

    def __getattr__(self, name):
        if name.startswith("_"):
            root = self._pbx_path.split(".", 1)[0]
            raise AttributeError(f"'{root}' object has no attribute '{name}'")
        if name == "task":
            return _Launcher(self._pbx_path)
        return Namespace(self._pbx_path + "." + name)

    def __setattr__(self, name, value):
        raise AttributeError(f"'{self._pbx_path}' is a remote namespace; its attributes are read-only")

    def __call__(self, *args, **kwargs):
        return host_call("call", {"path": self._pbx_path, "args": list(args), "kwargs": kwargs})

    def __dir__(self):
        return sorted(host_call("dir", {"path": self._pbx_path}))

    @property
    def __doc__(self):
        return _help_text(self._pbx_path)

    def __repr__(self):
        kind = "RemoteNamespace" if "." not in self._pbx_path else "RemoteTool"
        return f"<{kind}: {self._pbx_path}>"

    def __json__(self):
        return self._pbx_path


class _Launcher:
    """ns.tool.task(...): starts the call in the background."""

    __slots__ = ("_path",)

    def __init__(self, path):
        self._path = path

    def __call__(self, *args, **kwargs):
        return Task(self._path, list(args), kwargs)

    def __repr__(self):
        return f"<task launcher for {self._path}>"


_TASKS = {}


class TaskStatus(dict):
    """A snapshot of a Task: state (running, done, failed or cancelled),
    elapsed seconds, message (the last log line, or the state), logfile, and
    result or error when finished. Read it as a dict or by attribute."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def done(self):
        return self["state"] != "running"

    @property
    def ok(self):
        return self["state"] == "done"

    def __repr__(self):
        if self["state"] == "done":
            r = _repr(self.get("result"))
            return f"TaskStatus(done, {self['elapsed']}s, result={r[:80]})"
        return f"TaskStatus({self['state']}, {self['elapsed']}s, {self['message']})"


class Task:
    """A tool call running in the background, started by ns.tool.task(...).

    status()            state, elapsed, message (last log line), logfile
    await wait(timeout) wait up to timeout seconds (None: until done), return status()
    tail(n=5)           the last n lines of the task's log
    send(msg)           send a message into the running call
    cancel()            cancel the call; the bridge sees it
    result(), error()   the result when done, the error message when failed
    done()              whether it has finished
    await task          the result; raises the tool's exception on failure
    """

    def __init__(self, path, args, kwargs):
        root = path.split(".", 1)[0]
        self.id = f"{root}_{os.urandom(3).hex()}"
        self.name = path
        self.logfile = f"/workspace/.parselbox/tasks/{self.id}.log"
        self._started = time.monotonic()
        self._ended = None
        self._cancelled = False
        params = {"path": path, "args": args, "kwargs": kwargs, "task_id": self.id}
        # Send the request now, not when the event loop next runs, so that a
        # send() or cancel() right after it reaches the host after it.
        promise = _js().request("call", json.dumps(params, default=_encode_arg))
        self._future = asyncio.ensure_future(_await_reply(promise))
        self._future.add_done_callback(self._finished)
        _TASKS[self.id] = self

    def _finished(self, fut):
        self._ended = time.monotonic()
        _TASKS.pop(self.id, None)
        if not fut.cancelled():
            fut.exception()  # retrieved: no "never retrieved" warning

    def _state(self):
        if self._cancelled:
            return "cancelled"
        f = self._future
        if not f.done():
            return "running"
        if f.cancelled() or _isinstance(f.exception(), asyncio.CancelledError):
            return "cancelled"
        return "failed" if f.exception() is not None else "done"

    def done(self):
        return self._state() != "running"

    def result(self):
        return self._future.result() if self._state() == "done" else None

    def error(self):
        state = self._state()
        if state == "cancelled":
            return "cancelled"
        if state == "failed":
            return _str(self._future.exception())
        return None

    def tail(self, n=5):
        try:
            with open(self.logfile, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return ""
        return "\n".join(lines[-n:]) if n > 0 else ""

    def status(self):
        state = self._state()
        end = self._ended if self._ended is not None else time.monotonic()
        last = self.tail(1)
        st = TaskStatus(
            state=state,
            elapsed=round(end - self._started, 1),
            message=last or state,
            logfile=self.logfile,
        )
        if state == "done":
            st["result"] = self._future.result()
        elif state == "failed":
            st["error"] = _str(self._future.exception())
        return st

    def send(self, message):
        """Sends a message into the running call (a line of input for a shell session)."""
        host_call("task", {"op": "send", "id": self.id, "message": message})

    def cancel(self):
        """Cancels the call: the host cancels it at the bridge."""
        if self.done():
            return False
        self._cancelled = True
        try:
            host_call("task", {"op": "cancel", "id": self.id})
        finally:
            self._future.cancel()
        return True

    async def wait(self, timeout=None):
        try:
            await asyncio.wait_for(asyncio.shield(self._future), timeout)
        except BaseException:
            pass
        return self.status()

    def __await__(self):
        return self._future.__await__()

    def __json__(self):
        st = self.status()
        if _isinstance(st["message"], _str) and len(st["message"]) > 200:
            st["message"] = st["message"][:200] + "..."
        return dict(st)

    def __repr__(self):
        st = self.status()
        suffix = f" — {st['message']}" if st["message"] != st["state"] else ""
        return f"<Task {self.id} {self.name} [{st['state']}] {st['elapsed']}s{suffix}>"


def _help_text(path):
    header = (
        f"Remote namespace '{path}' — methods execute on the host and return results.\n"
        f"  Call:       {path}.method(args)\n"
        f"  Background: {path}.method.task(args) → returns a Task object\n"
        f'  Details:    sbx.inspect("{path}.method") → description, parameters, and types\n'
        f'  Search:     sbx.search("pattern") → find across all namespaces'
    )
    try:
        doc = host_call("help", {"path": path})
    except Exception:
        return header
    if _isinstance(doc, dict):
        return doc
    return header + "\n\n" + doc if doc else header


def help(obj=None):
    """help() returns the guide to this sandbox; help(ns) the tree of a
    namespace's tools; help(ns.tool) a tool's description, parameters and
    output; help(anything else) its docstring. It returns; it never prints."""
    if obj is None:
        return host_call("call", {"path": "sbx.help", "args": [], "kwargs": {}})
    if _isinstance(obj, Namespace):
        return _help_text(obj._pbx_path)
    return getattr(obj, "__doc__", None)


def _install_namespaces(namespaces):
    for ns in namespaces:
        name = ns["name"]
        proxy = Namespace(name)
        setattr(builtins, name, proxy)
        MAIN[name] = proxy


# ---------------------------------------------------------------------------
# Set-up


def _prepare_main():
    """Runs before the snapshot: the globals every session starts with."""
    import re

    for name, mod in (
        ("asyncio", asyncio),
        ("json", json),
        ("os", os),
        ("sys", sys),
        ("re", re),
        ("base64", base64),
    ):
        MAIN[name] = mod
    for p in ("/workspace", "/mnt"):
        if p not in sys.path:
            sys.path.insert(0, p)


def _configure(config_json):
    """Runs after every start, with the host's configuration."""
    config = json.loads(config_json)
    # Pyodide installs its own time.sleep at every start; ours can be interrupted.
    time.sleep = _sleep
    os.environ.clear()
    os.environ.update({"HOME": "/workspace", "USER": "user"})
    os.environ.update(config.get("env") or {})
    for name, value in (config.get("globals") or {}).items():
        MAIN[name] = value
    _install_namespaces(config.get("namespaces") or [])
    builtins.help = help
    MAIN["Task"] = Task
    os.chdir("/workspace")
    # The snapshot was taken before these directories existed: forget that.
    # (importlib.invalidate_caches() would do it too, but its first call
    # imports importlib.metadata, ~150 ms.)
    for p in ("/workspace", "/mnt"):
        sys.path_importer_cache.pop(p, None)
