"""``symbolic-attn web build --out DIR`` and ``symbolic-attn web serve [DIR] [--port N]``.

``build`` writes the static site of :mod:`symbolic_attn.web.build` (the toolkit in a
browser tab through Pyodide; downloads pinned by version and sha256, cached between
builds, ``--offline`` to use the cache alone) and prints the size of each part.
``serve`` serves a built site on 127.0.0.1 only until interrupted.  Exit status: 0 done,
2 bad input or a failed build (one line on stderr: what, where, the offending value).
"""

from __future__ import annotations

import argparse
import sys

from symbolic_attn.cli.options import examples_epilog
from symbolic_attn.errors import ParseError

__all__ = ["add_parser", "run_build", "run_serve"]


def _port(text: str) -> int:
    if not text.strip().isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number from 0 to 65535, got {text[:20]!r}")
    return int(text)


def add_parser(subparsers) -> None:
    """Register ``web`` with its two subcommands, ``build`` and ``serve``."""
    parser = subparsers.add_parser(
        "web",
        help="build the static page (the toolkit in the browser) or serve it on 127.0.0.1",
        description="The static page students open in a browser: exact hand calculations, claim checking and "
                    "step checking, computed in the tab by Pyodide; nothing is fetched after load.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=examples_epilog(
            "symbolic-attn web build --out site/",
            "symbolic-attn web build --out site/ --cache ~/web-cache --offline",
            "symbolic-attn web serve site/ --port 8000",
            notes="Downloads are kept in --cache DIR (default $SYMBOLIC_ATTN_WEB_CACHE, else ~/.cache/symbolic-attn/"
                  "web).\nExit status: 0 done, 2 bad input or a failed build (one line on stderr).",
        ),
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=type(parser))
    actions.required = True
    build = actions.add_parser(
        "build", help="write the static site into a folder",
        description="Write the static site (about 27 MB: Pyodide, KaTeX, the wheels, the page) into DIR. Every "
                    "download is pinned by version and sha256 and kept in the cache folder; the same source gives the "
                    "same bytes.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=examples_epilog(
            "symbolic-attn web build --out site/",
            "SYMBOLIC_ATTN_WEB_CACHE=~/web-cache symbolic-attn web build --out site/",
            "symbolic-attn web build --out site/ --cache ~/web-cache --offline   # no download",
            notes="Exit status: 0 built, 2 a failed download, a hash that is not the pinned one, or a folder that "
                  "cannot be written\n(one line on stderr).",
        ),
    )
    build.add_argument("--out", metavar="DIR", required=True, help="the folder to write (replaced as a whole)")
    build.add_argument("--cache", metavar="DIR", default=None,
                       help="where downloads are kept (default: $SYMBOLIC_ATTN_WEB_CACHE, else "
                            "~/.cache/symbolic-attn/web)")
    build.add_argument("--offline", action="store_true", help="download nothing: every file must be in the cache")
    build.set_defaults(handler=run_build)
    serve = actions.add_parser(
        "serve", help="serve a built site on 127.0.0.1",
        description="Serve a built site on 127.0.0.1 (never another address) until Ctrl-C.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=examples_epilog(
            "symbolic-attn web serve site/",
            "symbolic-attn web serve site/ --port 0   # any free port",
            notes="Exit status: 0 stopped with Ctrl-C, 2 no site in DIR or the port cannot be used (one line on "
                  "stderr).",
        ),
    )
    serve.add_argument("dir", metavar="DIR", nargs="?", default="site", help="the built site (default: site)")
    serve.add_argument("--port", type=_port, default=8000, metavar="N", help="the port (default 8000; 0 = any free)")
    serve.set_defaults(handler=run_serve)


def run_build(args: argparse.Namespace) -> int:
    """Build the site; print each part's size."""
    from symbolic_attn.web.build import build_site

    if not args.out.strip():
        raise ParseError("--out: expected a folder, got ''")
    sizes = build_site(args.out, cache=args.cache, offline=args.offline)
    total = sum(sizes.values())
    parts = ", ".join(f"{name} {size / 1e6:.1f} MB" for name, size in sizes.items())
    print(f"wrote {args.out}: {total / 1e6:.1f} MB ({parts})")
    return 0


def run_serve(args: argparse.Namespace) -> int:
    """Serve until interrupted (Ctrl-C ends it with status 0)."""
    from symbolic_attn.web.serve import make_server

    server = make_server(args.dir, args.port, quiet=False)
    host, port = server.server_address[:2]
    print(f"serving {args.dir} on http://{host}:{port}/ (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    print("stopped", file=sys.stderr)
    return 0
