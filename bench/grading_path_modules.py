"""Which of the package's modules the grading path enters, and how many lines they hold.

Runs ``grade`` on the bundled course (examples/course: an answer key and 13 solutions in
many styles) in this process with a profile hook that records the module of every
function called (module and class bodies run at import do not count), then prints the modules entered, their count and their lines.  Run it on
two checkouts to compare the grading path before and after a change:

    python bench/grading_path_modules.py            # this checkout
    PYTHONPATH=/path/to/other python bench/grading_path_modules.py

The figure is a count, not a time, so it does not depend on the machine.
"""

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    import symbolic_attn
    from symbolic_attn.cli import main as cli_main

    package = Path(symbolic_attn.__file__).resolve().parent
    entered: set[str] = set()  # the whole command
    grading: set[str] = set()  # from the grade command's handler on (not the CLI's set-up)
    handler = str(package / "cli" / "grade.py")
    inside = []

    def hook(frame, event, _arg):
        # A function called -- not a module or class body run at import (the CLI imports
        # every command): only function code is "optimized" (CO_OPTIMIZED, flag 1).
        if event == "call" and frame.f_code.co_flags & 1:
            filename = frame.f_code.co_filename
            if filename.startswith(str(package)):
                name = str(Path(filename).relative_to(package))
                entered.add(name)
                if filename == handler and frame.f_code.co_name == "run":
                    inside.append(True)
                if inside:
                    grading.add(name)

    with tempfile.TemporaryDirectory() as out:
        course = ROOT / "examples" / "course"
        sys.setprofile(hook)
        try:
            cli_main(["grade", str(course / "exercise.toml"), str(course / "submissions"), "--out",
                      os.path.join(out, "grades"), "--jobs", "1"])
        except SystemExit:
            pass
        finally:
            sys.setprofile(None)
    lines = {name: len((package / name).read_text(encoding="utf-8").splitlines()) for name in entered}
    for name in sorted(entered):
        print(f"{lines[name]:6d}  {'*' if name in grading else ' '} {name}")
    print(f"{len(entered)} modules entered by the command, {sum(lines.values())} lines, from {package}")
    print(f"{len(grading)} modules entered by grading itself (* above: from cli/grade.py's run on), "
          f"{sum(lines[name] for name in grading)} lines")


if __name__ == "__main__":
    main()
