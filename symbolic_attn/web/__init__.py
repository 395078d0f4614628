"""The static page: the toolkit in a browser tab, through Pyodide (``symbolic-attn web``).

Owns: what the site is made of (:mod:`~symbolic_attn.web.pins`, every download pinned by
version and sha256), how it is built reproducibly from the registries' packages and this
source tree (:mod:`~symbolic_attn.web.build`), how it is served on 127.0.0.1 for local use
(:mod:`~symbolic_attn.web.serve`), and the page itself (``static/``: HTML, CSS, the page's
script and its Web Worker).  In the browser the worker runs the command line's own
``main`` (:mod:`symbolic_attn.cli.browser`), so every message is the command line's.

May import: :mod:`symbolic_attn.errors` and the standard library (it sits below ``cli``,
which registers the command).
"""

from symbolic_attn.web.build import build_site
from symbolic_attn.web.serve import make_server

__all__ = ["build_site", "make_server"]
