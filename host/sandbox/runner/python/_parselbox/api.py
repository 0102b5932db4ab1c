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
    """api: the handlers of the web app the host serves from /workspace (the
    guide says at which URL when it is on).

    @api.get("/items")       # GET URL/api/items?q=x -> handler(params), params = {"q": "x"}
    def items(params):
        return {"items": find(params.get("q"))}

    @api.post("/items")      # POST with a JSON body -> handler(body) (None when empty)
    async def add(body):     # sync or async; may call tools and .task()s
        return {"saved": db.insert(row=body)}

    - api.put, api.patch and api.delete too. A path without /api gets it in front.
    - Handlers run in this sandbox, with its state and namespaces, while
      your code waits (a tool call, a sleep) or between executions; files
      they write are listed in the files of your next execution.
    - The return value is the JSON answer; an exception is a 500 with
      {"error": message, "traceback": ...}; an unknown route a 404; a body that
      is not JSON a 400.
    - api.list_routes() → [{"method", "path"}]; api.clear() removes them all.
    - Files in /workspace are served: index.html at URL/, other files by path;
      /files/NAME serves input files. Pages reload by themselves when their
      files change.
    - Pages call handlers with await pbx.call("items", body) (POST;
      {method: "GET"} for GET) or fetch("/api/items").
    - POST URL/_upload (multipart) saves files into /files and answers
      {"uploaded": [{"name", "path", "size"}]}; URL/_routes lists the routes."""

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
