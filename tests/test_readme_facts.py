"""The README is held to the code: its links, options, [define] functions, shown commands
and every number in its prose.

Nothing expected is written here by hand: each value is computed from the code (the
argparse parsers of ``symbolic_attn.cli``, the ``[define]`` function table, the limits), from
the repository (files in ``examples/``, the compiled notes) or by running the command the
README shows.
"""

from __future__ import annotations

import argparse
import inspect
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from symbolic_attn.cli import DEFAULT_TIMEOUT, build_parser, main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^(```|~~~)[^\n]*\n.*?^\1[ \t]*$", re.M | re.S)


# -- reading the README ---------------------------------------------------------------------


def _without_fences(text: str) -> str:
    """``text`` with code blocks blanked out (same length: positions stay valid)."""
    return FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def headings(text: str) -> list[tuple[int, str]]:
    """(level, title) of every Markdown heading outside code blocks."""
    return [(len(m.group(1)), m.group(2).strip()) for m in re.finditer(r"^(#{1,6}) (.+)$", _without_fences(text), re.M)]


def slug(title: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    title = re.sub(r"<[^>]+>", "", title).strip().lower()
    title = re.sub(r"[^\w\- ]", "", title)
    return title.replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    result = set()
    for _, title in headings(text):
        base = slug(title)
        count = seen.get(base, 0)
        result.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return result


def section(title: str, text: str = README) -> str:
    """The text under the heading ``title`` up to the next heading of its level or higher."""
    plain = _without_fences(text)
    match = re.search(rf"^(#{{1,6}}) {re.escape(title)}[ \t]*$", plain, re.M)
    assert match, f"the README has no heading {title!r}"
    level = len(match.group(1))
    end = re.compile(rf"^#{{1,{level}}} ", re.M).search(plain, match.end())
    return text[match.end(): end.start() if end else len(text)]


def table_rows(text: str) -> list[list[str]]:
    """The cells of every Markdown table row in ``text`` (outside code blocks)."""
    rows = []
    for line in _without_fences(text).splitlines():
        if line.startswith("|") and not re.fullmatch(r"\|[-| :]+\|", line.strip()):
            rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def prose(text: str) -> str:
    """The README without code blocks, inline code, link targets and HTML comments."""
    text = _without_fences(text)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"(`+)(?!`).+?(?<!`)\1(?!`)", lambda m: " " * len(m.group(0)), text, flags=re.S)
    text = re.sub(r"\]\([^)]*\)", lambda m: " " * len(m.group(0)), text)
    return text


# -- the table of contents and links ---------------------------------------------------------


def test_every_link_to_a_heading_resolves():
    links = re.findall(r"\]\(([^)\s]*)\)", _without_fences(README))
    assert links
    for link in links:
        if link.startswith(("http://", "https://")):
            continue
        path, _, anchor = link.partition("#")
        target = ROOT / path if path else ROOT / "README.md"
        assert target.exists(), f"README links to {path}, which does not exist"
        if anchor:
            assert anchor in anchors(target.read_text(encoding="utf-8")), f"no heading for #{anchor} in {target.name}"


def test_the_contents_list_every_section():
    contents = section("Contents")
    listed = set(re.findall(r"\]\(#([^)]+)\)", contents))
    for level, title in headings(README):
        if level == 2 and title != "Contents":
            assert slug(title) in listed, f"the contents do not list {title!r}"
    for title in [t for level, t in headings(section("Commands")) if level == 3]:
        assert slug(title) in listed, f"the contents do not list the command {title!r}"


def test_links_in_the_other_documents_resolve():
    for document in [ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = document.read_text(encoding="utf-8")
        for link in re.findall(r"\]\(([^)\s]*)\)", _without_fences(text)):
            if link.startswith(("http://", "https://")):
                continue
            path, _, anchor = link.partition("#")
            target = (document.parent / path).resolve() if path else document
            assert target.exists(), f"{document.name} links to {path}, which does not exist"
            if anchor:
                assert anchor in anchors(target.read_text(encoding="utf-8")), f"{document.name}: no #{anchor} in {target.name}"


def test_every_path_named_exists():
    for path in set(re.findall(r"`((?:examples|docs|bench|tests|symbolic_attn)/[\w./-]+)`", README)):
        if "NAME" in path or "*" in path:
            continue
        assert (ROOT / path).exists(), f"the README names {path}, which does not exist"


# -- the commands and their options ----------------------------------------------------------


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


COMMANDS = _subparsers(build_parser())


def _all_actions(parser):
    """Every action of a parser and of its own subcommands (autograder gradescope...)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _all_actions(sub)
        elif not isinstance(action, argparse._HelpAction):
            yield action


def _row_for(rows, text):
    for row in rows:
        if f"`{text}" in row[0]:
            return row
    return None


def test_every_command_has_a_section():
    for name in COMMANDS:
        section(f"`symbolic-attn {name}`")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_is_in_its_commands_section(name):
    text = section(f"`symbolic-attn {name}`")
    rows = table_rows(text)
    for action in _all_actions(COMMANDS[name]):
        if action.option_strings:
            option = max(action.option_strings, key=len)
            row = _row_for(rows, option)
            assert row is not None, f"{name}: {option} is not in the options table of its section"
            default = DEFAULT_TIMEOUT if option == "--timeout" else action.default
            if not (default is None or default is False or default == argparse.SUPPRESS):
                assert f"`{default}`" in row[-1], f"{name} {option}: the default shown is not `{default}`: {row[-1]!r}"
        else:
            shown = action.metavar or action.dest
            if isinstance(action.metavar, str) or not action.choices:
                assert shown in text, f"{name}: the argument {shown} is not in its section"
            row = _row_for(rows, shown) if isinstance(action.metavar, str) else None
        for choice in action.choices or ():
            where = row[1] if action.option_strings else text
            assert f"`{choice}`" in where or choice in where, f"{name}: the choice {choice!r} is not documented"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_exit_statuses_match_the_help(name):
    help_text = " ".join(COMMANDS[name].format_help().split())
    said = re.search(r"Exit status: (.*)", help_text)
    text = section(f"`symbolic-attn {name}`")
    shown = re.search(r"Exit status: (.*?)\.(?:\s|$)", " ".join(text.split()))
    if said is None:
        return
    assert shown, f"{name}: its section has no 'Exit status:' sentence"
    in_help = set(re.findall(r"\b([0-2])\b", said.group(1).split("examples:")[0]))
    assert set(re.findall(r"`([0-2])`", shown.group(1))) == in_help


def test_the_options_of_every_command():
    rows = table_rows(section("Options of every command"))
    top = build_parser()
    for action in top._actions:
        if action.option_strings:
            assert _row_for(rows, max(action.option_strings, key=len)), action.option_strings
    assert f"`{DEFAULT_TIMEOUT}`" in _row_for(rows, "--timeout")[-1]


def test_the_quick_start_is_two_commands_and_the_test_command_is_cis():
    text = section("Quick start")
    block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    commands = [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]
    assert len(commands) == 2
    assert commands[0].startswith("pip install .") and "symbolic-attn derive" in commands[0]
    assert commands[1].endswith("python -m pytest")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    last = [line for line in ci.splitlines() if line.strip() and not line.startswith("#")][-1]
    assert last == "python -m pytest"
    assert "apt-get" in ci and "apt-get" in text and "root" in text


def test_the_first_steps_show_attention_check_run_and_grade():
    text = section("First steps")
    for command in ("attention", "check", "run", "grade"):
        assert re.search(rf"symbolic-attn {command} ", text), command
    for path in re.findall(r"symbolic-attn \w+ (examples/\S+)", text):
        assert (ROOT / path).exists(), path


# -- the commands shown, run ---------------------------------------------------------------------

#: Shown commands that write files or need a folder that is not in the repository; each is
#: run by the test named.
_RUN_ELSEWHERE = {
    "my_derivations/": "tests/test_derivation.py runs the README's script and its failure",
}


def _shown_sessions():
    """(command line, expected output pieces, expected status or None) of every ```text block
    that starts with '$ symbolic-attn'."""
    sessions = []
    for block in re.findall(r"^```text\n(.*?)^```", README, re.S | re.M):
        if not block.startswith("$ symbolic-attn"):
            continue
        current = None
        for line in block.splitlines():
            if line.startswith("$ echo $?"):
                current[3] = "status"
            elif line.startswith("$ "):
                current = [line[2:], [], None, None]
                sessions.append(current)
            elif current[3] == "status":
                current[2], current[3] = int(line), None
            else:
                current[1].append(line)
    return [(command, "\n".join(lines), status) for command, lines, status, _ in sessions]


SESSIONS = _shown_sessions()


def test_some_commands_are_shown():
    assert {shlex.split(c)[1] for c, _, _ in SESSIONS} >= {"attention", "check", "run", "compare", "derive"}
    assert "symbolic-attn derive" in [c for c, _, _ in SESSIONS]  # the quick start's main job


@pytest.mark.parametrize("command, expected, status", SESSIONS, ids=[c[:60] for c, _, _ in SESSIONS])
def test_a_command_shown_prints_what_is_shown(command, expected, status, capsys, monkeypatch, tmp_path):
    if any(marker in command for marker in _RUN_ELSEWHERE):
        pytest.skip(next(why for marker, why in _RUN_ELSEWHERE.items() if marker in command))
    argv = shlex.split(command)
    if argv[1] == "compare":
        pytest.importorskip("numpy")
    monkeypatch.setenv("COLUMNS", "80")
    # derive writes out/: in a folder of its own, not over the committed out/.
    monkeypatch.chdir(tmp_path if argv[1] == "derive" else ROOT)
    code = main(argv[1:])
    captured = capsys.readouterr()
    output = captured.out + captured.err
    position = 0
    for piece in expected.split("\n...\n"):
        piece = piece.removesuffix("\n...").strip("\n")
        found = output.find(piece, position)
        assert found >= 0, f"{command}: not in its output, in order:\n{piece}\n--- output:\n{output[:3000]}"
        position = found + len(piece)
    if status is not None:
        assert code == status


# -- [define] --------------------------------------------------------------------------------


def _define_section() -> str:
    return section("Computation files: `[define]`")


def _signatures() -> dict[str, list[str]]:
    found = {}
    for row in table_rows(_define_section()):
        match = re.fullmatch(r"`(\w+)\((.*)\)`", row[0])
        if match:
            found[match.group(1)] = [p.strip() for p in match.group(2).split(",")] if match.group(2) else []
    return found


def _written(default) -> str:
    from symbolic_attn.model.functions import Option

    return f"'{default}'" if isinstance(default, Option) else str(default)


def test_every_define_function_is_documented_with_its_arguments_and_defaults():
    from symbolic_attn.model.functions import FUNCTIONS, REQUIRED

    signatures = _signatures()
    assert set(signatures) == set(FUNCTIONS), set(signatures) ^ set(FUNCTIONS)
    for name, (parameters, _handler) in FUNCTIONS.items():
        expected = []
        for pname, kind, default in parameters:
            if kind == "matrices":
                expected.append(f"*{pname}")
            elif default is REQUIRED:
                expected.append(pname)
            elif default is None:
                expected.append(f"{pname}?")
            else:
                expected.append(f"{pname}={_written(default)}")
        assert signatures[name] == expected, f"{name}: the README says {signatures[name]}, the code {expected}"


def test_every_define_option_value_is_documented():
    from symbolic_attn.model.functions import FUNCTIONS

    rows = {re.match(r"`(\w+)\(", row[0]).group(1): row for row in table_rows(_define_section())
            if re.match(r"`\w+\(", row[0])}
    for name, (parameters, _handler) in FUNCTIONS.items():
        for pname, kind, _default in parameters:
            if isinstance(kind, tuple):
                for option in kind:
                    assert f"'{option}'" in " ".join(rows[name]), f"{name}: the option {pname}={option!r} is not documented"


def test_every_define_stage_is_documented():
    """Run each function on small inputs and look for every stage it makes in its row."""
    from symbolic_attn.model.program import run_program

    calls = {
        "attention": "attention(X, X, X)", "softmax": "softmax(X)",
        "multihead": "multihead(X, heads = [[I2, I2, I2]], WO = I2)", "sinusoidal": "sinusoidal(2, 2)",
        "rope": "rope(X)", "alibi": "alibi(2, heads = 2)", "layer_norm": "layer_norm(X)", "relu": "relu(X)",
        "gelu": "gelu(X)", "feed_forward": "feed_forward(X, I2, 0, I2)",
        "encoder_block": "encoder_block(X, [[Z, Z, I2]], I2, I2, 0, I2)",
        "decoder_block": "decoder_block(X, X, [[Z, Z, I2]], I2, [[Z, Z, I2]], I2, I2, 0, I2)",
    }
    rows = {re.match(r"`(\w+)\(", row[0]).group(1): row for row in table_rows(_define_section())
            if re.match(r"`\w+\(", row[0])}
    for name, call in calls.items():
        trace = run_program({"X": [[1, 0], [0, 1]], "Z": [[0, 0], [0, 0]]}, [("D", call)])
        stages = {re.sub(r"\[\d+\]", "[h]", path.split(".", 1)[1]).split(".")[0] for path in trace if "." in path}
        for stage in stages:
            assert f"`{stage}" in rows[name][-1], f"{name}: the stage {stage} is not in its row"


def test_the_reserved_names_are_documented():
    from symbolic_attn.model import program

    text = _define_section()
    for name in sorted(program._RESERVED_NAMES | program._SCALAR_FUNCTIONS | {"I2", "I3"}):
        assert f"`{name}`" in text, name
    assert "`eps=0`" in text and "`eps=1e-5`" in text  # the default, and PyTorch's


def test_the_worked_define_example_is_the_example_file():
    shown = re.search(r"```toml\n(\[inputs\]\nX = .*?)```", _define_section(), re.S).group(1)
    data = tomllib.loads((ROOT / "examples" / "define" / "issue.toml").read_text(encoding="utf-8"))
    assert tomllib.loads(shown) == {"inputs": data["inputs"], "define": data["define"]}


# -- the built-in results --------------------------------------------------------------------


def test_the_table_of_built_in_results_is_the_list():
    from symbolic_attn.proofs.scripts import load_scripts

    text = section("`symbolic-attn derive`")
    shown = {m.group(1) for row in table_rows(text) if (m := re.match(r"`(\w+)`:", row[0]))}
    assert shown == {script.name for script in load_scripts()}


# -- every number in the prose ---------------------------------------------------------------


def _submissions() -> int:
    return len([p for p in (ROOT / "examples" / "course" / "submissions").iterdir() if not p.name.startswith(".")])


def _exercise_files() -> int:
    files = [*(ROOT / "examples").glob("*.toml"), *(ROOT / "examples" / "define").glob("*.toml")]
    return sum(1 for p in files if tomllib.loads(p.read_text(encoding="utf-8")).get("claims"))


def _notes_pages() -> int:
    import tempfile

    if shutil.which("pdfinfo") is None or shutil.which("pdflatex") is None:
        pytest.fail("pdfinfo and pdflatex are needed: install poppler-utils and texlive")
    with tempfile.TemporaryDirectory() as work:
        for path in (ROOT / "out").glob("*.tex"):
            shutil.copy(path, work)
        for _ in range(2):  # contents and references settle, as `derive --pdf` does
            subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "notes.tex"], cwd=work,
                           capture_output=True, timeout=300, check=True)
        info = subprocess.run(["pdfinfo", str(Path(work) / "notes.pdf")], capture_output=True, text=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)$", info, re.M).group(1))


