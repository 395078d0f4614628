"""``symbolic-attn autograder gradescope|prairielearn|run|example-course``: deployable graders.

* ``autograder gradescope KEY.toml --out DIR``: ``DIR/autograder.zip`` (and its unpacked
  tree ``DIR/autograder/``) to upload as a Gradescope autograder: ``setup.sh``,
  ``run_autograder``, ``key/KEY.toml`` and ``wheels/`` (this project's wheel, built now,
  and its dependencies' wheels, downloaded now, so that nothing is fetched at grading time);
* ``autograder prairielearn KEY.toml --out DIR``: a PrairieLearn external-grader folder
  (``Dockerfile`` on python:3.11-slim, ``grade.sh``, ``tests/KEY.toml``, ``info.json``,
  ``wheels/``);
* ``autograder run gradescope|prairielearn KEY.toml FOLDER --results FILE``: what the
  bundles' scripts run: every solution file in ``FOLDER`` graded as ONE submission, the
  platform's ``results.json`` written (always, even when the key cannot be read);
* ``autograder example-course DIR``: a copy of the example course shipped in the package.

``--out DIR`` must be new, empty or an earlier bundle of the same kind (replaced whole).
``--no-download`` carries only this project's wheel (the dependencies then come from PyPI
when the bundle is set up); ``--wheel FILE`` carries that wheel instead of building one.
Exit status 0 when done, 2 for a bad key, a refused ``--out`` or a failed build.
"""

import argparse

from symbolic_attn.cli.options import examples_epilog

__all__ = ["add_parser"]

_EXAMPLES = {
    "autograder": ("symbolic-attn autograder example-course course/",
                   "symbolic-attn autograder gradescope course/exercise.toml --out bundle/",
                   "symbolic-attn autograder prairielearn course/exercise.toml --out grader/ --no-download"),
    "gradescope": ("symbolic-attn autograder gradescope course/exercise.toml --out bundle/   # upload bundle/autograder.zip",
                   "symbolic-attn autograder gradescope key.toml --out bundle/ --wheel dist/symbolic_attn-0.1.0-py3-none-any.whl"),
    "prairielearn": ("symbolic-attn autograder prairielearn course/exercise.toml --out grader/",
                     "symbolic-attn autograder prairielearn key.toml --out grader/ --no-download"),
    "run": ("symbolic-attn autograder run gradescope key.toml /autograder/submission "
            "--results /autograder/results/results.json",
            "symbolic-attn autograder run prairielearn key.toml /grade/student --results /grade/results/results.json"),
    "example-course": ("symbolic-attn autograder example-course course/",
                       "symbolic-attn grade course/exercise.toml course/submissions/"),
}
_EXIT = "Exit status: 0 done, 2 a bad key, a refused --out or a failed build."


def _help(name):
    return {"formatter_class": argparse.RawDescriptionHelpFormatter,
            "epilog": examples_epilog(*_EXAMPLES[name], notes=_EXIT)}


def add_parser(subparsers):
    """Register ``autograder`` and its subcommands; each handler returns the exit status."""
    parser = subparsers.add_parser(
        "autograder",
        help="build a Gradescope or PrairieLearn autograder that grades one submission against an answer key",
        description="Deployable graders: a Gradescope autograder zip, a PrairieLearn external-grader folder, "
                    "and the command their scripts run.",
        **_help("autograder"),
    )
    platforms = parser.add_subparsers(dest="platform", metavar="WHAT", parser_class=type(parser))
    platforms.required = True
    for name, text in (("gradescope", "DIR/autograder.zip (and its unpacked tree) for a Gradescope assignment"),
                       ("prairielearn", "a PrairieLearn external-grader folder: Dockerfile, grade.sh, tests/")):
        bundle = platforms.add_parser(name, help=text, description=text, **_help(name))
        bundle.add_argument("key", metavar="KEY.toml", help="the exercise file with [[questions]] (the answer key)")
        bundle.add_argument("--out", metavar="DIR", required=True, help="the folder to write (new, empty or an "
                                                                         "earlier bundle)")
        bundle.add_argument("--wheel", metavar="FILE", help="carry this symbolic_attn-*.whl instead of building one")
        bundle.add_argument("--no-download", action="store_true",
                            help="do not download the dependency wheels (setup then installs them from PyPI)")
        bundle.set_defaults(handler=run_bundle)
    runner = platforms.add_parser(
        "run", help="grade one upload folder as ONE submission and write the platform's results.json",
        description="What the bundles run: every solution file in FOLDER (any depth) graded as one submission.",
        **_help("run"))
    runner.add_argument("format", choices=("gradescope", "prairielearn"), help="the results.json format")
    runner.add_argument("key", metavar="KEY.toml", help="the answer key")
    runner.add_argument("folder", metavar="FOLDER", help="the student's uploaded files")
    runner.add_argument("--results", metavar="FILE", required=True, help="the results.json to write")
    runner.set_defaults(handler=run_grading)
    course = platforms.add_parser("example-course", help="copy the example course shipped in the package to DIR",
                                  description="Copy the example course (an answer key and 13 solutions) to DIR.",
                                  **_help("example-course"))
    course.add_argument("dir", metavar="DIR", help="a new folder")
    course.set_defaults(handler=run_example_course)
    return parser


def run_bundle(args) -> int:
    from symbolic_attn.grading import bundles

    build = bundles.build_gradescope if args.platform == "gradescope" else bundles.build_prairielearn
    made = build(args.key, args.out, wheel=args.wheel, download=not args.no_download)
    where = f"{args.out}/autograder.zip" if args.platform == "gradescope" else f"{args.out}/"
    print(f"wrote {where}: {bundles.describe(made)}")
    return 0


def run_grading(args) -> int:
    from symbolic_attn.grading.bundles import grade_and_write

    return grade_and_write(args.format, args.key, args.folder, args.results)


def run_example_course(args) -> int:
    import os
    import shutil

    from symbolic_attn.errors import OutputError
    from symbolic_attn.grading.bundles import example_course

    if os.path.lexists(args.dir):
        raise OutputError(f"{args.dir}: already exists (give a new folder)")
    shutil.copytree(example_course(), args.dir, ignore=shutil.ignore_patterns("__pycache__"))
    print(f"wrote {args.dir}: exercise.toml (the answer key), expected.toml, submissions/")
    return 0
