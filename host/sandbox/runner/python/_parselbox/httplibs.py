"""HTTP libraries (and micropip) adapted to the sandbox as they are
imported. HTTP libraries go over the sandbox's fetch, like http.client
(httpclient.py): urllib3 (and so requests) and httpx, when they are
installed, are adapted as they are imported, so that they work
synchronously (and httpx's async client by awaiting), under exactly the
sandbox's network rules.

- urllib3 (1.26 and 2.x): its connections are http.client's, which
  httpclient.py already sends through fetch; only their connect() (a
  socket, TLS) is replaced, and a connection is never "dropped" (there is
  no socket to poll). urllib3 2's own Emscripten backend is set aside for
  the same path (it would connect too, through JSPI, but a refusal would
  read "run again with the --allow-net flag").
- httpx: its transports (HTTPTransport, AsyncHTTPTransport) send each
  request as one fetch.

An address the rules do not allow fails saying so: requests raises
ConnectionError and httpx ConnectError, with the PermissionError's
message ("network access to HOST:PORT is not allowed in the sandbox").
"""

import importlib.abc
import sys

from .httpclient import _Exchange, send, send_async


def _patch_urllib3(urllib3):
    connection = sys.modules.get("urllib3.connection")
    pool = sys.modules.get("urllib3.connectionpool")
    if connection is None or pool is None:
        return
    # urllib3 2 on Emscripten swaps its connection classes for its own
    # backend: the classes the pools were built with are the originals.
    http_cls = getattr(pool, "HTTPConnection", connection.HTTPConnection)
    https_cls = getattr(pool, "HTTPSConnection", connection.HTTPSConnection)

    def connect(self):
        self.sock = _Exchange(self)

    def connect_tls(self):
        # fetch checks the certificate, as a browser does.
        self.sock = _Exchange(self)
        self.is_verified = True

    http_cls.connect = connect
    https_cls.connect = connect_tls
    https_cls._pbx_scheme = "https"
    pool.HTTPConnectionPool.ConnectionCls = http_cls
    pool.HTTPSConnectionPool.ConnectionCls = https_cls
    for name, cls in (("HTTPConnection", http_cls), ("HTTPSConnection", https_cls), ("VerifiedHTTPSConnection", https_cls)):
        if hasattr(connection, name):
            setattr(connection, name, cls)
    # No socket to poll: a connection is dropped only once closed.
    if hasattr(pool, "is_connection_dropped"):
        dropped = pool.is_connection_dropped

        def is_connection_dropped(conn):
            sock = getattr(conn, "sock", None)
            return False if isinstance(sock, _Exchange) else dropped(conn)

        pool.is_connection_dropped = is_connection_dropped
    if isinstance(getattr(http_cls, "is_connected", None), property):
        connected = http_cls.is_connected

        def is_connected(self):
            return True if isinstance(self.sock, _Exchange) else connected.fget(self)

        http_cls.is_connected = property(is_connected)


def _response(httpx, request, answer):
    status, _reason, headers, body = answer
    return httpx.Response(status, headers=[(k, v) for k, v in headers], content=body, request=request)


def _httpx_error(httpx, e, request):
    if isinstance(e, TimeoutError):
        return httpx.ConnectTimeout(str(e), request=request)
    if isinstance(e, OSError):
        return httpx.ConnectError(e.strerror or str(e), request=request)
    return e


_WIRE = {"host", "content-length", "transfer-encoding", "connection", "keep-alive"}


def _httpx_request(request):
    headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _WIRE]
    timeout = request.extensions.get("timeout", {})
    limit = max([t for t in timeout.values() if t] or [0])
    return str(request.url), request.method, headers, limit


def _patch_httpx(httpx):
    def handle_request(self, request):
        url, method, headers, limit = _httpx_request(request)
        body = request.read()
        try:
            answer = send(url, method, headers, body, limit)
        except (TimeoutError, OSError) as e:
            raise _httpx_error(httpx, e, request) from e
        return _response(httpx, request, answer)

    async def handle_async_request(self, request):
        url, method, headers, limit = _httpx_request(request)
        body = await request.aread()
        try:
            answer = await send_async(url, method, headers, body, limit)
        except (TimeoutError, OSError) as e:
            raise _httpx_error(httpx, e, request) from e
        return _response(httpx, request, answer)

    httpx.HTTPTransport.handle_request = handle_request
    httpx.AsyncHTTPTransport.handle_async_request = handle_async_request


def _patch_micropip(micropip):
    """micropip installs packages of Pyodide's own distribution (those in
    its lock) with pyodide.loadPackage, which the sandbox does not have:
    the host installs them instead (allow_runtime_packages), from its
    package index, or the error says how to declare them.

    When the host names a package index, it is micropip's too: a simple
    index is its default index_urls (in place of PyPI; micropip downloads
    from it under the network rules), a Pyodide index's lock its lock (in
    place of Pyodide's distribution; the host installs those)."""
    compat = getattr(getattr(micropip, "_compat", None), "compatibility_layer", None)
    if compat is None:
        return
    from .packages import _state

    index = _state.micropip
    if index is not None:
        urls = [str(u) for u in index.get("index_urls") or []]
        package_index = sys.modules.get("micropip.package_index")
        if package_index is not None:
            # (micropip searches its lock first only with its default
            # index_urls: the host's are the default now)
            package_index.DEFAULT_INDEX_URLS[:] = urls
        manager = getattr(micropip, "_package_manager_singleton", None)
        if manager is not None:
            manager.index_urls = urls[:]
        lock = index.get("lock")
        if lock is not None:
            compat.lockfile_packages = {k: dict(v) for k, v in lock.items()}

    async def loadPackage(names, *args, **kwargs):
        from .hostcall import start_call
        from .packages import add_paths

        if hasattr(names, "to_py"):
            names = names.to_py()
        if isinstance(names, str):
            names = [names]
        answer = await start_call("packages.install", {"names": [str(n) for n in names]})
        add_paths(answer.get("paths") or [])

    compat.loadPackage = staticmethod(loadPackage)
    micropip._compat.loadPackage = loadPackage


_PATCHES = {"urllib3": _patch_urllib3, "httpx": _patch_httpx, "micropip": _patch_micropip}


class _Loader(importlib.abc.Loader):
    """A module's own loader, with a patch applied after it ran."""

    def __init__(self, loader, patch):
        self._loader, self._patch = loader, patch

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__spec__.loader = self._loader
        module.__loader__ = self._loader
        self._loader.exec_module(module)
        self._patch(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: it wraps the loader of the modules to adapt."""

    def find_spec(self, name, path=None, target=None):
        patch = _PATCHES.get(name)
        if patch is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader, patch)
                return spec
        return None


def prepare():
    sys.meta_path.insert(0, _Finder())
    for name, patch in _PATCHES.items():
        if name in sys.modules:
            patch(sys.modules[name])
