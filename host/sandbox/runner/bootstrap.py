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


def _unwrap(envelope):
    reply = json.loads(envelope)
    if reply["ok"]:
        return reply["result"]
    raise _exception(reply["error"])


_EXCEPTIONS = {
    name: getattr(builtins, name)
    for name in dir(builtins)
    if _isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), Exception)
}


def _exception(err):
    """The Python exception for an error reply {type, message}."""
    cls = _EXCEPTIONS.get(err.get("type") or "", RuntimeError)
    exc = cls(err.get("message", ""))
    return exc


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


async def host_call_async(method, params):
    try:
        envelope = await _js().request(method, json.dumps(params, default=_encode_arg))
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
    os.chdir("/workspace")
    importlib_invalidate()


def importlib_invalidate():
    import importlib

    importlib.invalidate_caches()
