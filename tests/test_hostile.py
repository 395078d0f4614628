"""A hostile battery: inputs an attacker would try, each in its own process, with a clock.

Every case runs ``python -m symbolic_attn attention ...`` (or the package's ``main``
through a tiny driver, for the NUL bytes an argv cannot carry) in a subprocess with a
timeout, and asserts: the expected exit status (2 for bad input; 0 for the few valid but
heavy inputs at the edge of the limits), exactly one line on stderr when it fails, no
traceback, no control character in any output, an answer within 30 s of wall time (else
it is a hang), and a cost under the interpreter's start-up (measured once here) plus 1.5 s,
counted in CPU seconds of the process: the tests share machines, where wall time mostly
measures the neighbours.
"""

import concurrent.futures
import json
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ONE = ["--k", "[[1]]", "--v", "[[1]]"]
BY_HAND = ["--q", "[[1,0],[0,1],[1,1]]", "--k", "[[1,0],[0,1],[1,1]]", "--v", "[[2,0],[0,2],[2,2]]"]
SLACK = 1.5  # seconds allowed beyond start-up
OK, BAD = {0}, {2}


def q(entry: str) -> list:
    """One query entry under attack, with a valid key and value."""
    return ["attention", "--q", f"[[{entry}]]", *ONE]


def scores(entry: str) -> list:
    return ["attention", "--scores", f"[[{entry}, 0]]", "--v", "[[1],[2]]"]


