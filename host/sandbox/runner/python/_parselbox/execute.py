"""Executions, interrupts, and what may run between executions.

An execution runs as an asyncio task on the persistent namespace __main__.
Between executions, what the guest left scheduled (asyncio tasks and
callbacks) keeps running, as background work does in any asyncio program,
held to limits by the watchdog (see watchdog.ts): a callback that blocks
the event loop is interrupted, and then everything the guest left running
is cancelled (cancel_background); so is it when an execution is
interrupted (it timed out). Tool tasks (ns.tool.task()) are not the
guest's code: they run on the host and outlive executions, always; nor are
the tasks of the app's api requests (module api), which have a timeout of
their own.
"""

import asyncio
import linecache
import sys
import weakref

from pyodide.code import eval_code_async
from pyodide.ffi import jsnull
from pyodide.webloop import PyodideTask

from . import FILENAME, MAIN, on_configure
from .api import tasks as api_tasks
from .hostcall import interrupt_on_resume, tool_futures
from .output import error, to_json


class _State:
    current = None  # the asyncio task running the current execution
    interrupted = False
    starting = False  # run() is on its way, its code has not begun
    interrupt_at_start = False  # interrupted before its code began


_state = _State()


def begin(interrupted):
    """Marks an execution as begun, before the runner calls start (which
    it does from a later turn of the event loop): an interrupt from now
    until its code begins (interrupted: one came already) makes it begin
    with KeyboardInterrupt."""
    _state.starting = True
    _state.interrupt_at_start = bool(interrupted)


def start(code):
    """Runs an execution (run) as an asyncio task that starts at once, in
    this call (eagerly): code that does not await finishes before this
    returns, with no turn of the event loop, and its result is returned;
    otherwise the task is, which the runner awaits. The runner calls this
    through a promising entry (callPromising), so that a tool call in the
    code may look synchronous (run_sync)."""
    task = _ExecTask(run(code), _get_loop())
    if task.done():
        return task.result()
    return task


class _ExecTask(PyodideTask):
    """The task of an execution, started eagerly (see start)."""

    def __init__(self, coro, loop):
        # PyodideTask sets this after Task.__init__, which here runs the
        # code already (the code may add a callback to its task).
        self._num_done_callbacks = 0
        asyncio.Task.__init__(self, coro, loop=loop, eager_start=True)


_get_loop = asyncio.get_event_loop


async def run(code):
    """Runs one execution. Returns its output when it succeeded and the
    output is a plain value that converts to JavaScript by itself (None,
    bool, int, float, str: the runner then converts nothing and destroys no
    proxy), else the pair (output, error) as plain values.

    The code runs in the task that runs this coroutine (no task of its own:
    code that never awaits finishes in the task's first step, in start),
    which is what interrupt() cancels."""
    _state.interrupted = False
    linecache.cache[FILENAME] = (len(code), None, code.splitlines(True), FILENAME)
    _state.current = asyncio.current_task()
    try:
        _state.starting = False
        if _state.interrupt_at_start:
            raise KeyboardInterrupt
        value = await eval_code_async(code, MAIN, filename=FILENAME)
        ok = True
    except BaseException as e:  # KeyboardInterrupt and CancelledError included
        ok, value = False, e
        if isinstance(e, asyncio.CancelledError):
            # A cancel is an interrupt (interrupt() cancels this task); it
            # must not cancel the runner's await of this coroutine.
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            if _state.interrupted:
                value = KeyboardInterrupt()
    finally:
        _state.current = None
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:  # a late interrupt included
                pass
    if ok:
        try:
            out = to_json(value)
        except BaseException as e:
            return None, error(e)
        if out is jsnull or _type(out) in _PLAIN:
            return out
        return out, None
    try:
        return None, error(value)
    finally:
        release(value)
        value = None


def release(e):
    """Frees the frames of an exception's traceback now, innermost first.

    Left to itself, the exception would outlive the execution: run holds
    it (value), and its traceback holds run's frame, a cycle that only the
    garbage collector frees, so a failed deep recursion (sys.setrecursionlimit
    raised) kept every frame and its locals, up to 10**6 of them, and with
    the guest's data near the memory limit every later execution failed
    with MemoryError. And freed in one go, a chain of frames (each holds the
    next outer one, f_back) is freed by recursive calls, which in the wasm
    runtime overflow the JavaScript engine's stack long before Python's own
    stack check sees them: a fatal error. So the frames are taken off the
    traceback in a list and let go from the innermost out, one at a time.

    Unless the guest kept the exception (a global, a list): it then stays
    whole, and only the cycle is broken (run drops it). The caller's
    variable and the argument are its only references otherwise."""
    if sys.getrefcount(e) > 2:
        return
    tb = e.__traceback__
    e.__traceback__ = None
    frames = []
    try:
        while tb is not None:
            frames.append(tb.tb_frame)
            tb.tb_next, tb = None, tb.tb_next
    except MemoryError:
        pass  # what is left goes as it would have
    while frames:
        frames.pop()


