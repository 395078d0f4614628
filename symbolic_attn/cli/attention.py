"""``symbolic-attn attention``: check a hand calculation, stage by stage.

Example::

    symbolic-attn attention --q "[[1,0],[0,1],[1,1]]" --k "[[1,0],[0,1],[1,1]]" \\
        --v "[[2,0],[0,2],[2,2]]" --mask causal

What is printed is chosen by ``--format text|latex|markdown|json``, ``--stage PATH``
(repeatable), ``--exact all|nontrivial|none`` (closed-form lines in text; default
nontrivial: none for a rational entry) and ``--decimals-only`` (the certified decimals
alone); see :mod:`symbolic_attn.cli.terminal`.
"""

from __future__ import annotations

import argparse
import re

from symbolic_attn.cli import terminal
from symbolic_attn.cli.options import MAX_DIGITS, add_format_option, examples_epilog, parse_digits
from symbolic_attn.model.attention import attention, attention_from_scores
from symbolic_attn.errors import FloatInputError, InputLimitError, MaskError, ParseError, doing, safe_text
from symbolic_attn.exact.convert import to_exact, to_matrix
from symbolic_attn.model.masks import EMPTY_ROW_POLICIES, Mask
from symbolic_attn.exact.limits import Limits

__all__ = ["add_parser", "parse_mask_spec"]

#: The command prints every closed form of every stage, which grows quickly with the size
#: (16 x 16 takes about a second, 32 x 32 over ten): it is for hand calculations.  Larger
#: problems belong to the Python API, whose decimals stay fast without printing.
MAX_TOKENS = 16
TEXT_LIMITS = Limits(max_text_length=20_000, max_rows=32, max_cols=32, max_entries=1_024)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "attention",
        help="compute attention exactly, every stage with decimals beside it",
        description=(
            "Exact scaled dot-product attention softmax(Q K^T * scale) V. Matrices are nested lists "
            'such as "[[1,0],[0,1]]"; entries may be integers, decimals (0.43 is exactly 43/100), '
            "fractions, sqrt(), exp(), ln(), e, pi."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=examples_epilog(
            'symbolic-attn attention --q "[[1,0],[0,1],[1,1]]" --k "[[1,0],[0,1],[1,1]]" --v "[[2,0],[0,2],[2,2]]"',
            'symbolic-attn attention --scores "[[0, ln(2), ln(3)]]" --v "[[1,0],[0,2],[3,1]]" --mask "keep:[[1,1,0]]"',
            'symbolic-attn attention --q "[[1,0],[0,1]]" --k "[[1,0],[0,1]]" --v "[[1],[2]]" --stage weights --exact all',
            'symbolic-attn attention --q "[[1,0],[0,1]]" --k "[[1,0],[0,1]]" --v "[[1],[2]]" --decimals-only --digits 6',
            'symbolic-attn attention --q "[[1,0],[0,1]]" --k "[[1,0],[0,1]]" --v "[[1],[2]]" --format markdown',
            notes="In text, blocked entries are marked: a blocked score in parentheses, a masked score -inf (shown "
                  "\u2212\u221e),\na weight the mask makes exactly 0 as \u00b7. Exit status: 0 done, 2 bad input (one line "
                  "on stderr).",
        ),
    )
    parser.add_argument("--q", metavar="MATRIX", help="queries Q (n x d_k)")
    parser.add_argument("--k", metavar="MATRIX", help="keys K (m x d_k)")
    parser.add_argument("--v", metavar="MATRIX", required=True, help="values V (m x d_v)")
    parser.add_argument("--scores", metavar="MATRIX", help="given scores (n x m), already scaled, instead of --q/--k")
    parser.add_argument(
        "--mask",
        default="none",
        metavar="SPEC",
        help="none | causal | keep:MATRIX (1 = may attend) | block:MATRIX (1 = blocked) | additive:MATRIX (0 or -inf "
             "added to the scores) | padding:VALID (default: none)",
    )
    parser.add_argument(
        "--scale",
        default=None,
        metavar="SCALE",
        help="default (1/sqrt(d_k)) | none | an exact expression such as 1/2 (default: 1/sqrt(d_k), or none with --scores)",
    )
    parser.add_argument(
        "--empty-row",
        default="error",
        choices=sorted(EMPTY_ROW_POLICIES),
        help="what a row with no allowed key does (default: error)",
    )
    parser.add_argument("--digits", default="3", metavar="N",
                        help=f"decimal places shown in text, LaTeX and Markdown, 0 to {MAX_DIGITS} (default 3); "
                             "JSON always has 30 significant digits")
    add_format_option(parser, ("text", "latex", "markdown", "json"))
    stage = parser.add_argument("--stage", action="append", metavar="PATH",
                                help="show only this stage (repeatable): " + ", ".join(terminal.STAGE_PATHS))
    stage.completion_choices = terminal.STAGE_PATHS  # for `symbolic-attn completion`
    parser.add_argument("--exact", choices=terminal.EXACT_MODES, default=None,
                        help="closed-form lines in text: all, nontrivial (default: none for a rational entry), "
                             "none (the grids alone)")
    parser.add_argument("--decimals-only", action="store_true",
                        help="only the certified decimals, no closed form (fast; every format)")
    parser.set_defaults(handler=run)


