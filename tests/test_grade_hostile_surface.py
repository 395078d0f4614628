"""``grade`` against hostile course folders: every case is a real ``python -m symbolic_attn
grade`` in a subprocess, with a timeout, checked for its exit status, a one-line message
(never a traceback) and what was, or was not, written."""

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COURSE = ROOT / "examples" / "course"
ANN = (COURSE / "submissions" / "ann.md").read_text(encoding="utf-8")  # 12 of 12 points
FULL = "12"


def run(args, cwd, timeout=60, **popen):
    env = dict(os.environ, PYTHONPATH=str(ROOT), SYMPY_GROUND_TYPES="python")
    return subprocess.run([sys.executable, "-m", "symbolic_attn", "grade", *map(os.fsdecode, args)], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=timeout, errors="backslashreplace", **popen)


def key(tmp):
    folder = tmp / "key"
    folder.mkdir(exist_ok=True)
    shutil.copy(COURSE / "exercise.toml", folder / "exercise.toml")
    return folder / "exercise.toml"


def grades(out) -> dict:
    with open(out / "grades.csv", encoding="utf-8", newline="") as stream:
        return {row["student"]: row["score"] for row in csv.DictReader(stream)}


def subs(tmp, files: dict) -> Path:
    """A submissions folder: {relative path: text} (a folder is made for each parent)."""
    folder = tmp / "subs"
    folder.mkdir(exist_ok=True)
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return folder


# ----------------------------------------------------------------- the cases (setup, check)


