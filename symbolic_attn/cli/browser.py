"""The command line inside the browser: what the page's Web Worker calls through Pyodide.

:func:`run_json` takes ``{"argv": [...], "files": {name: text}}`` as JSON, writes the files
into the working folder (Pyodide's in-memory file system: the page's text is never sent
anywhere), runs :func:`symbolic_attn.cli.main` on ``argv`` exactly as the console command
does, and returns ``{"status", "stdout", "stderr"}`` as JSON (for ``steps``, also
``mistakes``: the sentence of each known mistake the JSON names by id, which the text
format prints).  So every message the page
shows is the one the command line gives for the same input.  Only the commands the page
offers (``attention``, ``run``, ``check``, ``steps``) are run, and file names are plain names in
the working folder.  The command's own ``--timeout`` is off (``--timeout 0``): SIGALRM
cannot interrupt WebAssembly, so the page stops a computation after the same default
number of seconds by ending the worker.

>>> import json
>>> answer = json.loads(run_json(json.dumps({"argv": ["attention", "--v", "[[1]]"], "files": {}})))
>>> answer["status"], answer["stderr"]
(2, 'symbolic-attn: error: give --q and --k (or --scores)\\n')
"""

from __future__ import annotations

import contextlib
import io
import json
import re

__all__ = ["run_json", "COMMANDS"]

#: The commands the page runs.
COMMANDS = ("attention", "run", "check", "steps")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,60}")


def run_json(request: str) -> str:
    """Run one command as the console does; returns its exit status and what it printed."""
    from symbolic_attn.cli import main

    data = json.loads(request)
    argv = [str(item) for item in data["argv"]]
    if not argv or argv[0] not in COMMANDS:
        raise ValueError(f"the page runs only {', '.join(COMMANDS)}, got {argv[:1]!r}")
    for name, text in dict(data.get("files", {})).items():
        if not _NAME.fullmatch(name):
            raise ValueError(f"a file name of the page must be a plain name, got {name!r}")
        with open(name, "w", encoding="utf-8", newline="") as stream:
            stream.write(str(text))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(["--timeout", "0", *argv])
        except SystemExit as stop:  # argparse: --help, or a usage error (exit 2)
            status = stop.code if isinstance(stop.code, int) else 2
    answer = {"status": status, "stdout": out.getvalue(), "stderr": err.getvalue()}
    if argv[0] == "steps" and status in (0, 1):
        answer["mistakes"] = _mistake_sentences(answer["stdout"])
    return json.dumps(answer)


def _mistake_sentences(stdout: str) -> dict[str, str]:
    """The sentence of each known mistake named in ``steps --format json`` output: the
    text format prints it ("mistake: ..."), the JSON names only its id."""
    from symbolic_attn.model.mistakes import CATALOGUE

    names = {step.get("diagnosis") for chain in json.loads(stdout).get("chains", []) for step in chain.get("steps", [])}
    return {name: CATALOGUE[name].sentence() for name in sorted(n for n in names if n in CATALOGUE)}
