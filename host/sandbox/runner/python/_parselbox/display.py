"""display(content): the HTML view of an execution.

display() takes HTML, or the path of a file that holds it (relative paths
are under /workspace). The last call of an execution wins; the view is kept
by the runner (features/display.ts, module _pbx_display), which puts it in
the execution's result, so that an execution that shows nothing costs no
call into Python; the host turns it into a full HTML document (host/ui).
"""

import builtins
import os

_isinstance, _str, _type = isinstance, str, type


def display(content):
    """display(content: str | os.PathLike) -> None

    Shows HTML to the user under this execution's result, in MCP clients that
    render MCP Apps.
    - content is HTML (any string with a "<"), or the path of a file that holds
      it, relative to /workspace: display("page.html").
    - One view per execution: the last display() wins. The view is for the
      user; still return the data you need as the last expression.
    - Tailwind CSS (v4) and daisyUI (v5) are loaded: use their classes
      (class="btn btn-primary", class="table table-zebra").
    - Images as data: URIs and inline SVG work; the view cannot fetch from the
      internet: fetch data in Python and put it in the HTML.
    - With the workspace served as an app, await pbx.call("route", body) in the
      view's JavaScript reaches your @api handlers (POST by default;
      {method: "GET"} for GET; a path without a leading / gets /api/ in front)."""
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
    import _pbx_display  # registered by the runner after every start

    _pbx_display.show(_str.__str__(html))


def prepare():
    builtins.display = display