def _python_version() -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return re.fullmatch(r">=\s*([\d.]+)", project["requires-python"].split("#")[0].strip()).group(1)


def _check_columns() -> int:
    return int(re.search(r"COLUMNS, default (\d+)", " ".join(COMMANDS["check"].format_help().split())).group(1))


def _site_sizes() -> tuple[str, ...]:
    """The built site's size in MB: in all, then the Pyodide core, the wheels, KaTeX."""
    import tempfile

    from symbolic_attn.web.build import build_site
    from tests.test_web_build import filled_cache

    with tempfile.TemporaryDirectory() as work:
        sizes = build_site(Path(work) / "site", cache=filled_cache(), offline=True)
    total = sum(sizes.values())
    return (f"{round(total / 1e6)}", *(f"{sizes[part] / 1e6:.1f}" for part in ("pyodide", "wheels", "katex")))


def _timeout(builder) -> int:
    return inspect.signature(builder).parameters["timeout"].default


def _facts():
    """(pattern, value) for every number the README's prose states; the pattern's groups
    are the numbers, each compared with value() (one value, or a tuple for several groups)."""
    from symbolic_attn.cli import attention, compare, options
    from symbolic_attn.cli import run as run_module
    from symbolic_attn.grading import bundles, computation, rounded_inputs
    from symbolic_attn.proofs.scripts import load_scripts
    from symbolic_attn.render.display import JSON_DIGITS

    return [
        (r"Python ≥ (\d+\.\d+)", _python_version),
        (r"and (\d+) submissions in", _submissions),
        (r"at most\s+(\d+) queries and (\d+) keys", lambda: (attention.MAX_TOKENS, attention.MAX_TOKENS)),
        (r"decimal places (?:shown|of the decimal column), +to (\d+)", lambda: options.MAX_DIGITS),
        (r"random cases besides the fixed ones, +to (\d+)", lambda: compare.MAX_RANDOM),
        (r"always has (\d+) significant digits", lambda: JSON_DIGITS),
        (r"else (\d+) columns", _check_columns),
        (r"more than (\d+) expression nodes", lambda: run_module.PRINT_BUDGET),
        (r"over ([\d,]+) nodes, or more than (\d+) s of work",
         lambda: (f"{run_module.RUN_NODE_LIMIT:,}", f"{run_module.DEFINITION_SECONDS:g}")),
        (r"the (\d+) built-in results", lambda: len(load_scripts())),
        (r"notes are\s+(\d+) pages", _notes_pages),
        (r"holds (\d+) exercise files", _exercise_files),
        (r"whole number from (\d+) to (\d+);", lambda: (0, computation.MAX_ROUNDED_PLACES)),
        (r"at most (\d+) rounded entries", lambda: rounded_inputs.MAX_ROUNDED_ENTRIES),
        (r"The site is about (\d+) MB: the Pyodide core ([\d.]+) MB, the\s+wheels ([\d.]+) MB, KaTeX ([\d.]+) MB",
         _site_sizes),
        (r"(\d+) s on Gradescope", lambda: _timeout(bundles.build_gradescope)),
        (r"(\d+) s under PrairieLearn's", lambda: _timeout(bundles.build_prairielearn)),
        (r"PrairieLearn's\s+(\d+) s default", lambda: bundles._PRAIRIELEARN_INFO["externalGradingOptions"]["timeout"]),
    ]


