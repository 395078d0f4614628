"""``symbolic-attn autograder``: the Gradescope zip and the PrairieLearn external grader.

Both bundles are built once (this project's wheel built, its dependencies' wheels
downloaded with ``pip download``); their scripts are then run as the platforms run them,
on simulated ``/autograder`` and ``/grade`` trees in a temporary folder (the roots are
environment variables).  ``setup.sh`` is run for real: it installs the carried wheels into
a new virtual environment with ``--no-index --find-links`` (about 30 s), and that
environment then grades a submission.  CI requires it (``wheels`` in
``SYMBOLIC_ATTN_REQUIRE``); elsewhere, without the dependency wheels (offline), it skips.
"""

import json
import os
import stat
import subprocess
import sys
import time
import tomllib
import zipfile
from fractions import Fraction
from pathlib import Path

import pytest

from symbolic_attn.cli import main
from symbolic_attn.grading import bundles

ROOT = Path(__file__).resolve().parent.parent
COURSE = ROOT / "examples" / "course"
KEY = COURSE / "exercise.toml"
ANN = (COURSE / "submissions" / "ann.md").read_text(encoding="utf-8")
REQUIRED = {name.strip() for name in os.environ.get("SYMBOLIC_ATTN_REQUIRE", "").split(",") if name.strip()}


