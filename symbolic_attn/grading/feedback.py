r"""Feedback a student understands: the remedy of each diagnosis, with the exercise's numbers.

The remedies themselves are rows of the one mistake catalogue
(:data:`symbolic_attn.model.mistakes.CATALOGUE`); this module fills in the exercise's
own scale and d_k and puts the sentences of one answer together.

The sentences name the numbers of the exercise (``√d_k = √2``, the scale it gives), never
the exact answer itself.  Whole-matrix answers say which entries are wrong.

>>> from types import SimpleNamespace as NS
>>> spec = NS(shape=(3, 3, 2, 2), scale="default", mask_kind="none")
>>> sentence("unscaled", NS(attention=spec))
'These values come from the unscaled scores: divide the scores by √d_k = √2 before the softmax.'
>>> sentence("layer_norm_unbiased", NS(attention=None))[:40]
'The variance was divided by d - 1: Layer'
"""

from fractions import Fraction

from symbolic_attn.model.mistakes import CATALOGUE

__all__ = ["sentence", "for_result", "missing", "placeholder", "unreadable", "refused", "passed", "imprecise",
           "transposed_shape", "points_text", "unmatched_name", "close_name"]

def _context(exercise) -> dict:
    """The exercise's own numbers for the remedies ({} for one without ``[attention]``)."""
    spec = getattr(exercise, "attention", None)
    if spec is None:
        return {}
    d_k = spec.shape[2]
    if spec.scale == "default" and d_k is not None:
        scale = f"1/√d_k = 1/√{d_k}"
        remedy = f"divide the scores by √d_k = √{d_k} before the softmax"
    elif spec.scale in ("none", "default"):
        scale = "1 (the scores are used as given)"
        remedy = "use the scores as given"
    else:
        scale = f"the factor {spec.scale} the exercise gives"
        remedy = f"multiply the scores by {spec.scale} before the softmax"
    return {"d_k": d_k if d_k is not None else "d_k", "scale": scale, "unscaled_remedy": remedy}


def sentence(mistake: str, exercise, detail: str = "") -> str:
    """The remedy of one diagnosis id (a plain fallback for an id the catalogue lacks)."""
    row = CATALOGUE.get(mistake)
    if row is None:
        return f"Known mistake: {mistake.replace('_', ' ')}."
    return row.sentence(_context(exercise), detail if mistake == "rounded_intermediates" else "")


def points_text(value: Fraction) -> str:
    """2, 1.5, 0.6667: points as a short decimal (exports and feedback)."""
    if value.denominator == 1:
        return str(value.numerator)
    text = f"{float(value):.4f}".rstrip("0").rstrip(".")
    return text


def _entries(positions) -> str:
    shown = ", ".join(f"({i},{j})" for i, j in positions[:12])
    return shown + (", ..." if len(positions) > 12 else "")


def for_result(result, question, exercise, details, share, count) -> str:
    """The feedback of a wrong, carried-forward or undecided answer."""
    parts = []
    if count > 1 and result.wrong:
        right = count - len(result.wrong)
        parts.append(f"Entries {_entries(result.wrong)} of {question.name} are wrong"
                     + (f"; the other {right} are right." if right else "."))
    if result.verdict == "carried_forward":
        parts.append(f"It follows from your own earlier answers as you wrote them, so it earns {points_text(result.points)} of "
                     f"{points_text(question.points)} points (carried forward): fix the earlier step to earn all of them.")
    elif result.verdict == "undecided":
        parts.append("The checker could not decide whether this value meets the rule "
                     f"({question.requirement()}); it earns no points until a grader looks at it.")
    seen = set()
    for mistake, detail in details:
        if mistake in seen or mistake == "follows_from_claimed" and result.verdict == "carried_forward":
            continue
        seen.add(mistake)
        parts.append(sentence(mistake, exercise, detail))
        if len(seen) == 2:
            break
    if not seen and result.verdict == "fail":
        for mistake in result.diagnosis[:2]:
            parts.append(sentence(mistake, exercise))
            seen.add(mistake)
    if not seen and result.verdict == "fail":
        parts.append(f"No known mistake reproduces this value (judged: {question.requirement()}): recompute this step.")
    return " ".join(parts)


def imprecise(question, texts, result, count) -> str:
    """Numbers written with fewer digits than the question asks for."""
    shown = ", ".join(texts[:6]) + (", ..." if len(texts) > 6 else "")
    where = f"Entries {_entries(result.wrong)} of {question.name}: " if count > 1 else ""
    return f"{where}Give {question.requirement()}: {shown} {'is' if len(texts) == 1 else 'are'} not written that precisely."


def passed(question) -> str:
    return f"Correct ({question.requirement()})."


def placeholder(question, rows: int, cols: int) -> tuple:
    """(a value of the question's own shape with ``...`` for each number, what it is in words):
    one number, a row of k, or an n x m matrix as nested brackets (one bracket per row).
    ``rows`` and ``cols`` are those of the question's answer (a row question: 1 x k).

    >>> from types import SimpleNamespace as NS
    >>> placeholder(NS(row=3, col=2), 1, 1)
    ('...', 'one number')
    >>> placeholder(NS(row=3, col=None), 1, 3)
    ('[..., ..., ...]', 'a row of 3 numbers')
    >>> placeholder(NS(row=None, col=None), 3, 2)
    ('[[..., ...], [..., ...], [..., ...]]', 'a 3x2 matrix, one bracket per row')
    """
    def row(k):
        shown = ["..."] * min(k, 12)
        return "[" + ", ".join(shown) + (", ... " if k > 12 else "") + "]"

    if question.row is not None and question.col is not None:
        return "...", "one number"
    if question.row is not None or question.col is not None:
        k = max(rows, cols) if min(rows, cols) == 1 else rows * cols
        return row(k), f"a row of {k} number{'s' if k != 1 else ''}"
    shown = ", ".join(row(cols) for _ in range(min(rows, 8))) + (", ..." if rows > 8 else "")
    return f"[{shown}]", f"a {rows}x{cols} matrix, one bracket per row"


def missing(question, rows: int | None = None, cols: int | None = None) -> str:
    """No answer: how to write one, with the question's own name and shape (never another
    exercise's numbers).  Without a shape, the name alone."""
    if rows is None or cols is None:
        return f"No answer for {question.name} was found: write it as a statement {question.name} = VALUE."
    example, what = placeholder(question, rows, cols)
    return (f"No answer for {question.name} was found: write it as a statement such as {question.name} = {example} "
            f"({what}).")


def unreadable(line, problem) -> str:
    return f"Your answer on line {line} could not be read ({problem}): write a number, a fraction or a list of numbers."


def unmatched_name(written, suggestion) -> str:
    """A name read from the solution that no question has (``suggestion``: a close question)."""
    text = f"read `{written}`: no question has this name"
    if suggestion is None:
        return text + " (it is not graded)"
    return text + f"; did you mean `{suggestion.name}`? (names are matched exactly, case included)"


def close_name(written, line, name) -> str:
    """The end of a missing answer's feedback when a close name was written."""
    return f"Line {line} has `{written}`, which is not {name} (names are matched exactly, case included)."


def refused(reason) -> str:
    return f"This submission could not be read: {reason}."


def transposed_shape(question, rows, cols) -> str:
    return f"{question.name} is a {rows}x{cols} matrix and your answer is {cols}x{rows}: it is transposed (row i belongs to query i)."
