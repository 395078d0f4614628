r"""The value grammar of a solution's statements: tokens of one right-hand side -> claimed text.

A small recursive descent over the tokens of :mod:`.submissions` (never ``eval``, never a
general LaTeX parser): numbers, ``\frac``, ``\sqrt``, ``e^{..}``, ``\exp``, ``\ln``,
``\cdot``/``\times``, lists, nested lists and matrix environments.  The result is a tree of
the one input language (:mod:`symbolic_attn.exact.syntax`), which
:func:`~symbolic_attn.grading.claims.claimed_from_tree` judges, with every decimal exactly
as written (``2.8 \times 10^{-1}`` is the number ``2.8e-1``), so that its precision counts.

A right-hand side that is a formula with names (``softmax(QK^T) V``) raises
:class:`Formula`; one that looks numeric but breaks the grammar raises :class:`Unreadable`
with what was wrong.

>>> from symbolic_attn.grading.solution_tokens import tokenize
>>> from symbolic_attn.exact.syntax import to_text
>>> to_text(claimed_tree(tokenize(r"\frac{1}{1+e^{-2}}", False)[0]))
'1/(1 + e^(-2))'
>>> claimed_tree(tokenize(r"2.8 \times 10^{-1}", False)[0]).text
'2.8e-1'
"""

from symbolic_attn.exact.syntax import BinOp, Call, Matrix, Name, Node, Number, UnaryOp, number_value, to_text
from symbolic_attn.exact.limits import DEFAULT_LIMITS

__all__ = ["claimed_tree", "Unreadable", "Formula", "MAX_DEPTH", "MAX_DIMENSION"]

MAX_DEPTH = DEFAULT_LIMITS.max_depth  # brackets nested in one value (the one set of bounds, exact.limits)
MAX_DIMENSION = DEFAULT_LIMITS.max_dimension  # rows or columns of a claimed matrix

RELATIONS = {"=", r"\approx", "≈", r"\simeq", "≃", ":=", r"\coloneqq", r"\doteq", "≐"}
IGNORED = {r"\left", r"\right", r"\big", r"\Big", r"\bigg", r"\Bigg", r"\displaystyle", r"\textstyle",
            r"\,", r"\;", r"\:", r"\!", "\\ ", r"\quad", r"\qquad", r"\nonumber", r"\notag", r"\{", r"\}",
           r"\hline", r"\cr"}
SEPARATING = {r"\quad", r"\qquad", r"\text", r"\textrm", r"\mbox", r"\hbox", r"\\", "&", ",", ";", ":", "."}
FRACS = {r"\frac", r"\dfrac", r"\tfrac", r"\cfrac"}
FUNCS = {r"\exp": "exp", r"\ln": "ln", r"\log": "log", r"\sqrt": "sqrt", "exp": "exp", "ln": "ln",
          "log": "log", "sqrt": "sqrt", "√": "sqrt",
          # the claim grammar's other functions (exact.evaluate.SCALAR_FUNCTIONS)
          "sin": "sin", "cos": "cos", "tanh": "tanh", "erf": "erf", r"\sin": "sin", r"\cos": "cos",
          r"\tanh": "tanh"}
#: ``tensor(...)``/``array(...)`` as PyTorch and NumPy print them, and the keywords of their trailers.
PRINTED = {"tensor", "array"}
TRAILERS = {"dtype", "grad_fn", "device", "requires_grad", "layout"}
#: Words and commands for what is not a number: refused with a clear message.
NOT_NUMBERS = {"nan", "NaN", "inf", "Inf", "infinity", "Infinity", r"\infty"}
WRAPPERS = {r"\mathrm", r"\mathbf", r"\boldsymbol", r"\bm", r"\mathit", r"\operatorname", r"\mathsf",
             r"\text", r"\textrm", r"\textbf", r"\vec", r"\mathbb"}
MATRICES = {"bmatrix", "pmatrix", "matrix", "Bmatrix", "smallmatrix", "array",
             "bmatrix*", "pmatrix*", "matrix*"}