@pytest.fixture(scope="module")
def gradescope(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundles") / "gs"
    assert main(["autograder", "gradescope", str(KEY), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def prairielearn(tmp_path_factory, gradescope):
    out = tmp_path_factory.mktemp("bundles") / "pl"
    wheel = next((gradescope / "autograder" / "wheels").glob("symbolic_attn-*.whl"))
    assert main(["autograder", "prairielearn", str(KEY), "--out", str(out), "--wheel", str(wheel)]) == 0
    return out


def _carried_dependencies(wheels: Path) -> bool:
    names = {path.name.split("-")[0].lower() for path in wheels.glob("*.whl")}
    return {"sympy", "mpmath", "python_flint", "latexify_py"} <= names


def _env(**extra) -> dict:
    env = dict(os.environ, SYMPY_GROUND_TYPES="python", PYTHONPATH=str(ROOT), SYMBOLIC_ATTN_PYTHON=sys.executable)
    env.update({name: str(value) for name, value in extra.items()})
    return env


def _autograder_tree(tmp_path, gradescope, files: dict) -> Path:
    """A simulated /autograder: source/ (the unzipped bundle), run_autograder, submission/."""
    root = tmp_path / "autograder"
    with zipfile.ZipFile(gradescope / "autograder.zip") as archive:
        archive.extractall(root / "source")
    for info in zipfile.ZipFile(gradescope / "autograder.zip").infolist():  # extractall drops modes
        os.chmod(root / "source" / info.filename, info.external_attr >> 16 & 0o777)
    (root / "run_autograder").write_bytes((root / "source" / "run_autograder").read_bytes())
    (root / "run_autograder").chmod(0o755)
    (root / "submission").mkdir()
    for name, content in files.items():
        path = root / "submission" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def _run_autograder(root: Path, **env) -> dict:
    run = subprocess.run(["bash", str(root / "run_autograder")], capture_output=True, text=True, timeout=120,
                         env=_env(SYMBOLIC_ATTN_AUTOGRADER_ROOT=root, **env))
    assert run.returncode == 0, run.stderr
    return json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))


def _grade_tree(tmp_path, prairielearn, files: dict) -> Path:
    """A simulated /grade: tests/ (the question's tests folder), student/ (the upload)."""
    root = tmp_path / "grade"
    (root / "tests").mkdir(parents=True)
    for path in (prairielearn / "tests").iterdir():
        (root / "tests" / path.name).write_bytes(path.read_bytes())
    (root / "student").mkdir()
    for name, content in files.items():
        (root / "student" / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def _grade_script(root: Path, prairielearn: Path) -> tuple:
    started = time.monotonic()
    run = subprocess.run(["bash", str(prairielearn / "grade.sh")], capture_output=True, text=True, timeout=60,
                         env=_env(SYMBOLIC_ATTN_GRADE_ROOT=root))
    assert run.returncode == 0, run.stderr
    return json.loads((root / "results" / "results.json").read_text(encoding="utf-8")), time.monotonic() - started


def _gradescope_shape(results: dict) -> None:
    assert {"score", "output", "visibility", "tests"} <= set(results)
    assert isinstance(results["score"], (int, float)) and results["visibility"] in ("visible", "hidden")
    for test in results["tests"]:
        assert {"name", "number", "score", "max_score", "output", "visibility"} <= set(test)


# ------------------------------------------------------------------ Gradescope


def test_gradescope_zip_holds_the_scripts_key_and_wheels(gradescope):
    with zipfile.ZipFile(gradescope / "autograder.zip") as archive:
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
    names = set(modes)
    assert {"setup.sh", "run_autograder", "key/exercise.toml", "README.txt"} <= names
    assert any(name.startswith("wheels/symbolic_attn-") and name.endswith(".whl") for name in names)
    for script in ("setup.sh", "run_autograder"):
        assert modes[script] & stat.S_IXUSR, f"{script} is not executable in the zip"
    tree = gradescope / "autograder"
    assert names == {p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()}
    assert (tree / "key" / "exercise.toml").read_bytes() == KEY.read_bytes()
    setup = (tree / "setup.sh").read_text()
    assert "--no-index --find-links" in setup and '"$HERE/wheels"' in setup


def test_the_wheel_ships_derivations_and_course_inside_the_package(gradescope):
    wheel = next((gradescope / "autograder" / "wheels").glob("symbolic_attn-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"symbolic_attn", wheel.name.split("-py3")[0] + ".dist-info"}
    assert "symbolic_attn/derivations/rope.py" in names
    assert {"symbolic_attn/course/exercise.toml", "symbolic_attn/course/submissions/lee/part2.tex"} <= set(names)
    top = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("top_level.txt"))).decode().split()
    assert top == ["symbolic_attn"]


def test_run_autograder_grades_several_files_as_one_student(tmp_path, gradescope):
    # scratch.txt sorts first: solution.md's later statements win; the picture is not read.
    root = _autograder_tree(tmp_path, gradescope, {"solution.md": ANN, "scratch.txt": "S = 1\nZ = 0\n",
                                                   "photo.png": b"\x89PNG\x00", "work/more.tex": "$a_{31} = 0.284$"})
    results = _run_autograder(root)
    _gradescope_shape(results)
    assert results["score"] == 12 and [t["name"] for t in results["tests"]] == ["S", "a_{31}", "a_{32}", "a_{33}",
                                                                                 "z_3", "Z"]
    assert results["output"] == "12 of 12 points."


def test_run_autograder_explains_an_empty_submission(tmp_path, gradescope):
    root = _autograder_tree(tmp_path, gradescope, {})
    results = _run_autograder(root)
    _gradescope_shape(results)
    first = results["tests"][0]
    assert results["score"] == 0 and first["name"] == "Submission" and first["score"] == 0
    assert first["visibility"] == "visible" and "nothing was submitted" in first["output"]
    root = _autograder_tree(tmp_path / "pdf", gradescope, {"answers.pdf": b"%PDF-1.4"})
    assert "only answers.pdf was submitted" in _run_autograder(root)["tests"][0]["output"]


def test_a_broken_key_still_writes_results(tmp_path, gradescope):
    root = _autograder_tree(tmp_path, gradescope, {"solution.md": ANN})
    (root / "source" / "key" / "exercise.toml").write_text("[[questions]\n")
    run = subprocess.run(["bash", str(root / "run_autograder")], capture_output=True, text=True, timeout=120,
                         env=_env(SYMBOLIC_ATTN_AUTOGRADER_ROOT=root))
    assert run.returncode == 2
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and "answer key could not be read" in results["tests"][0]["output"]


def test_setup_sh_installs_the_carried_wheels_offline(tmp_path, gradescope):
    wheels = gradescope / "autograder" / "wheels"
    if not _carried_dependencies(wheels):
        message = "the dependency wheels could not be downloaded (pip download) when the bundle was built"
        if "wheels" in REQUIRED:
            pytest.fail(message + "; SYMBOLIC_ATTN_REQUIRE includes wheels")
        pytest.skip(message)
    venv = tmp_path / "venv"
    env = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "PIP_INDEX_URL")}
    env.update(SYMBOLIC_ATTN_VENV=str(venv), SYMBOLIC_ATTN_BASE_PYTHON=sys.executable, PIP_NO_CACHE_DIR="1")
    run = subprocess.run(["bash", str(gradescope / "autograder" / "setup.sh")], capture_output=True, text=True,
                         timeout=300, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "installing the dependencies from PyPI" not in run.stderr  # the --no-index install sufficed
    assert run.stdout.strip().endswith("symbolic-attn 0.1.0")
    # The new environment (no PYTHONPATH: its own installed copy) grades a submission.
    root = _autograder_tree(tmp_path, gradescope, {"solution.md": ANN})
    env.update(SYMBOLIC_ATTN_AUTOGRADER_ROOT=str(root), SYMBOLIC_ATTN_PYTHON=str(venv / "bin" / "python"))
    graded = subprocess.run(["bash", str(root / "run_autograder")], capture_output=True, text=True, timeout=120,
                            env=env, cwd=tmp_path)
    assert graded.returncode == 0, graded.stderr
    assert json.loads((root / "results" / "results.json").read_text())["score"] == 12
    located = subprocess.run([str(venv / "bin" / "python"), "-c", "import symbolic_attn; print(symbolic_attn.__file__)"],
                             capture_output=True, text=True, env=env, cwd=tmp_path)
    assert located.stdout.startswith(str(venv))


# ------------------------------------------------------------------ PrairieLearn


def test_prairielearn_folder_holds_dockerfile_script_and_key(prairielearn):
    names = {p.relative_to(prairielearn).as_posix() for p in prairielearn.rglob("*") if p.is_file()}
    assert {"Dockerfile", "grade.sh", "info.json", "README.txt", "tests/exercise.toml"} <= names
    dockerfile = (prairielearn / "Dockerfile").read_text()
    assert dockerfile.count("FROM python:3.11-slim") == 1
    wheels = prairielearn / "wheels"
    assert ("--no-index" in dockerfile) == _carried_dependencies(wheels)
    assert "COPY grade.sh /usr/local/bin/symbolic-attn-grade" in dockerfile
    info = json.loads((prairielearn / "info.json").read_text())
    assert info["externalGradingOptions"]["entrypoint"] == "/usr/local/bin/symbolic-attn-grade"
    assert os.stat(prairielearn / "grade.sh").st_mode & stat.S_IXUSR


def test_prairielearn_score_is_the_exact_ratio(tmp_path, prairielearn):
    # a_{31} (1 point of 12) wrong, everything else right: 11/12.
    wrong = ANN.replace(r"$a_{31} \approx 0.284$", "$a_{31} = 0.5$")
    assert wrong != ANN
    root = _grade_tree(tmp_path, prairielearn, {"solution.md": wrong, "notes.txt": "nothing here"})
    results, seconds = _grade_script(root, prairielearn)
    assert results["gradable"] is True and results["score"] == float(Fraction(11, 12))
    assert '"score": 0.9166666666666666' in (root / "results" / "results.json").read_text()
    assert {"gradable", "score", "message", "tests"} <= set(results)
    assert {t["name"]: t["points"] for t in results["tests"]}["a_{31}"] == 0
    assert seconds < 20, f"{seconds:.1f} s: too slow for PrairieLearn's 30 s default"


def test_prairielearn_unreadable_submission_is_not_gradable(tmp_path, prairielearn):
    root = _grade_tree(tmp_path, prairielearn, {"solution.md": b"a_{31} = \x00\x01\x02 binary"})
    results, _ = _grade_script(root, prairielearn)
    assert results["gradable"] is False and results["score"] == 0
    assert "binary data" in results["message"] and results["format_errors"]


# ------------------------------------------------------------------ packaging and the command


def test_pyproject_lists_every_subpackage():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {"symbolic_attn"} | {"symbolic_attn." + p.parent.name for p in (ROOT / "symbolic_attn").glob("*/__init__.py")}
    assert set(project["packages"]) == found | {"symbolic_attn.course"}
    assert project["package-dir"] == {"symbolic_attn.course": "examples/course"}
    assert not (ROOT / "derivations").exists()


def test_example_course_command_copies_the_course(tmp_path, capsys):
    assert main(["autograder", "example-course", str(tmp_path / "course")]) == 0
    assert (tmp_path / "course" / "exercise.toml").read_bytes() == KEY.read_bytes()
    assert (tmp_path / "course" / "submissions" / "lee" / "part1.md").is_file()
    assert main(["autograder", "example-course", str(tmp_path / "course")]) == 2
    assert "already exists" in capsys.readouterr().err


def test_out_holding_other_files_is_refused(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("keep me")
    assert main(["autograder", "prairielearn", str(KEY), "--out", str(tmp_path), "--no-download"]) == 2
    assert "holds other files" in capsys.readouterr().err and (tmp_path / "mine.txt").read_text() == "keep me"


def test_an_earlier_bundle_is_replaced_and_no_download_falls_back_to_pypi(tmp_path, capsys):
    out = tmp_path / "pl"
    for _ in range(2):
        assert main(["autograder", "prairielearn", str(KEY), "--out", str(out), "--no-download"]) == 0
    assert [p.name for p in (out / "wheels").iterdir()] == [next((out / "wheels").glob("symbolic_attn-*")).name]
    assert "--no-index" not in (out / "Dockerfile").read_text()
    assert "dependencies installed from PyPI" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pl"]  # no temporary folder left


def test_a_key_without_questions_is_refused(tmp_path, capsys):
    key = tmp_path / "plain.toml"
    key.write_text("[attention]\nscores = [[\"0\", \"1\"]]\nvalue = [[1], [2]]\n")
    assert main(["autograder", "gradescope", str(key), "--out", str(tmp_path / "gs"), "--no-download"]) == 2
    assert "no [[questions]]" in capsys.readouterr().err and not (tmp_path / "gs").exists()


def test_run_takes_every_file_of_a_folder_as_one_submission(tmp_path):
    """Unlike ``grade FOLDER``, which makes one student of each file."""
    (tmp_path / "up").mkdir()
    (tmp_path / "up" / "solution.md").write_text(ANN)
    (tmp_path / "up" / "scratch.txt").write_text("S = 1")
    assert main(["autograder", "run", "prairielearn", str(KEY), str(tmp_path / "up"),
                 "--results", str(tmp_path / "r" / "results.json")]) == 0
    assert json.loads((tmp_path / "r" / "results.json").read_text())["score"] == 1.0
    assert [item.name for item in bundles.submission_items(tmp_path / "up")] == ["scratch.txt", "solution.md"]


def test_a_time_limit_still_writes_results(tmp_path, monkeypatch, capsys):
    from symbolic_attn.errors import TimeLimitError

    def stopped(key, folder, student="submission"):
        raise TimeLimitError("time limit of 25 s reached while grading")

    monkeypatch.setattr(bundles, "grade_folder", stopped)
    (tmp_path / "up").mkdir()
    results = tmp_path / "results.json"
    assert main(["autograder", "run", "prairielearn", str(KEY), str(tmp_path / "up"), "--results", str(results)]) == 2
    written = json.loads(results.read_text())
    assert written["gradable"] is False and "time limit of 25 s" in written["message"]
    assert "time limit" in capsys.readouterr().err
