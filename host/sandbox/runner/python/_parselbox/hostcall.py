"""Requests to the host, and a sleep that an interrupt can cut short.

Parameters go to the runner as JSON text made here; the runner parses it
and builds the message itself. Answers come back as Python values (see
features/tools.ts): [0, value, has_bytes], [1, type, message], or [2] when
an interrupt ended the wait.
"""

import asyncio
import base64
import builtins
import datetime
import json
import time
import weakref

from pyodide.ffi import run_sync as _run_sync

from . import on_configure

# Private references: user code may shadow or patch the public names.
_isinstance, _repr, _hasattr, _type, _str = isinstance, repr, hasattr, type, str
_bytes_types = (bytes, bytearray, memoryview)


def _js():
    import _pbx_js

    return _pbx_js


def _encode_arg(obj):
    """The JSON form of an argument that json cannot encode by itself."""
    if _isinstance(obj, _bytes_types):
        return {"__b64__": base64.b64encode(bytes(obj)).decode()}
    if _hasattr(obj, "__json__"):
        return obj.__json__()
    if _isinstance(obj, (tuple, set, frozenset)):
        return list(obj)
    if _isinstance(obj, (datetime.date, datetime.datetime, datetime.time)):
        return obj.isoformat()
    return _repr(obj)


_encode = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"), default=_encode_arg).encode

_EXCEPTIONS = {
    name: getattr(builtins, name)
    for name in dir(builtins)
    if _isinstance(getattr(builtins, name), type) and issubclass(getattr(builtins, name), Exception)
}


def _exception(typ, message):
    """The Python exception for an error reply: a builtin exception's name,
    or CancelledError (the names of the host's table of error codes,
    protocol.Codes); RuntimeError for any other."""
    if typ == "CancelledError":
        return asyncio.CancelledError(message)
    return _EXCEPTIONS.get(typ or "", RuntimeError)(message)


def _decode_bytes(v):
    """Replaces {"__b64__": s} by the bytes it stands for, anywhere in v."""
    if _type(v) is dict:
        if len(v) == 1 and _isinstance(v.get("__b64__"), _str):
            try:
                return base64.b64decode(v["__b64__"])
            except Exception:
                return v
        return {k: _decode_bytes(x) for k, x in v.items()}
    if _type(v) is list:
        return [_decode_bytes(x) for x in v]
    return v


def _unwrap(answer):
    status = answer[0]
    if status == 0:
        value = answer[1]
        return _decode_bytes(value) if answer[2] else value
    if status == 2:
        raise KeyboardInterrupt
    raise _exception(answer[1], answer[2]) from None


class _Waits:
    tasks = []  # the tasks suspended in run_sync, innermost last
    interrupt = None  # the task to raise KeyboardInterrupt in when it resumes


_waits = _Waits()


def run_sync(awaitable):
    """pyodide.ffi.run_sync, for the runner's blocking calls (tools, sleep,
    bash, js, http): an interrupt that arrives when there is nothing left
    to end (what the call waited for has come, and its stack is about to
    resume) raises KeyboardInterrupt as it resumes (see
    execute.interrupt; cancelling the task there does not work)."""
    task = asyncio.current_task()
    _waits.tasks.append(task)
    try:
        return _run_sync(awaitable)
    finally:
        _waits.tasks.pop()
        if task is not None and _waits.interrupt is task:
            _waits.interrupt = None
            raise KeyboardInterrupt


def interrupt_on_resume(task):
    """If task is suspended in run_sync, has it raise KeyboardInterrupt as
    it resumes, and says so."""
    if task is None or task not in _waits.tasks:
        return False
    _waits.interrupt = task
    return True


def host_call(method, params):
    """Sends a request to the host and blocks (without blocking the event
    loop) until it answers. Needs a promising entry, which run() provides."""
    return _unwrap(run_sync(_js().request(method, _encode(params), True)))


# Futures of background tool calls (Task): they outlive executions, by design.
tool_futures = weakref.WeakSet()


def start_call(method, params):
    """Sends a request now and returns a future of its answer."""
    promise = _js().request(method, _encode(params), False)

    async def answer():
        return _unwrap(await promise)

    fut = asyncio.ensure_future(answer())
    tool_futures.add(fut)
    return fut


def sleep(seconds):
    """time.sleep that an interrupt can cut short."""
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    if run_sync(_js().sleep(seconds * 1000))[0] == 2:
        raise KeyboardInterrupt


@on_configure
def _install_sleep(config):
    # Pyodide installs its own time.sleep at every start; ours can be interrupted.
    time.sleep = sleep