# id: (argv, allowed exit codes, regex the one stderr line must match or None)
CASES = {
    # -- bombs: powers, merged powers, huge numbers ----------------------------------
    "pow-tower": (q("9**9**9**9"), BAD, r"exponent 387420489 at column \d+ exceeds the limit of 1000"),
    "pow-tower-caret": (q("9^9^9^9"), BAD, r"exponent 387420489"),
    "pow-tower-parens": (q("((9**9)**9)**99"), BAD, r"power at column \d+ would have about \d+ bits"),
    "merged-int-power": (q("((2)**1000)**1000"), BAD, r"power at column \d+ would have about 1001000 bits"),
    "merged-surd-power": (scores("((1+sqrt(2))**1000)**7 - ((3+2*sqrt(2))**500)**7 + 1/2000"), BAD, r"a power of degree 1000 built at column 4 exceeds the limit of 256"),
    "merged-pi-power": (q("(pi**100)**100"), BAD, r"exponent 10000 in pi\*\*10000 built at column 3 exceeds the limit of 1000"),
    "surd-power-tie": (scores("(1+sqrt(2))**1000 - (3+2*sqrt(2))**500 + 1/2000"), BAD, r"a power of degree 1000 built at column \d+ exceeds the limit of 256"),
    "degree-product": (q("(1+sqrt(2))**200*(1+sqrt(3))**200"), BAD, r"a power of degree 400"),
    "power-of-exp": (q("exp(1)**(10**6)"), BAD, r"exponent 1000000 at column \d+ exceeds"),
    "literal-5000-digits": (q("1" * 5000), BAD, r"a number with 5000 digits at column 3 exceeds the limit of 400"),
    "literal-401-digits": (q("7" * 401), BAD, r"a number with 401 digits"),
    "decimal-exponent": (q("1e100000000"), BAD, r"decimal exponent 100000000 at column 3 exceeds the limit of 400"),
    "decimal-exponent-negative": (q("1e-401"), BAD, r"decimal exponent -401"),
    "decimal-exponent-plus-zeros": (q("1E+0000000000000000401"), BAD, r"decimal exponent \+0+401"),
    "product-of-powers": (q("2**1000*3**1000*5**1000*7**1000"), BAD, r"a number of about \d+ digits built at column \d+ exceeds"),
    "big-product": (q("10**999*10**999"), BAD, r"a number of about \d+ digits built"),
    "huge-denominator": (q("1/(3**1000*7**1000*11**900)"), BAD, r"digits built at column"),
    "hex-literal": (q("0x" + "f" * 1000), BAD, r"a number with 1002 digits"),
    "underscore-literal": (q("1_000"), OK, None),  # Python's digit grouping: still ASCII digits
    # -- functions ---------------------------------------------------------------------
    "exp-big": (q("exp(10**5)"), BAD, r"exp of 100000 at column 3: arguments beyond \+-6900 are refused"),
    "exp-tower": (q("exp(exp(exp(exp(1))))"), BAD, r"exp of exp\(exp\(e\)\)|exp of exp\(exp\(E\)\)"),
    "sin-huge": (q("sin(10**400)"), BAD, r"sin of 1000000"),
    "cos-pi-huge": (q("cos(pi*10**300)"), BAD, r"cos of"),
    "log-zero": (q("ln(0)"), BAD, r"ln of a non-positive number \(0\)"),
    "log-of-log": (q("log(log(log(2)))"), BAD, r"log of a non-positive number"),
    "sqrt-negative": (q("sqrt(-1)"), BAD, r"sqrt of a negative number"),
    "complex-power": (q("(-1)**(1/2)"), BAD, r"I is not a real number"),
    "zero-division": (q("1/(1-1)"), BAD, r"division by zero"),
    "pi-tower": (q("pi**pi**pi**pi"), BAD, r"too large or too small to show as a decimal|exceeds|exponents beyond \+-6900 are refused"),
    "exp-6900-valid": (scores("exp(6900)"), OK, None),
    "score-huge-valid": (scores("10**1000"), OK, None),
    "score-minus-huge": (scores("-10**1000"), {0, 2}, None),  # e^(-10^1000): a decimal or one honest line
    "many-surds-valid": (scores("+".join(f"sqrt({k})" for k in range(2, 60))), OK, None),
    # -- nesting and length ------------------------------------------------------------
    "deep-parens": (q("(" * 500 + "1" + ")" * 500), BAD, r"brackets nested 502 deep exceed the limit of 32"),
    "deep-brackets": (["attention", "--q", "[" * 100 + "1" + "]" * 100, *ONE], BAD, r"brackets nested 100 deep"),
    "deep-unary": (q("-" * 5000 + "1"), BAD, r"nested more than 200 operations deep|expression too complex to parse"),
    "long-sum": (q("+".join(["1"] * 15000)), BAD, r"text of 30003 characters exceeds the limit of 20000"),
    # A flat sum is a chain, not a nesting (issue 19): read, within the size limit.
    "long-chain-surds": (q("+".join(f"sqrt({k})" for k in range(2, 400))), OK, None),
    "text-too-long": (["attention", "--q", "[[" + " " * 30000 + "1]]", *ONE], BAD, r"text of 30005 characters exceeds"),
    "matrix-in-entry": (["attention", "--q", "[[[1]]]", *ONE], BAD, r"a matrix entry must be a number|list"),
    "matrix-product-bomb": (q("1" + "@1" * 10), BAD, r"10 matrix products exceed the limit of 6"),
    # -- code injection ----------------------------------------------------------------
    "dunder-import": (q("__import__('os').system('echo pwned')"), BAD, r"only named functions|unknown function"),
    "attribute-walk": (q("(1).__class__.__mro__"), BAD, r"attribute '\.__mro__' is not allowed"),
    "lambda": (q("(lambda: 1)()"), BAD, r"lambda is not allowed"),
    "f-string": (q("f'{1}'"), BAD, r"f-string is not allowed"),
    "walrus": (q("(x := 1)"), BAD, r"assignment is not allowed"),
    "string-literal": (q("'a'"), BAD, r"literal 'a' is not allowed"),
    "starred": (q("*[1]"), BAD, r"star expression is not allowed|malformed"),
    "comprehension": (q("[i for i in (1,)]"), BAD, r"comprehension is not allowed"),
    "subscript": (q("[1][0]"), BAD, r"indexing is not allowed"),
    # -- brackets and shapes -----------------------------------------------------------
    "unclosed-bracket": (["attention", "--q", "[[1,0],[0,1]", *ONE], BAD, r"--q: unclosed '\[' opened at column 1: no matching '\]'"),
    "mismatched-bracket": (["attention", "--q", "[[1,0],[0,1)]", *ONE], BAD, r"'\)' at column 12 does not match '\[' opened at column 8"),
    "empty-list": (["attention", "--q", "[]", *ONE], BAD, r"empty matrix"),
    "ragged": (["attention", "--q", "[[1,2],[3]]", "--k", "[[1,2]]", "--v", "[[1]]"], BAD, r"row 2 has 1 entries, row 1 has 2"),
    "too-many-queries": (["attention", "--q", str([[1]] * 17), *ONE], BAD, r"17 queries \(n\) exceed"),
    "too-many-columns": (["attention", "--q", str([[1] * 33]), "--k", str([[1] * 33]), "--v", "[[1]]"], BAD, r"1x33 entries exceeds the limit"),
    "empty-text": (["attention", "--q", "", *ONE], BAD, r"empty expression"),
    "blank-text": (["attention", "--q", " \t ", *ONE], BAD, r"control character|empty expression"),
    "scores-and-q": (["attention", "--scores", "[[1]]", "--q", "[[1]]", *ONE], BAD, r"give either --scores or --q and --k"),
    # -- masks -------------------------------------------------------------------------
    "mask-wrong-shape": ([*["attention"], *BY_HAND, "--mask", "keep:[[1,1],[1,1]]"], BAD, r"--mask keep: the grid is 2x2, the scores are 3x3"),
    "mask-entry-2": (["attention", "--q", "[[1]]", *ONE, "--mask", "block:[[2]]"], BAD, r"block mask entry \(1,1\) is 2"),
    "mask-huge-entry": (["attention", "--q", "[[1]]", *ONE, "--mask", "keep:[[10**399]]"], BAD, r"keep mask entry \(1,1\) is 1000"),
    "mask-power-tower": (["attention", "--q", "[[1]]", *ONE, "--mask", "keep:[[9**9**9]]"], BAD, r"--mask keep: exponent"),
    "mask-ragged": (["attention", *BY_HAND, "--mask", "keep:[[1,0],[1]]"], BAD, r"row 2 has 1 entries"),
    "mask-padding-negative": (["attention", *BY_HAND, "--mask", "padding:-1"], BAD, r"--mask padding: expected a whole number"),
    "mask-padding-huge": (["attention", *BY_HAND, "--mask", "padding:999999"], BAD, r"valid key count 999999 is outside 0\.\.3"),
    "mask-padding-bomb": (["attention", *BY_HAND, "--mask", "padding:" + "9" * 5000], BAD, r"--mask padding: expected a whole number"),
    "mask-all-blocked": (["attention", *BY_HAND, "--mask", "block:[[1,1,1],[0,0,0],[0,0,0]]"], BAD, r"row 1 allows no key"),
    "mask-float-entry": (["attention", "--q", "[[1]]", *ONE, "--mask", "keep:[[1.0]]"], OK, None),
    "mask-half-entry": (["attention", "--q", "[[1]]", *ONE, "--mask", "keep:[[0.5]]"], BAD, r"keep mask entry \(1,1\) is 1/2"),
    # -- control characters, unicode, bytes --------------------------------------------
    "esc-in-q": (["attention", "--q", "[[1]]\x1b[31m", *ONE], BAD, r"control character '\\x1b' at column 6"),
    "bel-in-v": (["attention", "--q", "[[1]]", "--k", "[[1]]", "--v", "[[1\x07]]"], BAD, r"control character '\\x07'"),
    "cr-in-mask": (["attention", *BY_HAND, "--mask", "causal\rfake line"], BAD, r"unknown mask 'causal\\rfake line'"),
    "newline-in-mask": (["attention", *BY_HAND, "--mask", "up\nsymbolic-attn: ok"], BAD, r"unknown mask 'up\\nsymbolic-attn: ok'"),
    "newline-in-scores": (["attention", "--scores", "[[1,\n0]]", "--v", "[[1],[2]]"], OK, None),
    "esc-in-option-name": (["attention", "--\x1b[2J", *BY_HAND], BAD, r"unrecognized arguments: --\\x1b\[2J"),
    "esc-in-format": (["attention", *BY_HAND, "--format", "\x1b[31mjson"], BAD, r"invalid choice"),
    "bidi-in-mask": (["attention", *BY_HAND, "--mask", "keep:\u202e[[1]]"], BAD, r"non-ASCII character '\\u202e'"),
    "unicode-digit": (q("\u0661"), BAD, r"non-ASCII character '\u0661' \(U\+0661\)"),
    "bengali-decimal": (q("0.\u09e7\u09ec\u09ed"), BAD, r"non-ASCII character"),
    "fullwidth-e": (q("\uff45"), BAD, r"non-ASCII character"),
    "nul-in-q": (["attention", "--q", "[[1\x00]]", *ONE], BAD, r"control character '\\x00'"),
    "nul-in-mask": (["attention", *BY_HAND, "--mask", "causal\x00"], BAD, r"unknown mask 'causal\\x00'"),
    "invalid-utf8": (["attention", "--q", b"[[1\xff]]", *ONE], BAD, r"non-ASCII character '\\udcff'"),
    "invalid-utf8-option": (["attention", b"--\xfe", *BY_HAND], BAD, r"unrecognized arguments: --\\udcfe"),
    # -- options -----------------------------------------------------------------------
    "digits-huge": (["attention", *BY_HAND, "--digits", "1000"], BAD, r"--digits must be a whole number between 0 and 100"),
    "digits-unicode": (["attention", *BY_HAND, "--digits", "\u0663"], BAD, r"--digits must be a whole number"),
    "digits-bomb": (["attention", *BY_HAND, "--digits", "9" * 5000], BAD, r"--digits must be a whole number"),
    "digits-100-valid": (["attention", *BY_HAND, "--digits", "100"], OK, None),
    "scale-zero-division": (["attention", *BY_HAND, "--scale", "1/0"], BAD, r"^symbolic-attn: error: --scale: division by zero"),
    "scale-huge": (["attention", *BY_HAND, "--scale", "10**1000"], {0, 2}, None),
    "scale-too-huge": (["attention", *BY_HAND, "--scale", "10**999*10**999"], BAD, r"--scale: a number of about \d+ digits built"),
    "scale-exponent": (["attention", *BY_HAND, "--scale", "0.5e999"], BAD, r"--scale: decimal exponent 999"),
    "scale-nan": (["attention", *BY_HAND, "--scale", "nan"], BAD, r"--scale: nan is not a number"),
    "scale-matrix": (["attention", *BY_HAND, "--scale", "[[1]]"], BAD, r"--scale: .*matrix|--scale: a list"),
    "scale-tower": (["attention", *BY_HAND, "--scale", "9**9**9"], BAD, r"--scale: exponent"),
    "scale-exp-big": (["attention", *BY_HAND, "--scale", "exp(6900)"], {0, 2}, None),
    "empty-row-bogus": (["attention", *BY_HAND, "--empty-row", "ignore"], BAD, r"invalid choice: 'ignore'"),
    "timeout-bogus": (["--timeout", "nan", "attention", *BY_HAND], BAD, r"argument --timeout: expected seconds"),
    "timeout-hit": (["attention", "--scores", "[[(1+sqrt(2))**256 - (3+2*sqrt(2))**128 + 1/2000, 0]]", "--v", "[[1],[2]]", "--timeout", "0.01"], BAD, r"time limit of 0\.01 s reached while"),
    "no-command": ([], BAD, r"the following arguments are required: COMMAND"),
    "unknown-command": (["\x1b]0;pwned\x07"], BAD, r"invalid choice: '\\x1b\]0;pwned\\x07'"),
}