#: Names that hold digits but state no number.
NAMES = re.compile(r"UTF-(?:8|16)\b|Keras 3\b|\bsha256\b")


def test_every_number_in_the_prose_is_a_checked_fact():
    from symbolic_attn.render.labels import markdown_table

    # The label table is generated by the code (tests/test_run_shown.py holds it equal).
    text = prose(README.replace(markdown_table(), " " * len(markdown_table())))
    text = NAMES.sub(lambda m: " " * len(m.group(0)), text)
    covered = []
    for pattern, value in _facts():
        matches = list(re.finditer(pattern, text))
        assert matches, f"the README no longer states {pattern!r}: remove the fact from this test"
        expected = value()
        expected = tuple(str(v) for v in expected) if isinstance(expected, tuple) else (str(expected),)
        for match in matches:
            assert match.groups() == expected, f"{match.group(0)!r}: the code says {expected}"
            covered.extend(range(match.start(g), match.end(g)) for g in range(1, len(expected) + 1))
    positions = {i for span in covered for i in span}
    unchecked = []
    for match in re.finditer(r"\d+(?:[.,]\d+)*", text):
        if not set(range(match.start(), match.end())) <= positions:
            line = text.count("\n", 0, match.start()) + 1
            unchecked.append(f"line {line}: {match.group(0)!r} in {text.splitlines()[line - 1].strip()[:80]!r}")
    assert not unchecked, "numbers no test checks (write a fact for each, or put an example value in `code`):\n" + \
        "\n".join(unchecked)


