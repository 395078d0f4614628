"""``symbolic-attn grade EXERCISE.toml SUBMISSION... [--out DIR] [--jobs N] [--gradescope] [--prairielearn] [--format text|markdown|json]``.

SUBMISSION is a solution file (the student id is its name without the extension) or a
folder of them (a sub-folder is one student).  Prints a table (student, score, max, points
per question) that fits the terminal (``COLUMNS``, else its width, else 80 columns), with a progress bar on stderr when stderr is a terminal; ``--format
markdown`` prints the same table in Markdown, ``--format json`` every student's
``STUDENT.json`` object in one document (``{"students": [...], "graded": N,
"not_gradable": K}``).  ``--out DIR``
writes ``grades.csv`` and one ``STUDENT.json`` per student; ``--gradescope`` and
``--prairielearn`` add ``STUDENT/results.json`` in those platforms' formats (both at once:
``STUDENT/gradescope/results.json`` and ``STUDENT/prairielearn/results.json``).

``--out`` is written as one set (:mod:`symbolic_attn.cli.folder`): the old files or the
new ones, never a mix; a folder that holds anything else, or lies inside a submissions
folder, is refused before grading.

Exit status: 0 when every submission was graded (wrong or unreadable answers are grades,
not errors); 1 when any submission was not gradable (empty, binary, nothing readable: the
files are still written, with ``gradable`` false and the reason); 2 for a bad exercise
file, a missing submission path, an ``--out`` refused or bad options.
"""

import argparse
import json
import sys

from symbolic_attn.cli.options import add_format_option, add_jobs_option, examples_epilog
from symbolic_attn.proofs.parallel import available_cores

# The grading modules are imported by the handler, not here: every command builds the
# whole parser, and `derive` or `--help` should not pay for loading the grader.

__all__ = ["add_parser", "run", "summary_table", "summary_markdown", "summary_json"]


def add_parser(subparsers):
    """Register the ``grade`` subcommand; its handler returns the exit status."""
    parser = subparsers.add_parser(
        "grade",
        help="grade students' solutions (Markdown, LaTeX, text) against an exercise's answer key",
        description="Grade a folder of solutions with points, partial and carried-forward credit and feedback.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=examples_epilog(
            "symbolic-attn autograder example-course course/    # an answer key and 13 solutions to try",
            "symbolic-attn grade course/exercise.toml course/submissions/",
            "symbolic-attn grade course/exercise.toml course/submissions/ --out grades/ --gradescope",
            "symbolic-attn grade course/exercise.toml alice.md bob.tex --format json",
            notes="Exit status: 0 when every submission was graded; 1 when any submission was not gradable\n"
                  "(the files are still written, with gradable false and the reason); 2 for a bad exercise file,\n"
                  "a missing submission path, an --out refused or bad options.",
        ),
    )
    parser.add_argument("exercise", metavar="EXERCISE.toml", help="the exercise file with [[questions]]")
    parser.add_argument("submissions", metavar="SUBMISSION", nargs="+", help="a solution file or a folder of them")
    parser.add_argument("--out", metavar="DIR", help="write grades.csv and STUDENT.json files here")
    add_jobs_option(parser, "worker processes")
    parser.add_argument("--gradescope", action="store_true", help="also write STUDENT/results.json for Gradescope")
    parser.add_argument("--prairielearn", action="store_true", help="also write STUDENT/results.json for PrairieLearn")
    add_format_option(parser, ("text", "markdown", "json"), what="what is printed")
    parser.set_defaults(handler=run, parser=parser)
    return parser


def run(args) -> int:
    """Grade, print the table, write the files; 0 when every submission was graded, 1 when
    any was not gradable."""
    if (args.gradescope or args.prairielearn) and not args.out:
        args.parser.error("--gradescope and --prairielearn write files: give --out DIR")
    from symbolic_attn.grading.answer_key import load_answer_key
    from symbolic_attn.grading.batch import discover, grade_all

    jobs = available_cores() if args.jobs is None else args.jobs
    key = load_answer_key(args.exercise)
    if not key.questions:
        from symbolic_attn.errors import ExerciseError

        raise ExerciseError(f"{key.exercise.source}: no [[questions]]: an answer key is needed to grade")
    students = discover(args.submissions, exclude=[args.exercise])
    if args.out:
        from symbolic_attn.cli.folder import check_output_folder

        check_output_folder(args.out, args.submissions)  # before the work, not after it
    progress = _Progress(len(students)) if sys.stderr.isatty() else None
    results = grade_all(key, students, jobs, progress)
    if progress:
        progress.finish()
    show = {"json": summary_json, "markdown": summary_markdown}.get(args.format, summary_table)
    sys.stdout.write(show(results, key))
    if args.out:
        _write(args, results, key)
    return 0 if all(r.gradable for r in results) else 1


