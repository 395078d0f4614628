"""``symbolic-attn attention``: check a hand calculation, stage by stage.

Example::

    symbolic-attn attention --q "[[1,0],[0,1],[1,1]]" --k "[[1,0],[0,1],[1,1]]" \\
        --v "[[2,0],[0,2],[2,2]]" --mask causal
"""

from __future__ import annotations

import argparse
import re

from symbolic_attn.model.attention import attention, attention_from_scores
from symbolic_attn.render.display import json_report, latex_report, text_report
from symbolic_attn.errors import FloatInputError, InputLimitError, MaskError, ParseError, doing, safe_text
from symbolic_attn.exact.convert import to_exact, to_matrix
from symbolic_attn.model.masks import EMPTY_ROW_POLICIES, Mask
from symbolic_attn.exact.limits import Limits

__all__ = ["add_parser", "parse_mask_spec"]

MAX_DIGITS = 100
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
    )
    parser.add_argument("--q", metavar="MATRIX", help="queries Q (n x d_k)")
    parser.add_argument("--k", metavar="MATRIX", help="keys K (m x d_k)")
    parser.add_argument("--v", metavar="MATRIX", required=True, help="values V (m x d_v)")
    parser.add_argument("--scores", metavar="MATRIX", help="given scores (n x m), already scaled, instead of --q/--k")
    parser.add_argument(
        "--mask",
        default="none",
        metavar="SPEC",
        help="none | causal | keep:MATRIX (1 = may attend) | block:MATRIX (1 = blocked) | padding:VALID (default: none)",
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
    parser.add_argument("--digits", default="3", metavar="N", help=f"decimal places shown, 0 to {MAX_DIGITS} (default 3)")
    parser.add_argument("--format", choices=("text", "latex", "json"), default="text", help="output format (default text)")
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
    if not re.fullmatch(r"[0-9]{1,3}", text.strip()) or int(text) > MAX_DIGITS:
        raise ParseError(f"--digits must be a whole number between 0 and {MAX_DIGITS}, got {safe_text(repr(text), 30)}")
    return int(text)


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
    with doing(f"computing every stage (closed forms and certified decimals) for --format {args.format}"):
        if args.format == "json":
            text = json_report(result)
        elif args.format == "latex":
            text = latex_report(result, digits)
        else:
            text = text_report(result, digits, mask_spec=args.mask)
    print(text)
    return 0