def test_the_exercise_file_shown_is_the_example():
    shown = re.search(r'```toml\n(title = .*?)```', section("Exercise files"), re.S).group(1)
    assert tomllib.loads(shown) == tomllib.loads((ROOT / "examples" / "readme.toml").read_text(encoding="utf-8"))


def test_the_python_sessions_shown_run():
    import doctest

    blocks = [b for b in re.findall(r"^```python\n(.*?)^```", README, re.S | re.M) if b.startswith(">>>")]
    assert blocks
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for number, block in enumerate(blocks, start=1):
        test = doctest.DocTestParser().get_doctest(block, {}, f"README python block {number}", "README.md", 0)
        runner.run(test)
    assert runner.failures == 0


def test_every_known_mistake_is_named():
    from symbolic_attn.model.mistakes import CATALOGUE

    text = section("`symbolic-attn check`") + _define_section() + section("`symbolic-attn steps`")
    missing = [mistake for mistake in CATALOGUE if f"`{mistake}`" not in text]
    assert not missing, f"mistakes of the catalogue the README does not name: {missing}"


def test_the_oracle_page_names_every_diagnosis_and_convention():
    from symbolic_attn.numerics.adapters import CONVENTIONS, KEY_CONVENTIONS
    from symbolic_attn.numerics.diagnose import DIAGNOSES

    text = (ROOT / "docs" / "oracle.md").read_text(encoding="utf-8")
    for name in [*DIAGNOSES, *CONVENTIONS, *KEY_CONVENTIONS]:
        assert f"`{name}`" in text, name
