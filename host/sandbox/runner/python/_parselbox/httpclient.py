"""Ordinary HTTP clients: http.client's connections send their requests
through the runner's fetch (features/http.ts), so urllib.request,
http.client and what builds on them work, synchronously, under exactly the
sandbox's network rules. The sandbox has no sockets: a connection here
collects what http.client writes, sends it as one fetch when the response
is asked for, and hands http.client's own HTTPResponse the answer to parse.

An address the rules do not allow raises PermissionError (urllib wraps it
in URLError) saying so; a refused connection ConnectionRefusedError; a
timeout TimeoutError; an interrupt KeyboardInterrupt. When code fails after
any fetch was refused (micropip, say, which reports only that it found
nothing), the execution's error names the refused address.
"""

import errno
import http.client
import io
import json
import socket

from pyodide.ffi import to_js

from .hostcall import run_sync

_HOP_BY_HOP = {"host", "connection", "content-length", "transfer-encoding", "keep-alive", "proxy-connection"}
# fetch hands the body decoded: what described the wire form goes.
_WIRE = {"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"}


def _js():
    import _pbx_http

    return _pbx_http


def _dechunk(body):
    out, rest = bytearray(), body
    while rest:
        line, _, rest = rest.partition(b"\r\n")
        size = int(line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        rest = rest[size + 2 :]
    return bytes(out)


def _request(url, method, headers, body, timeout):
    ms = int(timeout * 1000) if isinstance(timeout, (int, float)) and timeout > 0 else 0
    data = to_js(bytes(body)) if body else None
    return _js().exchange(str(url), str(method), json.dumps([[str(k), str(v)] for k, v in headers]), data, ms)


def _answer(answer):
    status = answer[0]
    if status == 2:
        raise KeyboardInterrupt
    if status == 1:
        kind, message = answer[1], answer[2]
        if kind == "denied":
            raise PermissionError(errno.EACCES, message)
        if kind == "timeout":
            raise TimeoutError(message)
        if kind == "refused":
            raise ConnectionRefusedError(errno.ECONNREFUSED, message)
        raise OSError(errno.EIO, message)
    return answer[1], answer[2], json.loads(answer[3]), answer[4].to_bytes()


def send(url, method, headers, body, timeout):
    """One request through fetch, waited for: (status, reason, [[name,
    value]...], body). The body comes decoded (no Content-Encoding left to
    undo). Raises PermissionError for an address the rules do not allow,
    ConnectionRefusedError, TimeoutError, OSError, KeyboardInterrupt."""
    return _answer(run_sync(_request(url, method, headers, body, timeout)))


async def send_async(url, method, headers, body, timeout):
    """send, awaited."""
    return _answer(await _request(url, method, headers, body, timeout))


class _Exchange:
    """What http.client takes for its socket: it collects the request and
    reads back the response fetch gave."""

    def __init__(self, conn):
        self._conn = conn
        self._sent = bytearray()
        self._answer = None

    def sendall(self, data):
        if self._answer is not None:  # a new request on a kept-alive connection
            self._sent.clear()
            self._answer = None
        self._sent += bytes(data)

    send = sendall

    def makefile(self, mode="rb", *args, **kwargs):
        return io.BytesIO(self._answer or b"")

    def settimeout(self, t):
        pass

    def setsockopt(self, *args):
        pass

    def close(self):
        pass

    def exchange(self):
        if self._answer is not None:
            return
        head, _, body = bytes(self._sent).partition(b"\r\n\r\n")
        lines = head.decode("iso-8859-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers, chunked = [], False
        for line in lines[1:]:
            name, _, value = line.partition(":")
            key = name.strip().lower()
            if key == "transfer-encoding" and "chunked" in value.lower():
                chunked = True
            if key not in _HOP_BY_HOP:
                headers.append([name.strip(), value.strip()])
        if chunked:
            body = _dechunk(body)
        conn = self._conn
        if target.startswith(("http://", "https://")):
            url = target
        else:
            host = conn.host if ":" not in conn.host else f"[{conn.host}]"
            url = f"{conn._pbx_scheme}://{host}:{conn.port}{target}"
        code, reason, rheaders, rbody = send(url, method, headers, body, conn.timeout)
        out = [f"HTTP/1.1 {code} {reason or http.client.responses.get(code, '')}\r\n"]
        for name, value in rheaders:
            if name.lower() not in _WIRE:
                out.append(f"{name}: {value}\r\n")
        if method.upper() != "HEAD":
            out.append(f"Content-Length: {len(rbody)}\r\n")
        out.append("\r\n")
        self._answer = "".join(out).encode("iso-8859-1", "replace") + (b"" if method.upper() == "HEAD" else rbody)


class _FetchConnection:
    """Mixed into http.client's connections: no socket, one fetch per
    request."""

    def connect(self):
        self.sock = _Exchange(self)

    def request(self, *args, **kwargs):
        # The exchange happens here, where urllib turns an OSError into
        # URLError; requests sent piece by piece exchange in getresponse.
        super().request(*args, **kwargs)
        if isinstance(self.sock, _Exchange):
            self.sock.exchange()

    def getresponse(self):
        if isinstance(self.sock, _Exchange):
            self.sock.exchange()
        return super().getresponse()


class HTTPConnection(_FetchConnection, http.client.HTTPConnection):
    _pbx_scheme = "http"


_classes = {"HTTPConnection": HTTPConnection}

if hasattr(http.client, "HTTPSConnection"):

    class HTTPSConnection(_FetchConnection, http.client.HTTPSConnection):
        _pbx_scheme = "https"

        # http.client's own __init__ calls super(HTTPSConnection, self),
        # naming the module's class, which is this one once installed: it
        # would run again. fetch does the TLS (its certificate checks), so
        # the context is kept, unused.
        def __init__(self, host, port=None, *, timeout=socket._GLOBAL_DEFAULT_TIMEOUT,
                     source_address=None, context=None, blocksize=8192):
            http.client.HTTPConnection.__init__(self, host, port, timeout, source_address, blocksize=blocksize)
            self._context = context

    _classes["HTTPSConnection"] = HTTPSConnection


def _denied():
    """The addresses a fetch was refused since the last call."""
    try:
        return [str(a) for a in _js().denied()]
    except Exception:
        return []


_type, _tuple = type, tuple  # builtins the guest may replace


def _noting_denials(run):
    # The runner drops the refusals made before an execution as it begins
    # (features/http.ts): only a failed execution asks, no call otherwise.
    async def run_noting_denials(code):
        result = await run(code)
        try:
            if _type(result) is _tuple and result[1] is not None:  # (output, error): see execute.run
                err = result[1]
                addresses = _denied()
                if addresses and "not allowed" not in err.get("message", ""):
                    err["message"] += (
                        f" (during this execution, network access to {', '.join(addresses)} was refused: "
                        "it is not allowed in the sandbox by the host's network rules)"
                    )
        except BaseException:  # a late interrupt (the code has ended): the result stands
            pass
        return result

    return run_noting_denials


def prepare():
    for name, cls in _classes.items():
        cls.__module__ = "http.client"
        cls.__qualname__ = name
        setattr(http.client, name, cls)
    # A library may hide a refused fetch behind its own error (micropip's
    # "Can't fetch metadata"): the execution's error names the address.
    from . import execute

    execute.run = _noting_denials(execute.run)
