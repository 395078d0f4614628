"""``symbolic-attn compare MODULE:FUNCTION``: hold a numeric implementation to the exact result.

This is the one command that runs code: the function the user names, on the user's
explicit request.  ``MODULE`` is a dotted module name (found from the current directory
first) or a path to a ``.py`` file; ``FUNCTION`` is called as ``fn(q, k, v, mask)``.

The module is imported, and the function called, only in a child process
(:mod:`symbolic_attn.numerics.isolation`): its printing, exits, crashes and threads cannot
reach the report.  Exit status: 0 when every case is within the dtype's bounds, 1
otherwise (an exception raised by the function is that case's error verdict), 2 when the
function cannot be loaded, or its process ends, is killed or replies malformed before a
result, or ``--timeout`` runs out (one line on stderr, no report).
"""

import argparse
import importlib
import importlib.util
import os
import re
import sys
from pathlib import Path

from symbolic_attn.cli.options import add_format_option, examples_epilog
from symbolic_attn.errors import ImplementationError, InputFileError, safe_text, shown
from symbolic_attn.exact.source import MODULE, check_file
from symbolic_attn.model.masks import EMPTY_ROW_POLICIES
from symbolic_attn.numerics.adapters import CONVENTIONS, KEY_CONVENTIONS
from symbolic_attn.numerics.modules import ModuleKernel, as_kernel
from symbolic_attn.numerics.backends import FORMATS
from symbolic_attn.numerics.battery import MAX_RANDOM
from symbolic_attn.render.columns import pieces, terminal_columns

__all__ = ["add_parser", "run", "load_function"]

_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def add_parser(subparsers):
    """Register the ``compare`` subcommand; its handler returns the exit status."""
    parser = subparsers.add_parser(
        "compare",
        help="test a numeric attention implementation against the exact result",
        description="Run the battery of exact cases through MODULE:FUNCTION (called as fn(q, k, v, mask)), "
        "hold every stage to the float error bound of the dtype, and name the classic bug it has.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=examples_epilog(
            "symbolic-attn compare mypackage.attn:attention",
            "symbolic-attn compare path/to/file.py:attention --dtype float64 --cases 32 --seed 1",
            "symbolic-attn compare attn.py:sdpa --mask-convention block --empty-row zeros --format json",
            notes="The function is imported and called only in a child process. Exit status: 0 every case\n"
                  "within the dtype's bounds, 1 otherwise, 2 when the function cannot be loaded or its process fails.",
        ),
    )
    parser.add_argument("target", metavar="MODULE:FUNCTION", help="e.g. mypackage.attn:attention or path/to/file.py:attention")
    parser.add_argument("--dtype", choices=tuple(FORMATS), default="float32", help="input dtype (default: float32)")
    parser.add_argument("--cases", type=_count, default=8, metavar="N", help=f"random cases besides the fixed ones (0..{MAX_RANDOM}, default 8)")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the random cases (default 0)")
    parser.add_argument("--mask-convention", choices=(*CONVENTIONS, *KEY_CONVENTIONS), default="keep",
                        help="how the function receives the mask: keep (True = attend), block (True = blocked), "
                        "additive (0 / -inf), additive_min (0 / finfo.min); per key: key_padding (True = padding), "
                        "hf_attention_mask (1 = token, 0 = padding)")
    parser.add_argument("--empty-row", choices=tuple(EMPTY_ROW_POLICIES), default="error",
                        help="what a fully masked row must give (default error: no such case is run)")
    add_format_option(parser, ("text", "json"))
    parser.set_defaults(handler=run)
    return parser