#: The narrowest a student id (wrapped, never cut) or a question's name may become.
_STUDENT_FLOOR, _QUESTION_FLOOR = 12, 6
#: A not-gradable reason is cut to this (with ``...``); grades.csv and the JSON keep it whole.
_REASON_WIDTH = 240


def summary_table(results, key, width: int | None = None) -> str:
    """One row per student: id, score, max, then the points of each question; within
    ``width`` columns (default: the terminal's, :func:`~symbolic_attn.render.columns.terminal_columns`).

    A long id or question name wraps in its column; a not-gradable reason stands beside its
    row when it fits there, else below it; questions too many for one table continue in a
    second block of columns, the ids repeated (:func:`~symbolic_attn.render.columns.table`).
    """
    from symbolic_attn.grading.exports import export_text
    from symbolic_attn.grading.feedback import points_text
    from symbolic_attn.render.columns import clip, display_width, table, terminal_columns

    width = terminal_columns() if width is None else width
    header = ["student", "score", "max"] + [export_text(q.name) for q in key.questions]
    rows = [[export_text(r.student), points_text(r.score), points_text(r.max_score)]
            + [points_text(q.points) for q in r.questions] + [""] * (len(key.questions) - len(r.questions))
            for r in results]
    notes = ["" if r.gradable else clip(f"(not gradable: {export_text(r.reason)}", _REASON_WIDTH - 1) + ")"
             for r in results]
    points = [max([display_width(row[i]) for row in rows], default=1) for i in range(3, len(header))]
    floors = [_STUDENT_FLOOR, None, None] + [max(data, min(display_width(name), _QUESTION_FLOOR))
                                            for data, name in zip(points, header[3:])]
    lines = table(header, rows, width, floors=floors, notes=notes)
    total = len(results)
    gradable = sum(r.gradable for r in results)
    lines.append(f"{total} submission{'s' if total != 1 else ''} graded, {total - gradable} not gradable")
    return "\n".join(lines) + "\n"


def summary_markdown(results, key) -> str:
    """The table of :func:`summary_table` in Markdown (cells escaped), then the count."""
    from symbolic_attn.grading.exports import export_text
    from symbolic_attn.grading.feedback import points_text

    def cell(text):
        for char in "\\|`*_[]<>":
            text = text.replace(char, "\\" + char)
        return text

    header = ["student", "score", "max"] + [cell(export_text(q.name)) for q in key.questions] + ["note"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in results:
        note = "" if r.gradable else f"not gradable: {cell(export_text(r.reason)[:200])}"
        row = [cell(export_text(r.student)[:80]), points_text(r.score), points_text(r.max_score)]
        row += [points_text(q.points) for q in r.questions] + [""] * (len(key.questions) - len(r.questions)) + [note]
        lines.append("| " + " | ".join(row) + " |")
    total = len(results)
    gradable = sum(r.gradable for r in results)
    lines += ["", f"{total} submission{'s' if total != 1 else ''} graded, {total - gradable} not gradable"]
    return "\n".join(lines) + "\n"


def summary_json(results, key) -> str:
    """Every student's ``STUDENT.json`` object, in order, with the counts (keys sorted)."""
    document = {"students": [json.loads(r.json()) for r in results], "graded": len(results),
                "not_gradable": sum(not r.gradable for r in results)}
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _write(args, results, key):
    """Every file of the run, written into ``--out`` as one set (:mod:`.folder`)."""
    from symbolic_attn.cli.folder import write_folder
    from symbolic_attn.grading.exports import grades_csv

    documents = {"grades.csv": grades_csv(results, key)}
    formats = [flag for flag in ("gradescope", "prairielearn") if getattr(args, flag)]
    for name, result in zip(_file_names(results), results):
        documents[f"{name}.json"] = result.json()  # the results print themselves
        for flag in formats:
            document = result.gradescope_json() if flag == "gradescope" else result.prairielearn_json()
            documents[f"{name}/" + (f"{flag}/" if len(formats) > 1 else "") + "results.json"] = document
    write_folder(documents, args.out)


def _file_names(results) -> list:
    """A file name per student, unique even where case does not count (macOS, Windows):
    neither ``NAME.json`` nor the folder ``NAME/`` may be another student's, or grades.csv."""
    from symbolic_attn.grading.exports import file_name

    taken, names = {"grades.csv"}, []
    for result in results:
        name = file_name(result.student)
        while name.lower() in taken or f"{name}.json".lower() in taken:
            name += "_"  # two ids that clean to one file name
        taken.update((name.lower(), f"{name}.json".lower()))
        names.append(name)
    return names


class _Progress:
    """A one-line progress bar on stderr (only on a terminal)."""

    def __init__(self, total):
        self.total = total

    def __call__(self, done, total):
        width = 30
        filled = width * done // max(total, 1)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        sys.stderr.flush()

    def finish(self):
        sys.stderr.write("\n")