TIMES = {r"\cdot", r"\times", "*", "·", "⋅", "×", r"\ast"}
_GREEK = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi rho varsigma sigma tau "
          "upsilon phi chi psi omega").split()
_CAPITALS = "Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega".split()
UNICODE = {"−": "-", "–": "-", "π": r"\pi", "\u2009": " ", "\u00a0": " ", "\u202f": " ", "∞": r"\infty ",
           "′": "'", "″": "''", "‴": "'" * 3, "ϵ": r"\epsilon ", "ϕ": r"\phi ",
           **{letter: f"\\{name} " for letter, name in zip("αβγδεζηθικλμνξρςστυφχψω", _GREEK)},
           **{letter: f"\\{name} " for letter, name in zip("ΓΔΘΛΞΠΣΥΦΨΩ", _CAPITALS)}}


class Unreadable(Exception):
    """A value that looks numeric but breaks the grammar (reported)."""


class Formula(Exception):
    """A right-hand side that is a formula with names, not a value (skipped)."""


def claimed_tree(tokens) -> Node:
    """The input language's tree of one right-hand side (see the module docstring): the
    value a claim judges, built directly, never printed to text and parsed again."""
    return _node(_ValueParser(tokens).value())




class _ValueParser:
    r"""value := list | matrix | expr;  expr := term (('+'|'-') term)*;
    term := unary (('\cdot'|'\times'|'/'|implicit) unary)*;  unary := '-' unary | power;
    power := atom ('^' atom)?;  atom := number | group | \frac{}{} | \sqrt{} | e | \pi | f(x)."""

    def __init__(self, tokens):
        self.tokens = [t for t in tokens if t.text not in IGNORED and t.kind != "nl"]
        self.at = 0
        self.depth = 0
        self.text = " ".join(t.text for t in self.tokens)[:60]

    def peek(self, offset=0):
        index = self.at + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def take(self):
        token = self.peek()
        if token is None:
            raise Unreadable(f'value ends too early in "{self.text}"')
        self.at += 1
        return token

    def expect(self, text):
        token = self.peek()
        if token is None or token.text != text:
            raise Unreadable(f"expected '{text}' {'at the end' if token is None else 'before ' + repr(token.text)} in \"{self.text}\"")
        self.at += 1

    def enter(self):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Unreadable(f"nested deeper than {MAX_DEPTH}")

    def value(self):
        tree = self.item(comma_decimal=True)
        token = self.peek()
        if token is not None and token.text in (r"\%", "%"):
            raise Unreadable("a percentage is not read: write the number itself (0.284, not 28.4%)")
        if token is not None:
            prose = token.kind == "word" and len(token.text) > 1 and token.text not in FUNCS
            if prose or token.text in SEPARATING or token.kind == "dollar" \
                    or token.text in (r"\text", "(", r"\ldots", r"\dots", "?", "!", ")", "]", "}", "#"):
                return tree  # prose or punctuation after the value
            if token.kind in ("word", "cmd"):
                raise Formula()
            raise Unreadable(f"unexpected '{token.text}' after {to_text(_node(tree))} in \"{self.text}\"")
        return tree

    def item(self, comma_decimal):
        token = self.peek()
        if token is None:
            raise Unreadable("no value")
        if token.kind == "begin" and token.env in MATRICES:
            return self.transposed(self.matrix())
        if token.kind == "begin":
            raise Unreadable(f"environment {token.env} is not a matrix this reader knows (bmatrix, pmatrix, matrix, array)")
        if token.text == "[" or token.text == "(" and self.has_separator():
            return self.transposed(self.sequence())
        if token.kind == "word" and token.text in PRINTED and self.peek(1) is not None and self.peek(1).text == "(":
            return self.printed()
        return self.expr(comma_decimal)

    def printed(self):
        """``tensor([...], dtype=..., grad_fn=<...>)`` or ``array([...], dtype=...)`` as PyTorch
        and NumPy print them: the values inside, the keyword trailers skipped."""
        name = self.take().text
        self.expect("(")
        self.enter()
        tree = self.item(comma_decimal=False)
        while self.peek() is not None and self.peek().text == ",":
            self.take()
            key = self.peek()
            if key is None or key.text not in TRAILERS:
                raise Unreadable(f"unexpected {'end' if key is None else repr(key.text)} in {name}(...): only "
                                 f"{', '.join(sorted(TRAILERS))} may follow the values")
            self.take()
            self.expect("=")
            depth = 0
            while True:  # the keyword's value: dtype=torch.float64, grad_fn=<SoftmaxBackward0>, device='cuda:0'
                token = self.peek()
                if token is None:
                    raise Unreadable(f"{name}(...) without its closing parenthesis")
                if depth == 0 and token.text in (",", ")"):
                    break
                depth += (token.text in ("(", "[", "<")) - (token.text in (")", "]", ">"))
                self.take()
        self.expect(")")
        self.depth -= 1
        return tree

    def transposed(self, tree):
        if self.peek() is not None and self.peek().text == "^" and self.peek(1) is not None:
            mark = self.peek(1).text
            skip = 2 if mark in ("T", r"\top", r"\intercal", r"\mathsf") else 0
            if mark == "{" and self.peek(2) is not None and self.peek(2).text in ("T", r"\top", r"\intercal"):
                skip = 4
            if skip:
                self.at += skip
                rows = tree[1] if tree[0] == "rows" else [[x] for x in tree[1]] if tree[0] == "list" else None
                if rows is None:
                    raise Unreadable("only a list or matrix can be transposed")
                return ("rows", [list(column) for column in zip(*rows)])
        return tree

    def has_separator(self) -> bool:
        depth = 0
        for index in range(self.at, len(self.tokens)):  # an index, not a slice: no copy per list
            token = self.tokens[index]
            depth += (token.text in "([{") - (token.text in ")]}") if token.kind == "char" else 0
            if depth == 1 and token.text in (",", ";") and token.kind == "char":
                return True
            if depth == 0:
                return False
        return False

    def sequence(self):
        """``[a, b]`` or ``(a, b)``, entries lists or numbers; ``;`` makes commas decimal."""
        self.enter()
        closing = "]" if self.take().text == "[" else ")"
        start, depth, semicolons, commas, literal = self.at, 1, False, False, True
        for index in range(start, len(self.tokens)):  # an index, not a slice: no copy per list
            token = self.tokens[index]
            depth += (token.text in "([{") - (token.text in ")]}") if token.kind == "char" else 0
            if depth == 0:
                break
            semicolons |= depth == 1 and token.text == ";"
            commas |= depth == 1 and token.text in (",", "{,}")
            literal &= token.kind == "num" or token.text in ("[", "]", "-", "+", ".") or token.text in NOT_NUMBERS
        if closing == "]" and literal and not semicolons and not commas:
            return self.spaced()
        items = []
        while True:
            if self.peek() is not None and self.peek().text == closing and not items:
                raise Unreadable(f"empty list in \"{self.text}\"")
            items.append(self.item(comma_decimal=semicolons))
            if len(items) > MAX_DIMENSION:
                raise Unreadable(f"more than {MAX_DIMENSION} entries in one list")
            token = self.take()
            if token.text == closing:
                break
            if token.text not in (",", ";"):
                raise Unreadable(f"expected ',' or '{closing}' before '{token.text}' in \"{self.text}\"")
        self.depth -= 1
        if len(items) == 1 and items[0][0] == "rows" and closing == "]":
            return items[0]  # \left[ \begin{array}{cc} ... \end{array} \right]
        return self.rows_or_list(items)

    def rows_or_list(self, items):
        """Items of one bracketed list: rows when every item is a list, else one list of numbers."""
        if all(item[0] in ("list", "rows") for item in items):
            rows = [item[1] if item[0] == "list" else _single_row(item) for item in items]
            if len({len(row) for row in rows}) != 1:
                raise Unreadable(f"rows of different lengths in \"{self.text}\"")
            return ("rows", rows)
        if any(item[0] in ("list", "rows") for item in items):
            raise Unreadable(f"a list mixes numbers and lists in \"{self.text}\"")
        return ("list", items)

    def spaced(self):
        """NumPy's printed arrays: ``[0.1 -0.2 0.3]``, ``[[1. 0.] [0. 1.]]`` (the ``[`` taken)."""
        items = []
        while True:
            token = self.peek()
            if token is None:
                raise Unreadable(f"a list without its closing ']' in \"{self.text}\"")
            if token.text == "]":
                self.take()
                break
            if token.text == "[":
                items.append(self.sequence())
            else:
                items.append(self.spaced_number())
            if len(items) > MAX_DIMENSION:
                raise Unreadable(f"more than {MAX_DIMENSION} entries in one list")
        self.depth -= 1
        if not items:
            raise Unreadable(f"empty list in \"{self.text}\"")
        return self.rows_or_list(items)

    def spaced_number(self):
        """One entry of a space-separated list: a signed number, its sign against it."""
        token = self.take()
        sign = token.text if token.text in ("-", "+") else ""
        if sign:
            following = self.peek()
            if following is not None and following.text in NOT_NUMBERS:
                return self.atom(True, negative=sign == "-")
            if following is None or following.kind != "num" or not following.tight:
                raise Unreadable(f"'{sign}' apart from a number in a space-separated list in \"{self.text}\"")
            token = self.take()
        if token.text == ".":
            raise Unreadable("the printed array was shortened with '...': print it whole "
                             "(numpy.set_printoptions(threshold=...), torch.set_printoptions(profile='full'))")
        if token.kind != "num":
            self.at -= 1
            return self.atom(True)
        self.trailing_point(token.text)
        return ("neg", ("num", token.text)) if sign == "-" else ("num", token.text)

    def trailing_point(self, text):
        """``1.`` (a Python or NumPy float) is the number 1, as in claims: its point is taken."""
        following = self.peek()
        if following is not None and following.text == "." and following.tight and text.isdigit():
            self.at += 1

    def matrix(self):
        begin = self.take()
        if begin.env == "array" and self.peek() is not None and self.peek().text == "{":
            while self.take().text != "}":  # the column specification {ccc}
                pass
        rows, row = [], []
        while True:
            token = self.peek()
            if token is None:
                raise Unreadable(f"\\begin{{{begin.env}}} without \\end")
            if token.kind == "end":
                self.at += 1
                if row:
                    rows.append(row)
                break
            if token.text in ("&", r"\\"):
                raise Unreadable(f"empty cell in {begin.env}")
            row.append(self.expr(comma_decimal=True))
            token = self.take()
            if token.text == "&":
                continue
            if token.text == r"\\":
                rows.append(row)
                row = []
                if self.peek() is not None and self.peek().kind == "end":
                    continue
            elif token.kind == "end":
                rows.append(row)
                break
            else:
                raise Unreadable(f"unexpected '{token.text}' in {begin.env}")
            if len(rows) > MAX_DIMENSION or len(row) > MAX_DIMENSION:
                raise Unreadable(f"a matrix larger than {MAX_DIMENSION}x{MAX_DIMENSION}")
        if not rows or len({len(r) for r in rows}) != 1:
            raise Unreadable(f"{begin.env} with rows of different lengths")
        return ("rows", rows)

    # -- scalar expressions ------------------------------------------------------------

    def expr(self, comma_decimal):
        self.enter()
        tree = self.term(comma_decimal)
        while self.peek() is not None and self.peek().text in ("+", "-"):
            op = self.take().text
            tree = ("add" if op == "+" else "sub", tree, self.term(comma_decimal))
        self.depth -= 1
        return tree

    def term(self, comma_decimal):
        tree = self.unary(comma_decimal)
        while self.peek() is not None:
            token = self.peek()
            if token.text in TIMES or token.text == "/":
                self.take()
                tree = ("div" if token.text == "/" else "mul", tree, self.unary(comma_decimal))
            elif token.text in FRACS or token.text in FUNCS or token.text in (r"\pi", r"\mathrm") \
                    or token.text == "e" and self.peek(1) is not None and self.peek(1).text == "^" \
                    or token.text == "(" and (tree[0] != "num" or token.tight):
                mark = self.at
                try:
                    tree = ("mul", tree, self.power(comma_decimal))
                except (Unreadable, Formula):
                    self.at = mark  # not a factor after all: prose such as "(rounded)"
                    break
            else:
                break
        return tree

    def unary(self, comma_decimal):
        token = self.peek()
        if token is not None and token.text == "-" and self.peek(1) is not None and self.peek(1).text in NOT_NUMBERS:
            self.take()
            return self.atom(comma_decimal, negative=True)
        if token is not None and token.text in ("-", "+"):
            self.take()
            self.enter()
            operand = self.unary(comma_decimal)
            self.depth -= 1
            return ("neg", operand) if token.text == "-" else operand
        return self.power(comma_decimal)

    def power(self, comma_decimal):
        base = self.atom(comma_decimal)
        if self.peek() is not None and self.peek().text == "^":
            self.take()
            self.enter()
            exponent = self.unary(comma_decimal) if self.peek() is not None and self.peek().text == "-" \
                else self.atom(comma_decimal, single_digit=True)
            self.depth -= 1
            return ("pow", base, exponent)
        return base

    def group(self, opening, closing, comma_decimal=True):
        self.expect(opening)
        self.enter()
        tree = self.expr(comma_decimal)
        self.expect(closing)
        self.depth -= 1
        return tree

    def atom(self, comma_decimal, single_digit=False, negative=False):
        token = self.peek()
        if token is None:
            raise Unreadable(f'value ends too early in "{self.text}"')
        text = token.text
        if text in NOT_NUMBERS:
            if text.lower() == "nan":
                raise Unreadable("nan (not a number) is not a value: the computation that printed it failed "
                                 "(a row with every key masked?); give the numbers it should have")
            if negative and text in ("inf", r"\infty"):  # -inf, -\infty, −∞: a blocked score, exactly -oo
                self.take()
                return ("minf",)
            if negative:
                raise Unreadable(f"'-{text}' is not read: minus infinity is written -inf, -\\infty or −∞")
            raise Unreadable("∞ without a minus sign is not a value: only minus infinity (a blocked score, "
                             "written -inf, -\\infty or −∞) is read")
        if token.kind == "num":
            self.take()
            if single_digit and len(text) > 1 and text.isdigit():  # e^12 in TeX is e^{1}2
                raise Unreadable(f"write the exponent in braces: ^{{{text}}}")
            if not single_digit:
                self.trailing_point(text)
            return ("num", self.decimal_comma(text) if comma_decimal else text)
        if text == "(":
            return self.group("(", ")")
        if text == "{":
            return self.group("{", "}")
        if text == "[":
            raise Unreadable(f"a list where a number belongs in \"{self.text}\"")
        if text in FRACS:
            self.take()
            following = self.peek()
            if following is not None and following.kind == "num" and len(following.text) == 2 and following.text.isdigit():
                self.take()  # \frac12: TeX reads one digit per argument
                return ("div", ("num", following.text[0]), ("num", following.text[1]))
            return ("div", self.frac_argument(), self.frac_argument())
        if text in FUNCS:
            self.take()
            name = FUNCS[text]
            if name == "sqrt" and self.peek() is not None and self.peek().text == "[":
                degree = self.group("[", "]")
                return ("pow", self.group("{", "}") if self.peek() and self.peek().text == "{" else self.atom(True),
                        ("div", ("num", "1"), degree))
            if self.peek() is not None and self.peek().text in ("(", "{"):
                return ("call", name, self.group(self.peek().text, ")" if self.peek().text == "(" else "}"))
            return ("call", name, self.power(comma_decimal))  # \exp 2, \sqrt 2
        if text == r"\pi":
            self.take()
            return ("const", "pi")
        if text == "e" or token.kind == "cmd" and text in (r"\mathrm", r"\mathit", r"\text", r"\operatorname") \
                and self.peek(1) is not None and self.peek(1).text == "{" and self.peek(2) is not None:
            if text != "e":  # \mathrm{e}, \operatorname{exp}(...)
                inner = self.peek(2).text
                if self.peek(3) is None or self.peek(3).text != "}":
                    raise Formula()
                if inner == "e":
                    self.at += 4
                    return ("const", "e")
                if inner in FUNCS:
                    self.at += 4
                    return ("call", FUNCS[inner], self.group("(", ")") if self.peek() and self.peek().text == "("
                            else self.group("{", "}"))
                raise Formula()
            self.take()
            return ("const", "e")
        if token.kind == "word" and text == "oo":  # SymPy's spelling of infinity is not the input language's
            raise Unreadable("'oo' is not read: write minus infinity as -inf or -\\infty")
        if token.kind in ("word", "cmd"):
            raise Formula()
        raise Unreadable(f"unexpected '{text}' in \"{self.text}\"")

    def frac_argument(self):
        """A braced argument, or a single digit as TeX allows (\frac1{3})."""
        token = self.peek()
        if token is not None and token.kind == "num" and len(token.text) == 1:
            self.take()
            return ("num", token.text)
        return self.group("{", "}")

    def decimal_comma(self, text):
        """``0,731`` (no spaces) or ``0{,}731`` where commas cannot separate entries."""
        first, second = self.peek(), self.peek(1)
        if first is not None and second is not None and first.tight and second.tight and second.kind == "num" \
                and (first.text == "{,}" or first.text == ",") and text.isdigit() and second.text.isdigit():
            self.at += 2
            return f"{text}.{second.text}"
        return text