def _count(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {shown(text)!r}") from None
    if not 0 <= value <= MAX_RANDOM:
        raise argparse.ArgumentTypeError(f"expected 0..{MAX_RANDOM}, got {value}")
    return value


def load_function(target: str):
    """The callable named by ``MODULE:FUNCTION`` (imports the module: runs its code)."""
    if target.count(":") != 1:
        raise ImplementationError(f"expected MODULE:FUNCTION, got {shown(target)!r}")
    module_name, function_name = target.split(":")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", function_name):
        raise ImplementationError(f"{shown(target)!r}: {shown(function_name)!r} is not a function name")
    if module_name.endswith(".py"):
        module = _load_file(Path(module_name), target)
    elif _DOTTED.match(module_name):
        module = _import(module_name, target)
    else:
        raise ImplementationError(f"{shown(target)!r}: {shown(module_name)!r} is neither a module name nor a .py file")
    function = getattr(module, function_name, None)
    if function is None:
        raise ImplementationError(f"{shown(target)!r}: module {module_name} has no attribute {function_name}")
    if not callable(function):
        raise ImplementationError(f"{shown(target)!r}: {function_name} is a {type(function).__name__}, not a function")
    kernel = as_kernel(function)  # a Hugging Face-style function is read as a kernel (in the child)
    if isinstance(kernel, ModuleKernel):
        raise ImplementationError(f"{shown(target)!r} is a module ({kernel.name}): the command runs attention functions; "
                                  "compare a module in process with symbolic_attn.testing.run_battery")
    return kernel


def _import(name, target):
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(name)
    except BaseException as error:  # the user's module: any failure to import (even exit()) is reported
        raise ImplementationError(f"{shown(target)!r}: cannot import {name}: {type(error).__name__}: {shown(str(error), 120)}") from None
    finally:
        if added:
            sys.path.remove(cwd)


def _load_file(path: Path, target):
    if not os.path.lexists(path):
        raise ImplementationError(f"{shown(target)!r}: no such file {shown(str(path))}")
    try:  # the one file reader's checks (a FIFO would block the import, a device never end)
        check_file(path, MODULE)
    except InputFileError as error:
        raise ImplementationError(f"{shown(target)!r}: {error}") from None
    name = "_symbolic_attn_compare_" + re.sub(r"\W", "_", path.stem)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except BaseException as error:  # the user's file (even exit())
        raise ImplementationError(f"{shown(target)!r}: cannot load {shown(str(path))}: {type(error).__name__}: {shown(str(error), 120)}") from None
    return module


def run(args) -> int:
    """Run the battery on the function, loaded and called in a child process; print.

    0 when every case passes, else 1.  What the implementation printed (its file
    descriptors 1 and 2, captured in the child) is shown after the text report, or on
    stderr beside the JSON, never inside it.
    """
    from symbolic_attn.numerics.isolation import Isolated
    from symbolic_attn.numerics.suite import run_battery  # only this command needs the battery

    with Isolated(args.target, load_function) as function:
        report = run_battery(function, dtype=args.dtype, cases=args.cases, seed=args.seed,
                             mask_convention=args.mask_convention, empty_row=args.empty_row)
        printed = function.printed()
    if args.format == "json":
        sys.stdout.write(report.to_json())
        if printed:
            sys.stderr.write(_printed_section(printed))
    else:
        width = terminal_columns()
        sys.stdout.write(report.table(width) + (_printed_section(printed, width) if printed else ""))
    return 0 if report.passed else 1


def _printed_section(printed: str, width: int | None = None) -> str:
    """The implementation's output, each line escaped (it may hold terminal controls); in
    the text report a line wider than ``width`` goes on over the next lines, after ``  : ``."""
    lines = printed.removesuffix("\n").split("\n")  # a CR stays inside its line, escaped
    out = []
    for line in lines:
        first, *rest = pieces(safe_text(line, None), max((width or 0) - 4, 20)) if width else [safe_text(line, None)]
        out += [f"  | {first}\n"] + [f"  : {piece}\n" for piece in rest]
    note = " (a line too long goes on after ':')" if len(out) > len(lines) else ""
    return f"\nthe implementation printed{note}:\n" + "".join(out)
