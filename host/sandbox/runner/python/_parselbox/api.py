"""The `api` builtin: handlers of the app the host serves (host/serve).

@api.get("/path") (and post, put, patch, delete) registers a handler for
the method and /api + path. The host sends each request to /api/... as the
protocol's `api` method (features/api.ts), which runs start() here: a task
of its own, beside a running execution, not one of the executions. A GET
handler gets the query's params (a dict of strings), the others the JSON
body (None when empty). Handlers may be sync or async, call tools and keep
state; what they return is the JSON answer.
"""

import asyncio
import builtins
import inspect
import json
import traceback

from .output import error, to_json

_isinstance, _str = isinstance, str


class Router:
    """Routes of the served app: @api.get(path), @api.post(path), ..."""

    def __init__(self):
        self._routes = {}

    def _register(self, method, path):
        if not _isinstance(path, _str):
            raise TypeError(f"api.{method.lower()}() expects a path string, got {type(path).__name__}")
        if not path.startswith("/"):
            path = "/" + path
        if not (path == "/api" or path.startswith("/api/")):
            path = "/api" + path

        def register(fn):
            if not callable(fn):
                raise TypeError(f"@api.{method.lower()}({path!r}) decorates a function")
            self._routes[(method, path)] = fn
            return fn

        return register

    def get(self, path):
        return self._register("GET", path)

    def post(self, path):
        return self._register("POST", path)

    def put(self, path):
        return self._register("PUT", path)

    def patch(self, path):
        return self._register("PATCH", path)

    def delete(self, path):
        return self._register("DELETE", path)

    def list_routes(self):
        """[{"method", "path"}] in the order they were registered."""
        return [{"method": m, "path": p} for (m, p) in self._routes]

    def clear(self):
        self._routes.clear()

    def __repr__(self):
        return f"<api router: {len(self._routes)} route(s)>"


api = Router()


# The tasks running api requests: an interrupted execution does not cancel
# them (execute.cancel_background), they have their own timeout.
tasks = set()


def start(request):
    """Starts the handler of one request (JSON text) as a task; its result
    is {"status": int, "body": JSON value}."""
    task = asyncio.ensure_future(_answer(request))
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    return task


async def _answer(request):
    r = await dispatch(request)
    try:
        r["body"] = to_json(r["body"])
    except BaseException as e:
        e = error(e)
        r = {"status": 500, "body": {"error": f"the handler's answer is not JSON: {e['type']}: {e['message']}"}}
    return r


async def dispatch(request):
    """Runs the handler of one request (JSON text from the host); returns
    {"status": int, "body": value}."""
    req = json.loads(request)
    if req.get("routes"):
        return {"status": 200, "body": api.list_routes()}
    method, path = req["method"], req["path"]
    fn = api._routes.get((method, path))
    if fn is None:
        return {"status": 404, "body": {"error": f"No handler for {method} {path}"}}
    if method == "GET":
        arg = req.get("params") or {}
    else:
        raw = req.get("body") or ""
        if raw.strip() == "":
            arg = None
        else:
            try:
                arg = json.loads(raw)
            except ValueError:
                return {"status": 400, "body": {"error": "Invalid JSON body"}}
    try:
        result = fn(arg)
        if inspect.isawaitable(result):
            result = await result
    except (Exception, KeyboardInterrupt, asyncio.CancelledError) as e:
        if isinstance(e, asyncio.CancelledError):
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            return {"status": 500, "body": {"error": f"the handler of {method} {path} was cancelled"}}
        tb = error(e).get("traceback") or traceback.format_exc()
        return {"status": 500, "body": {"error": str(e) or type(e).__name__, "traceback": tb}}
    return {"status": 200, "body": result}


def prepare():
    builtins.api = api
