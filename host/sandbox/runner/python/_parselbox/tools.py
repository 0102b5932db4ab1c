"""The bridges' tools as Python objects: namespaces, tasks and help()."""

import asyncio
import builtins
import os
import time
from inspect import cleandoc as _cleandoc

from . import MAIN, on_configure
from .hostcall import host_call, start_call

_isinstance, _repr, _str = isinstance, repr, str


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
_TASK_IDS = set()  # every id given, for uniqueness


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
        # Six hex digits collide among a thousand tasks a few times in a
        # hundred: an id is never given twice in this interpreter (a task
        # running, or one whose log file the host wrote).
        self.id = f"{root}_{os.urandom(3).hex()}"
        while self.id in _TASK_IDS:
            self.id = f"{root}_{os.urandom(3).hex()}"
        _TASK_IDS.add(self.id)
        self.name = path
        self.logfile = f"/workspace/.parselbox/tasks/{self.id}.log"
        self._started = time.monotonic()
        self._ended = None
        self._cancelled = False
        # Sent now, not when the event loop next runs, so that a send() or
        # cancel() right after it reaches the host after it.
        self._future = start_call("call", {"path": path, "args": args, "kwargs": kwargs, "task_id": self.id})
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


def _help_text(path, full=False):
    try:
        doc = host_call("help", {"path": path, "full": full})
    except Exception:
        return (
            f"Namespace '{path}' (its tools run on the host): {path}.tool(...), or {path}.tool.task(...) "
            f"for a background Task; help({path}.tool) for one tool."
        )
    if _isinstance(doc, dict):
        return doc.get("tool", doc)
    return doc


def help(obj=None, full=False):
    """help() returns the guide to this sandbox; help(ns) the namespace's
    description and the tree of its tools, each with its signature and
    summary (a long description, such as an MCP server's instructions, is
    cut to its first paragraphs: help(ns, full=True) shows all of it);
    help(ns.tool) the tool's signature line (parameters, types, defaults),
    then its description (sbx.inspect gives the JSON Schemas); help(anything
    else) its docstring (help(bash), help(js), help(require), help(display),
    help(api), help(Task)), without its indentation. It returns; it never
    prints."""
    if obj is None:
        return host_call("call", {"path": "sbx.help", "args": [], "kwargs": {}})
    if _isinstance(obj, Namespace):
        return _help_text(obj._pbx_path, full)
    doc = getattr(obj, "__doc__", None)
    return _cleandoc(doc) if _isinstance(doc, _str) else doc


@on_configure
def _install(config):
    for ns in config.get("namespaces") or []:
        name = ns["name"]
        proxy = Namespace(name)
        setattr(builtins, name, proxy)
        MAIN[name] = proxy
    builtins.help = help
    MAIN["Task"] = Task
