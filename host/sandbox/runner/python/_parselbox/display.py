"""display(content): the HTML view of an execution.

display() takes HTML, or the path of a file that holds it (relative paths
are under /workspace). The last call of an execution wins; the runner takes
the view when the execution ends (features/display.ts) and the host turns
it into a full HTML document (host/ui).
"""

import builtins
import os

_isinstance, _str, _type = isinstance, str, type


class _View:
    html = None


_view = _View()


def display(content):
    """Shows HTML under the result, in clients that render MCP Apps.

    content is HTML (any string with a "<"), or the path of a file that
    holds it. The last display() of an execution wins; return data too."""
    if _isinstance(content, os.PathLike):
        content = os.fspath(content)
    if not _isinstance(content, _str):
        raise TypeError(f"display() expects HTML or a file path, got {_type(content).__name__}")
    if "<" in content:
        html = content
    else:
        path = content if content.startswith("/") else os.path.join("/workspace", content)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"display(): {content!r} is neither HTML nor an existing file")
        with open(path, encoding="utf-8", errors="replace") as f:
            html = f.read()
    _view.html = html


def take():
    """The view of the execution that ended, or None; clears it."""
    html, _view.html = _view.html, None
    return html


def prepare():
    builtins.display = display