def parse_mask_spec(spec: str, n: int, m: int) -> Mask:
    """A mask from its command-line spelling.

    >>> parse_mask_spec("keep:[[1,0],[1,1]]", 2, 2)
    Mask.keep([[1, 0], [1, 1]])
    >>> parse_mask_spec("upper", 2, 2)
    Traceback (most recent call last):
    ...
    symbolic_attn.errors.MaskError: --mask: unknown mask 'upper': expected none, causal, keep:MATRIX, block:MATRIX, additive:MATRIX or padding:VALID
    """
    kind, colon, argument = spec.partition(":")
    kind = kind.strip()
    if kind == "none" and not colon:
        return Mask.full(n, m)
    if kind == "causal" and not colon:
        return Mask.causal(n, m)
    if kind in ("keep", "block") and argument:
        grid = to_matrix(argument, name=f"--mask {kind}", limits=TEXT_LIMITS)
        try:
            mask = Mask.keep(grid.tolist()) if kind == "keep" else Mask.block(grid.tolist())
        except MaskError as error:  # "entry (1,1) is 2": say which option it came from
            raise type(error)(f"--mask {kind}: {error}") from None
        if mask.shape != (n, m):
            raise MaskError(f"--mask {kind}: the grid is {mask.shape[0]}x{mask.shape[1]}, the scores are {n}x{m}")
        return mask
    if kind == "additive" and argument:  # softmax(S + M): 0 allowed, -inf blocked
        grid = to_matrix(argument, name="--mask additive", limits=TEXT_LIMITS)
        try:
            mask = Mask.additive(grid.tolist())
        except MaskError as error:
            raise type(error)(f"--mask additive: {error}") from None
        if mask.shape != (n, m):
            raise MaskError(f"--mask additive: the grid is {mask.shape[0]}x{mask.shape[1]}, the scores are {n}x{m}")
        return mask
    if kind == "padding" and argument:
        if not re.fullmatch(r"[0-9]{1,6}", argument.strip()):
            raise MaskError(f"--mask padding: expected a whole number of valid keys, got {safe_text(repr(argument), 40)}")
        return Mask.padding(n, m, int(argument))
    raise MaskError(
        f"--mask: unknown mask {safe_text(repr(spec), 40)}: expected none, causal, keep:MATRIX, block:MATRIX, additive:MATRIX or padding:VALID"
    )


def _check_size(n: int, m: int) -> None:
    for what, count in (("queries (n)", n), ("keys (m)", m)):
        if count > MAX_TOKENS:
            raise InputLimitError(
                f"{count} {what} exceed the attention command's limit of {MAX_TOKENS}: it prints every closed "
                "form; use the Python API (symbolic_attn.model.attention) for larger matrices"
            )


def _digits(text: str) -> int:
    return parse_digits(text)


def _scale(text):
    """``--scale``: None (the default), "default", "none", or an exact expression."""
    if text is None or text.strip() in ("default", "none"):
        return None if text is None else text.strip()
    try:
        return to_exact(text, limits=TEXT_LIMITS)
    except (ParseError, FloatInputError) as error:
        raise type(error)(f"--scale: {error}") from None


def _matrix(text, option):
    with doing(f"reading {option}"):
        return to_matrix(text, name=option, limits=TEXT_LIMITS)


def run(args: argparse.Namespace) -> int:
    digits = _digits(args.digits)
    if args.decimals_only and args.exact not in (None, "none"):
        raise ParseError(f"--decimals-only prints no closed form: it cannot go with --exact {args.exact}")
    decimals_only = args.decimals_only or args.exact == "none"
    stages = list(dict.fromkeys(args.stage)) if args.stage else None
    options = {"on_empty_row": args.empty_row}
    value = _matrix(args.v, "--v")
    scale = _scale(args.scale)
    if args.scores is not None:
        if args.q is not None or args.k is not None:
            raise ParseError("give either --scores or --q and --k, not both")
        scores = _matrix(args.scores, "--scores")
        _check_size(scores.rows, scores.cols)
        if scale == "default":
            raise ParseError("--scale default needs d_k, which --scores does not have: use --scale none or an expression")
        mask = parse_mask_spec(args.mask, scores.rows, scores.cols)
        with doing("computing attention from the given scores"):
            result = attention_from_scores(scores, value, mask=mask, scale=scale or "none", **options)
    else:
        if args.q is None or args.k is None:
            raise ParseError("give --q and --k (or --scores)")
        query = _matrix(args.q, "--q")
        key = _matrix(args.k, "--k")
        _check_size(query.rows, key.rows)
        mask = parse_mask_spec(args.mask, query.rows, key.rows)
        with doing("computing the scores Q K^T"):
            result = attention(query, key, value, mask=mask, scale=scale or "default", **options)
    what = "certified decimals" if decimals_only else "closed forms and certified decimals"
    with doing(f"computing the stages ({what}) for --format {args.format}"):
        if args.format == "json":
            text = terminal.json_report(result, stages, decimals_only)
        elif args.format == "latex":
            text = terminal.latex_report(result, digits, stages, decimals_only)
        elif args.format == "markdown":
            text = terminal.markdown_report(result, digits, args.mask, stages, decimals_only)
        else:
            exact = "none" if decimals_only else args.exact or "nontrivial"
            text = terminal.text_report(result, digits, mask_spec=args.mask, stages=stages, exact=exact)
    print(text)
    return 0
