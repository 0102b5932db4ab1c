"""The JSON form of an execution's output, and of its error."""

import base64
import datetime
import math
import traceback
import types

from pyodide.ffi import jsnull

from . import PACKAGE_DIR

# The builtins that user code may shadow.
_id, _isinstance, _repr, _str, _type, _hasattr = id, isinstance, repr, str, type, hasattr

# Frames from these files are runtime internals, trimmed from tracebacks.
_INTERNAL = (PACKAGE_DIR + "/", "/_pyodide/", "/pyodide/", "/asyncio/")


def _internal(filename):
    return filename == "<parselbox>" or any(s in filename for s in _INTERNAL)


def to_json(value):
    """The output as plain values: dict, list, str, int, float, bool, and
    jsnull for None (see ARCHITECTURE.md, "Execution result"). The runner
    converts them to JS values (None would become undefined; jsnull becomes
    null) and writes them as JSON."""
    return _walk(value, set())


def _walk(v, ancestors):
    if v is None:
        return jsnull
    if v is True or v is False or _type(v) in (int, _str):
        return v
    if _isinstance(v, bool):
        return bool(v)
    if _isinstance(v, int):
        return int(v)
    if _isinstance(v, float):
        return None if math.isnan(v) or math.isinf(v) else float(v)
    if _isinstance(v, _str):
        return _str.__str__(v)
    if _isinstance(v, (bytes, bytearray, memoryview)):
        return {"__b64__": base64.b64encode(bytes(v)).decode()}
    if _isinstance(v, (datetime.datetime, datetime.date, datetime.time)):
        return v.isoformat()
    key = _id(v)
    if key in ancestors:
        return {"type": "circular_reference", "repr": safe_repr(v)}
    if _hasattr(_type(v), "to_py") and _type(v).__module__ == "pyodide.ffi":
        try:
            c = v.to_py()
        except Exception:
            return {"type": "not_serializable", "repr": safe_repr(v)}
        if _type(c).__module__ == "pyodide.ffi":  # a JS object with no Python form
            return {"type": "not_serializable", "repr": safe_repr(v)}
        return _walk(c, ancestors)
    ancestors.add(key)
    try:
        if _isinstance(v, dict):
            return {_str.__str__(_str(k)): _walk(x, ancestors) for k, x in v.items()}
        if _isinstance(v, (list, tuple, set, frozenset)):
            return [_walk(x, ancestors) for x in v]
        if _hasattr(_type(v), "__json__"):
            return _walk(v.__json__(), ancestors)
    finally:
        ancestors.discard(key)
    return {"type": "not_serializable", "repr": safe_repr(v)}


def safe_repr(v):
    try:
        return _str.__str__(_repr(v))
    except Exception as e:  # a broken __repr__ must not break the result
        return f"<{_type(v).__name__} object (repr failed: {e})>"


# Tracebacks longer than this keep their first and last frames only (a
# RecursionError has thousands, which take long to format).
_MAX_FRAMES = 100


def error(e):
    """{type, message, traceback} of an exception, without runtime frames.
    It never raises: an interrupt while formatting leaves the traceback out."""
    try:
        typ = _type(e).__name__
    except BaseException:
        typ = "BaseException"
    try:
        message = _str.__str__(_str(e))
    except BaseException as err:
        message = f"(str() of the exception failed: {_type(err).__name__})"
    try:
        text = _format(e)
    except BaseException:
        text = ""
    return {"type": typ, "message": message, "traceback": text}


def _format(e):
    tb = e.__traceback__
    frames = []
    while tb is not None:
        if not _internal(tb.tb_frame.f_code.co_filename):
            frames.append(tb)
        tb = tb.tb_next
    skipped = 0
    if len(frames) > _MAX_FRAMES:
        half = _MAX_FRAMES // 2
        skipped = len(frames) - _MAX_FRAMES
        frames = frames[:half] + frames[-half:]
    kept = None
    for f in reversed(frames):
        kept = types.TracebackType(kept, f.tb_frame, f.tb_lasti, f.tb_lineno)
    lines = traceback.format_exception(_type(e), e, kept, chain=False)
    if skipped:
        lines.insert(1, f"  [{skipped} frames in the middle are left out]\n")
    return "".join(lines)
