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

from . import FILENAME, MAIN, on_configure
from .api import tasks as api_tasks
from .hostcall import interrupt_on_resume, tool_futures
from .output import error, to_json


class _State:
    current = None  # the asyncio task running the current execution
    interrupted = False


_state = _State()


async def run(code):
    """Runs one execution; returns (output, error) as plain values.

    The code runs in the task that runs this coroutine (no task of its own:
    code that never awaits finishes in one step of the event loop), which
    is what interrupt() cancels."""
    _state.interrupted = False
    linecache.cache[FILENAME] = (len(code), None, code.splitlines(True), FILENAME)
    _state.current = asyncio.current_task()
    try:
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
            except Exception:
                pass
    if ok:
        try:
            return to_json(value), None
        except BaseException as e:
            return None, error(e)
    return None, error(value)


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


def _is_task_step(handle):
    # A task's own stepping: cancelled with its task, not by itself.
    return isinstance(getattr(handle._callback, "__self__", None), asyncio.Future)


def cancel_background():
    """Cancels what the guest left running between executions: its tasks
    and callbacks, not tool tasks. Returns how many. Never while an
    execution's task has finished and the runner has not yet got its
    result: that is in callbacks on the loop too (see interrupt)."""
    n = 0
    for h in list(_handles):
        if not h.cancelled() and not _is_task_step(h):
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
