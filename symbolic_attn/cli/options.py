"""Options shared by several subcommands, read as strictly as the rest of the command line.

``--jobs N`` (``derive``, ``list --verify``, ``grade``): how many processes work side by
side, a whole number from 1 to :data:`symbolic_attn.proofs.parallel.MAX_JOBS`; by default
every core.  A bad value is one line of usage error, exit 2.

>>> import argparse
>>> parser = argparse.ArgumentParser(prog="demo")
>>> add_jobs_option(parser, "worker processes")
>>> parser.parse_args(["--jobs", "3"]).jobs
3
"""

import argparse

__all__ = ["add_jobs_option"]


def add_jobs_option(parser, what: str) -> None:
    """``--jobs N`` on a subcommand: ``what`` N processes do (default: every core)."""
    from symbolic_attn.proofs.parallel import available_cores

    parser.add_argument("--jobs", type=_jobs, default=None, metavar="N",
                        help=f"{what} (default: the number of cores, {available_cores()})")


def _jobs(text: str) -> int:
    """``--jobs N``: a whole number (ASCII digits) from 1 to MAX_JOBS."""
    from symbolic_attn.proofs.parallel import MAX_JOBS

    text = text.strip()
    if not (text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_JOBS):
        raise argparse.ArgumentTypeError(f"--jobs must be from 1 to {MAX_JOBS} (a whole number), got {text[:20]!r}")
    return int(text)