# The types of to_json's values that convert to JavaScript without a proxy.
_PLAIN = (bool, int, float, str)
_type = type


def interrupt(cancel_task=True):
    """Interrupts the running execution: cancels its task (cancel_task: it
    awaits something that no interrupt byte reaches), and what the guest
    left running in the background: an interrupted (timed out) execution
    must not leave work behind that swamps the loop, such as tasks that
    each start more, none blocking long enough for the idle watchdog, which
    would make the next execution time out and be blamed.

    Returns False, and does nothing, when the execution's code has ended
    already (the interrupt byte stopped it before the runner's main thread
    heard of the interrupt): its task's result is then on its way to the
    runner, in callbacks waiting on the loop, which cancel_background would
    cancel, and the runner would wait for the result forever. The runner
    cancels what the code left once it has the result (exec.ts)."""
    task = _state.current
    if task is None and _state.starting:
        _state.interrupt_at_start = True
        return True
    if task is None or task.done():
        return False
    # Suspended in run_sync with nothing left to end (what it waited for
    # has come and the stack is about to resume, or what it waits for
    # cannot be ended): a cancel would only land at the next await, which
    # may never come (while True: time.sleep(0.01)), and breaks the
    # run_sync; the KeyboardInterrupt is raised as it resumes. Otherwise
    # the task awaits (or yielded), and the cancel ends that.
    if cancel_task and not interrupt_on_resume(task):
        _state.interrupted = True
        task.cancel()
    cancel_background()
    return True


# Handles of the callbacks scheduled on the loop (asyncio's own included).
_handles = weakref.WeakSet()


def _is_machinery(handle):
    """Whether a callback on the loop is its machinery, not the guest's
    work: it must run (cancel_background leaves it)."""
    cb = handle._callback
    owner = getattr(cb, "__self__", None)
    # A task's own stepping or wakeup: cancelled with its task, not by itself.
    if isinstance(owner, asyncio.Future):
        return True
    # A finished future's news to the JavaScript awaiting it: how a run_sync
    # resumes (time.sleep, a tool call) and how the runner gets an
    # execution's result (cancelled, the execution hung), and the loop's
    # count of what is in progress.
    return type(cb).__name__ == "FutureDoneCallback" or (
        getattr(cb, "__name__", None) == "_decrement_in_progress" and owner is asyncio.get_event_loop()
    )


def cancel_background():
    """Cancels what the guest left running between executions: its tasks
    and callbacks, not tool tasks nor the loop's machinery (_is_machinery).
    Returns how many."""
    n = 0
    for h in list(_handles):
        if not h.cancelled() and not _is_machinery(h):
            h.cancel()
            n += 1
    _handles.clear()
    for t in asyncio.all_tasks(asyncio.get_event_loop()):
        if t is _state.current or t in tool_futures or t in api_tasks or t.done():
            continue
        t.cancel()
        n += 1
    return n


def prepare():
    from pyodide.webloop import WebLoop

    call_later = WebLoop.call_later

    def tracked_call_later(self, delay, callback, *args, context=None):
        h = call_later(self, delay, callback, *args, context=context)
        _handles.add(h)
        return h

    WebLoop.call_later = tracked_call_later

    call_exception_handler = WebLoop.call_exception_handler

    def told_once(self, context):
        # A KeyboardInterrupt that ended a guest task (an interrupt landed
        # in it) is told already: as the interrupted execution's error, or
        # by the note on a callback interrupted between executions. asyncio
        # would tell it again, as an unhandled exception in the task or,
        # when the garbage collector frees the task, as its exception never
        # retrieved: a traceback on the stderr of whichever execution runs
        # then, often the next one.
        if isinstance(context.get("exception"), KeyboardInterrupt):
            return
        call_exception_handler(self, context)

    WebLoop.call_exception_handler = told_once


def _on_keyboard_interrupt():
    # A KeyboardInterrupt that lands in a callback rather than in the code:
    # during an execution, it is the execution's; between executions, it
    # ends the blocked callback, and what the guest left is cancelled.
    if _state.current is not None:
        import _pbx_exec

        _pbx_exec.interrupted()
        return
    import _pbx_exec

    _pbx_exec.idle_interrupted()


@on_configure
def _loop_handlers(config):
    loop = asyncio.get_event_loop()
    loop._keyboard_interrupt_handler = _on_keyboard_interrupt
    loop._system_exit_handler = lambda code=None: None