def _single_row(tree):
    if len(tree[1]) != 1:
        raise Unreadable("a matrix nested in a list")
    return tree[1][0]


def _node(tree) -> Node:
    """The solution grammar's tree as the input language's (:mod:`symbolic_attn.exact.syntax`):
    a decimal keeps its written text (``2.8 \times 10^{-1}`` is the Number ``2.8e-1``)."""
    kind = tree[0]
    if kind == "rows":
        return Matrix(tuple(Matrix(tuple(_node(x) for x in row), 0, 0) for row in tree[1]), 0, 0)
    if kind == "list":
        return Matrix(tuple(_node(x) for x in tree[1]), 0, 0)
    decimal = _as_decimal(tree)
    if decimal is not None:
        negative = decimal.startswith("-")
        text = decimal.lstrip("-")
        number = Number(text, *number_value(text), 0, 0)
        return UnaryOp("-", number, 0, 0) if negative else number
    if kind == "const":
        return Name(tree[1], 0, 0)
    if kind == "minf":  # the input language's literal -inf
        return UnaryOp("-", Name("inf", 0, 0), 0, 0)
    if kind == "neg":
        return UnaryOp("-", _node(tree[1]), 0, 0)
    if kind == "call":
        return Call(tree[1], (_node(tree[2]),), (), 0, 0)
    operator = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "^"}[kind]
    return BinOp(operator, _node(tree[1]), _node(tree[2]), 0, 0)


def _as_decimal(tree):
    """``-2.8 \times 10^{-1}`` -> "-2.8e-1": a decimal keeps its written precision."""
    sign = ""
    if tree[0] == "neg":
        sign, tree = "-", tree[1]
    if tree[0] == "num":
        return sign + tree[1]
    if not sign and tree[0] == "mul" and tree[1][0] == "neg" and tree[1][1][0] == "num":
        sign, tree = "-", ("mul", tree[1][1], tree[2])  # -9.258 \times 10^{-1}: the sign binds to the mantissa
    if tree[0] == "mul" and tree[1][0] == "num" and tree[2][0] == "pow" and tree[2][1] == ("num", "10"):
        exponent = tree[2][2]
        power = "-" if exponent[0] == "neg" else ""
        exponent = exponent[1] if exponent[0] == "neg" else exponent
        mantissa = tree[1][1]
        if exponent[0] == "num" and exponent[1].isdigit() and len(exponent[1]) <= 3 and "e" not in mantissa.lower():
            return f"{sign}{mantissa}e{power}{exponent[1]}"
    return None