def symlink_loop(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    os.symlink("loop", folder / "loop")
    return [key(tmp), folder, "--out", tmp / "out"], 1, lambda: (
        grades(tmp / "out") == {"ann": FULL, "loop": "0"}
        and "link" in json.loads((tmp / "out" / "loop.json").read_text())["reason"])


def link_inside_student_folder(tmp):
    folder = subs(tmp, {"ann/sol.md": ANN})
    (tmp / "secret.md").write_text("a_{32} = 0.9")
    os.symlink(tmp / "secret.md", folder / "ann" / "zz.md")
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: (
        grades(tmp / "out") == {"ann": FULL}
        and "zz.md: a link" in json.dumps(json.loads((tmp / "out" / "ann.json").read_text())["problems"]))


def non_utf8_name(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    with open(os.fsencode(folder) + b"/b\xffd.md", "wb") as stream:
        stream.write(ANN.encode())
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: grades(tmp / "out") == {"ann": FULL, "b\\xffd": FULL}


def out_holds_a_link(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    (tmp / "out").mkdir()
    (tmp / "victim").write_text("keep me")
    os.symlink(tmp / "victim", tmp / "out" / "ann.json")
    return [key(tmp), folder, "--out", tmp / "out"], 2, lambda: (
        (tmp / "victim").read_text() == "keep me" and (tmp / "out" / "ann.json").is_symlink())


def out_is_a_link(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    (tmp / "real").mkdir()
    os.symlink(tmp / "real", tmp / "out")
    return [key(tmp), folder, "--out", tmp / "out"], 2, lambda: not list((tmp / "real").iterdir())


def out_inside_submissions(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    return [key(tmp), folder, "--out", folder / "grades"], 2, lambda: not (folder / "grades").exists()


def out_is_the_submissions_folder(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    return [key(tmp), folder, "--out", folder], 2, lambda: sorted(os.listdir(folder)) == ["ann.md"]


def x_and_x_json(tmp):
    folder = subs(tmp, {"x/sol.md": ANN, "x.json": "{}"})
    return [key(tmp), folder, "--out", tmp / "out", "--gradescope"], 1, lambda: (
        grades(tmp / "out") == {"x": FULL, "x.json": "0"}
        and (tmp / "out" / "x" / "results.json").is_file() and (tmp / "out" / "x.json").is_file())


def same_name_in_two_folders(tmp):
    subs(tmp, {"a/ann.md": ANN, "b/ann.md": "a_{32} = 0.9"})
    return [key(tmp), "subs/a/ann.md", "subs/b/ann.md", "--out", tmp / "out"], 0, lambda: (
        set(grades(tmp / "out")) == {str(Path("subs/a/ann.md")), str(Path("subs/b/ann.md"))})


def same_folder_twice(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    return [key(tmp), folder, str(folder) + "/", "--out", tmp / "out"], 2, lambda: not (tmp / "out").exists()


def same_file_twice(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    return [key(tmp), folder / "ann.md", folder / "ann.md"], 2, lambda: True


def folder_and_a_file_inside(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    return [key(tmp), folder, folder / "ann.md"], 2, lambda: True


def litter_and_the_key(tmp):
    folder = subs(tmp, {"ann.md": ANN, "Thumbs.db": b"\0\1", ".DS_Store": b"\0", "__MACOSX/._ann.md": b"\0",
                        "desktop.ini": "[x]", "~$ann.md": "lock"})
    shutil.copy(COURSE / "exercise.toml", folder / "exercise.toml")
    return [folder / "exercise.toml", folder, "--out", tmp / "out"], 0, lambda: grades(tmp / "out") == {"ann": FULL}


def key_inside_a_student_folder(tmp):
    folder = subs(tmp, {"ann/sol.md": ANN})
    shutil.copy(COURSE / "exercise.toml", folder / "ann" / "exercise.toml")
    return [folder / "ann" / "exercise.toml", folder, "--out", tmp / "out"], 0, lambda: (
        grades(tmp / "out") == {"ann": FULL} and not json.loads((tmp / "out" / "ann.json").read_text())["problems"])


def subfolder_named_like_a_file(tmp):
    folder = subs(tmp, {"ann/a.md": ANN})
    (folder / "ann" / "z.md").mkdir()
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: grades(tmp / "out") == {"ann": FULL}


def more_than_64_files(tmp):
    folder = subs(tmp, {f"ann/{i:03}.md": "nothing here" for i in range(70)})
    return [key(tmp), folder, "--out", tmp / "out"], 1, lambda: (
        "limit of 64 files" in (tmp / "out" / "ann.json").read_text())


def html_comment(tmp):
    folder = subs(tmp, {"ann.md": ANN + "\n<!-- a_{32} = 0.9 -->\n"})
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: grades(tmp / "out") == {"ann": FULL}


def iffalse(tmp):
    folder = subs(tmp, {"ann.tex": ANN + "\n\\iffalse\na_{32} = 0.9\n\\fi\n"})
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: grades(tmp / "out") == {"ann": FULL}


def comment_environment(tmp):
    folder = subs(tmp, {"ann.tex": ANN + "\n\\begin{comment}\na_{32} = 0.9\n\\end{comment}\n"})
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: grades(tmp / "out") == {"ann": FULL}


def unclosed_comment(tmp):
    folder = subs(tmp, {"ann.md": ANN + "\n<!-- a_{32} = 0.9\n"})
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: (
        grades(tmp / "out") == {"ann": FULL} and "without -->" in (tmp / "out" / "ann.json").read_text())


def invisible_characters(tmp):
    folder = subs(tmp, {"\u200b\u200f\u200d.md": ANN})
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: grades(tmp / "out") == {"\\u200b\\u200f\\u200d": FULL}


def cr_line_endings(tmp):
    folder = subs(tmp, {"ann.md": ANN.replace("\n", "\r"), "ben.md": ANN.replace("\n", "\r\n")})
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: grades(tmp / "out") == {"ann": FULL, "ben": FULL}


# ----------------------------------------------------------------- what else an attacker tries


def empty_file(tmp):
    folder = subs(tmp, {"ann.md": "", "bob.md": "no statement here"})
    return [key(tmp), folder, "--out", tmp / "out"], 1, lambda: (
        json.loads((tmp / "out" / "ann.json").read_text())["reason"] == "the file is empty"
        and "nothing readable" in json.loads((tmp / "out" / "bob.json").read_text())["reason"])


def folder_named_like_the_key(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    (folder / "exercise.toml").mkdir()
    return [key(tmp), folder, "--out", tmp / "out"], 1, lambda: grades(tmp / "out") == {"ann": FULL, "exercise.toml": "0"}


def fifo(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    os.mkfifo(folder / "pipe.md")
    return [key(tmp), folder, "--out", tmp / "out"], 1, lambda: (
        grades(tmp / "out") == {"ann": FULL, "pipe": "0"}
        and "is a FIFO (named pipe), not a regular solution file" in (tmp / "out" / "pipe.json").read_text())


def fifo_in_student_folder(tmp):
    folder = subs(tmp, {"ann/a.md": ANN})
    os.mkfifo(folder / "ann" / "b.md")
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: grades(tmp / "out") == {"ann": FULL}


def ten_thousand_lines(tmp):
    folder = subs(tmp, {"ann.md": "Some words, and no answer.\n" * 10_000 + ANN})
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: grades(tmp / "out") == {"ann": FULL}


def more_statements_than_read(tmp):
    folder = subs(tmp, {"ann.md": "x = 1\n" * 10_001 + ANN})
    return [key(tmp), folder, "--out", tmp / "out"], 1, lambda: (
        "more than 10000 statements" in (tmp / "out" / "ann.json").read_text())


def newline_in_a_name(tmp):
    folder = subs(tmp, {"a\nfake 12 12.md": ANN})
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: len(grades(tmp / "out")) == 1


def out_is_the_key_folder(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    exercise = key(tmp)
    return [exercise, folder, "--out", exercise.parent], 2, lambda: os.listdir(exercise.parent) == ["exercise.toml"]


def out_is_a_file(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    (tmp / "out").write_text("mine")
    return [key(tmp), folder, "--out", tmp / "out"], 2, lambda: (tmp / "out").read_text() == "mine"


def out_holds_the_users_files(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    (tmp / "out").mkdir()
    (tmp / "out" / "notes.txt").write_text("mine")
    return [key(tmp), folder, "--out", tmp / "out"], 2, lambda: os.listdir(tmp / "out") == ["notes.txt"]


def submission_is_a_link(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    os.symlink(folder, tmp / "link")
    return [key(tmp), tmp / "link"], 2, lambda: True


def submission_missing(tmp):
    return [key(tmp), tmp / "nowhere\x1b[2J"], 2, lambda: True


def key_given_as_a_submission(tmp):
    exercise = key(tmp)
    return [exercise, exercise], 2, lambda: True


def a_device(tmp):
    return [key(tmp), "/dev/zero"], 1, lambda: True


def formula_in_a_name(tmp):
    folder = subs(tmp, {"=HYPERLINK(1).md": ANN})
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: (
        "'=HYPERLINK(1)" in (tmp / "out" / "grades.csv").read_text())


def student_named_grades_csv(tmp):
    folder = subs(tmp, {"grades.csv/sol.md": ANN})
    return [key(tmp), folder, "--out", tmp / "out", "--gradescope"], 0, lambda: (
        grades(tmp / "out") == {"grades.csv": FULL} and (tmp / "out" / "grades.csv").is_file())


def names_differing_in_case(tmp):
    folder = subs(tmp, {"Ann.md": ANN, "ann.md": "a_{32} = 0.9"})
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: (
        sorted(p.name.lower() for p in (tmp / "out").iterdir()) == ["ann.json", "ann_.json", "grades.csv"])


def bidi_override_in_a_name(tmp):
    folder = subs(tmp, {"ann\u202edm.exe.md": ANN})
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: grades(tmp / "out") == {"ann\\u202edm.exe": FULL}


def stale_temporary_folder(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    (tmp / ".out.abcdefgh.tmp").mkdir()
    (tmp / ".out.abcdefgh.tmp" / "old.json").write_text("{}")
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: (
        grades(tmp / "out") == {"ann": FULL} and not (tmp / ".out.abcdefgh.tmp").exists())


def old_students_do_not_linger(tmp):
    folder = subs(tmp, {"ann.md": ANN})
    (tmp / "out").mkdir()
    (tmp / "out" / "gone.json").write_text("{}")
    return [key(tmp), folder, "--out", tmp / "out"], 0, lambda: sorted(os.listdir(tmp / "out")) == ["ann.json",
                                                                                                  "grades.csv"]


CASES = [symlink_loop, link_inside_student_folder, non_utf8_name, out_holds_a_link, out_is_a_link,
         out_inside_submissions, out_is_the_submissions_folder, x_and_x_json, same_name_in_two_folders,
         same_folder_twice, same_file_twice, folder_and_a_file_inside, litter_and_the_key,
         key_inside_a_student_folder, subfolder_named_like_a_file, more_than_64_files, html_comment, iffalse,
         comment_environment, unclosed_comment, invisible_characters, cr_line_endings,
         # beyond the battery
         empty_file, folder_named_like_the_key, fifo, fifo_in_student_folder, ten_thousand_lines, more_statements_than_read,
         newline_in_a_name, out_is_the_key_folder, out_is_a_file, out_holds_the_users_files,
         submission_is_a_link, submission_missing, key_given_as_a_submission, a_device, formula_in_a_name,
         student_named_grades_csv, names_differing_in_case, bidi_override_in_a_name, stale_temporary_folder,
         old_students_do_not_linger]


@pytest.mark.parametrize("case", CASES, ids=[case.__name__ for case in CASES])
def test_hostile_case(tmp_path, case):
    args, status, written = case(tmp_path)
    done = run([*args, "--jobs", "1"], cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == status, done.stderr
    if status == 2:
        assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("symbolic-attn: error: "), done.stderr
        assert "\x1b" not in done.stderr
    assert written(), (done.stdout, done.stderr)


# ----------------------------------------------------------------- time limits and kills


def _slow_folder(tmp, copies=300) -> Path:
    """3,900 students: about half a minute of grading on two cores."""
    folder = tmp / "slow"
    folder.mkdir()
    for i in range(copies):
        for path in (COURSE / "submissions").glob("*.*"):
            shutil.copy(path, folder / f"s{i:03}_{path.name}")
    return folder


def _group_members(group: int) -> list:
    """Processes still alive in a process group, from /proc (no psutil)."""
    alive = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            alive.append(int(pid))
    return alive


def _no_process_left(group: int) -> bool:
    deadline = time.monotonic() + 3  # an orphan would see its parent gone within 0.2 s
    while _group_members(group) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _group_members(group)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("stop", ["timeout", "interrupt"])
def test_workers_never_outlive_a_stopped_grade(tmp_path, stop):
    env = dict(os.environ, PYTHONPATH=str(ROOT), SYMPY_GROUND_TYPES="python")
    args = [sys.executable, "-m", "symbolic_attn", "grade", str(COURSE / "exercise.toml"), str(_slow_folder(tmp_path)),
            "--jobs", "2", "--timeout", "2" if stop == "timeout" else "0"]
    started = time.monotonic()
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        if stop == "interrupt":
            time.sleep(2.5)
            os.killpg(process.pid, signal.SIGINT)  # as ^C does: the whole foreground group
        _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert time.monotonic() - started < 30
    assert process.returncode == (2 if stop == "timeout" else 130), err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert ("time limit of 2 s" if stop == "timeout" else "interrupted") in err
    assert _no_process_left(process.pid)


def _snapshot(folder) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(Path(folder).rglob("*")) if p.is_file()}


def test_a_killed_run_leaves_the_old_set_or_the_new_one(tmp_path):
    exercise = key(tmp_path)
    old = subs(tmp_path, {"ann.md": ANN, "ben.md": "a_{32} = 0.9"})
    new = tmp_path / "new"
    for i in range(60):
        (new / f"s{i:02}").mkdir(parents=True)
        (new / f"s{i:02}" / "a.md").write_text(ANN)
    out = tmp_path / "out"
    assert run([exercise, new, "--out", tmp_path / "reference", "--gradescope"], cwd=tmp_path).returncode == 0
    after = _snapshot(tmp_path / "reference")  # the files carry no path: the same set in any folder
    env = dict(os.environ, PYTHONPATH=str(ROOT), SYMPY_GROUND_TYPES="python")
    command = [sys.executable, "-m", "symbolic_attn", "grade", str(exercise), str(new), "--out", str(out),
               "--gradescope", "--jobs", "1"]
    seen = set()
    for delay in (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5):
        assert run([exercise, old, "--out", out, "--gradescope"], cwd=tmp_path).returncode == 0
        before = _snapshot(out)
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        process.kill()  # SIGKILL: no handler, no cleanup
        process.wait()
        now = _snapshot(out)
        assert now in (before, after), delay
        seen.add("new" if now == after else "old")
    # Leftover temporaries of a killed run are the next run's to remove: at most one remains.
    assert len([p for p in tmp_path.iterdir() if p.name.startswith(".out.")]) <= 1