DRIVER = (
    "import json, sys\n"
    "from symbolic_attn.cli import main\n"
    "sys.argv[0] = 'symbolic-attn'\n"
    "raise SystemExit(main(json.loads(sys.argv[1])))\n"
)
HANG = 30.0  # seconds of wall time after which a case counts as a hang


def _command(argv):
    """``python -m symbolic_attn ARGV``, or the driver when an argument holds a NUL byte."""
    if any(isinstance(a, str) and "\x00" in a for a in argv):
        return [sys.executable, "-c", DRIVER, json.dumps(argv)]
    return [sys.executable, "-m", "symbolic_attn", *argv]


def _run(argv):
    """(exit status, stdout, stderr, CPU seconds, wall seconds) of one case in its own process.

    The CPU time (user + system, from ``wait4``) is what the case cost: on a shared
    machine wall time measures the neighbours too.  A case past ``HANG`` seconds of wall
    time is killed and reported as a hang.
    """
    started = time.perf_counter()
    process = subprocess.Popen(
        _command(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT
    )
    output = {}
    readers = [
        threading.Thread(target=lambda: output.__setitem__("out", process.stdout.read())),
        threading.Thread(target=lambda: output.__setitem__("err", process.stderr.read())),
    ]
    for reader in readers:
        reader.start()
    killer = threading.Timer(HANG, process.kill)
    killer.start()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    killer.cancel()
    for reader in readers:
        reader.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    process.stdout.close()
    process.stderr.close()
    decode = lambda data: data.decode("utf-8", "backslashreplace")  # noqa: E731 -- a one-line local helper
    return process.returncode, decode(output["out"]), decode(output["err"]), usage.ru_utime + usage.ru_stime, wall


@pytest.fixture(scope="module")
def start_up():
    """CPU seconds for the interpreter to start and import the command (the best of three)."""
    return min(_run(["--version"])[3] for _ in range(3))


@pytest.fixture(scope="module")
def results():
    """Every case, run two at a time (CPU time per process is unaffected)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(CASES, pool.map(lambda name: _run(CASES[name][0]), CASES)))


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff]")


@pytest.mark.parametrize("name", CASES, ids=list(CASES))
def test_hostile_input(name, results, start_up):
    _, codes, message = CASES[name]
    code, out, err, cpu, wall = results[name]
    assert wall < HANG, f"hang: no answer in {HANG} s"
    assert "Traceback" not in err and "Traceback" not in out, err[-2000:]
    assert code in codes, f"exit {code}: {err[-500:]}"
    assert not _CONTROL.search(out) and not _CONTROL.search(err), repr((out[-300:], err[-300:]))
    if code:
        assert err.count("\n") == 1 and err.endswith("\n") and out == "", repr(err)
        assert err.startswith("symbolic-attn") and len(err) < 600
        if message:
            assert re.search(message, err), err
    else:
        assert err == "", err
    assert cpu < start_up + SLACK, f"{cpu:.2f} s of CPU (start-up {start_up:.2f} s)"


def test_battery_is_large_enough():
    assert len(CASES) >= 60


def test_the_battery_can_fail(start_up):
    """The checks catch what they are for: a traceback, two lines, a raw escape, slowness."""
    code, out, err, cpu, _ = _run(["attention", "--q", "[[1]]", *ONE])
    assert code == 0 and out and err == "" and cpu < start_up + SLACK
    broken = [sys.executable, "-c", "import sys; sys.stderr.write('a\\x1b[31m\\nb\\n'); raise KeyError"]
    completed = subprocess.run(broken, capture_output=True, text=True, timeout=60)
    assert "Traceback" in completed.stderr and completed.stderr.count("\n") > 1
    assert _CONTROL.search(completed.stderr)


# -- the same attitude in-process: random token soup through the parser ---------------

from hypothesis import HealthCheck, given, settings  # noqa: E402 -- imports of the section below
from hypothesis import strategies as st  # noqa: E402 -- imports of the section below

TOKENS = [
    "1", "9", "0", "0.5", "99999", "1e400", "1e-3", "e", "pi", "E", "x", "sqrt(", "exp(", "log(", "ln(", "sin(",
    "cos(", "(", ")", "[", "]", ",", "+", "-", "*", "/", "**", "^", "@", ".T", " ", "\x1b", "\u0661", "\n", "'",
    "__import__", "lambda", ":", "=", "!", "1j", "0x1", "_", ".", "{", "}", "%", "<", ">", ";",
]


@settings(max_examples=300, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(TOKENS), max_size=40), st.booleans())
def test_token_soup_gives_a_value_or_a_typed_error(tokens, as_matrix):
    from symbolic_attn.errors import SymbolicAttnError
    from symbolic_attn.exact.parse import parse_expression, parse_matrix

    text = "".join(tokens)
    try:
        value = (parse_matrix if as_matrix else parse_expression)(text)
    except SymbolicAttnError as error:
        message = str(error)
        assert message.isprintable() and len(message) < 400, repr(message)
    else:
        assert value is not None
