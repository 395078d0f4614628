"""A local server for a built site: 127.0.0.1 only, the site's folder only.

``make_server(folder, port)`` returns a :class:`http.server.ThreadingHTTPServer` bound to
127.0.0.1 (port 0 picks a free one) that serves the files of ``folder`` with the types a
browser needs for WebAssembly and module scripts, sends ``Cache-Control: no-store`` (a
rebuilt site is seen at once) and writes no log line per request unless asked.
"""

from __future__ import annotations

import functools
import http.server
import os
from pathlib import Path

from symbolic_attn.errors import OutputError, shown

__all__ = ["make_server", "HOST"]

#: The only address the server listens on.
HOST = "127.0.0.1"
_TYPES = {".wasm": "application/wasm", ".mjs": "text/javascript", ".js": "text/javascript",
          ".json": "application/json", ".whl": "application/zip", ".zip": "application/zip",
          ".woff2": "font/woff2", ".css": "text/css", ".html": "text/html; charset=utf-8"}


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **_TYPES}
    quiet = True

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def list_directory(self, path):  # no folder listings: the site is its files
        self.send_error(404, "not found")
        return None

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
        if not self.quiet:
            super().log_message(format, *args)


def make_server(folder: str | os.PathLike[str], port: int = 8000, quiet: bool = True) -> http.server.ThreadingHTTPServer:
    """A server of ``folder`` on 127.0.0.1:``port`` (not yet serving: call ``serve_forever``)."""
    root = Path(folder)
    if not (root / "index.html").is_file():
        raise OutputError(f"{shown(str(root), 120)}: no index.html there: build the site first "
                          "(symbolic-attn web build --out DIR)")
    handler = functools.partial(type("Handler", (_Handler,), {"quiet": quiet}), directory=str(root))
    try:
        return http.server.ThreadingHTTPServer((HOST, port), handler)
    except OSError as error:
        raise OutputError(f"--port {port}: cannot listen on {HOST}:{port}: {error.strerror}") from None
