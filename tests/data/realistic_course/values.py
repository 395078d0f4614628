"""Independent values for the realistic course (mpmath at 40 digits; no symbolic_attn).

`python values.py` prints every stage and the mistaken variants the submissions use;
tests/test_realistic_course.py imports `true_values()` and compares them with the
decimals the tool reports.  Blocked scores are float('-inf').
"""

from mpmath import cos, exp, mp, mpf, sin, sqrt

mp.dps = 40

Q = [[1, 0], [0, 1], [1, 1]]
K = [[1, 1], [0, 1], [1, 0]]
V = [[1, 0], [0, 2], [1, 1]]
NEG_INF = float("-inf")


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))]
            for i in range(len(a))]


def causal(i, j):
    return j <= i


def row_softmax(m, allowed):
    out = []
    for i, row in enumerate(m):
        e = [exp(x) if allowed(i, j) else mpf(0) for j, x in enumerate(row)]
        total = sum(e)
        out.append([x / total for x in e])
    return out


def causal_stages():
    scores = [[mpf(sum(qi * ki for qi, ki in zip(q, k))) for k in K] for q in Q]
    scaled = [[x / sqrt(2) for x in row] for row in scores]
    masked = [[x if causal(i, j) else NEG_INF for j, x in enumerate(row)]
              for i, row in enumerate(scaled)]
    weights = row_softmax(scaled, causal)
    output = matmul(weights, V)
    return {"scores": scores, "scaled": scaled, "masked": masked, "weights": weights,
            "output": output}


def layer_norm_stages():
    x = [mpf(1), mpf(2), mpf(6)]
    mean = sum(x) / 3
    var = sum((v - mean) ** 2 for v in x) / 3            # biased, eps = 0
    L = [[(v - mean) / sqrt(var) for v in x]]
    P = [[sin(p), cos(p)] for p in (mpf(0), mpf(1), mpf(2))]   # width 2: frequency 1
    return {"L": L, "P": P}


def true_values():
    """Question name -> value (a number or nested lists), per course."""
    c = causal_stages()
    n = layer_norm_stages()
    return {
        "causal": {
            "S": c["scores"], "s'_{32}": c["scaled"][2][1], "\\tilde{S}": c["masked"],
            "A": c["weights"], "a_{31}": c["weights"][2][0], "z^{(2)}": c["output"][1],
            "Z": c["output"],
        },
        "layer_norm": {"\\hat{x}": n["L"], "PE": n["P"], "\\mathbf{p}^{(1)}": n["P"][1]},
    }


def mistakes():
    """The mistaken weights the submissions reproduce."""
    c = causal_stages()
    s, sp = c["scores"], c["scaled"]
    full = row_softmax(sp, lambda i, j: True)
    cols = [[mpf(0)] * 3 for _ in range(3)]
    for j in range(3):
        e = [exp(sp[i][j]) if causal(i, j) else mpf(0) for i in range(3)]
        for i in range(3):
            cols[i][j] = e[i] / sum(e)
    rounded = [[mpf(round(float(x), 2)) for x in row] for row in sp]
    return {
        "unscaled": row_softmax(s, causal),
        "zeroed_not_renormalized": [[full[i][j] if causal(i, j) else 0 for j in range(3)]
                                    for i in range(3)],
        "softmax_columns": cols,
        "sum_normalized": [[s[i][j] / sum(s[i][: i + 1]) if causal(i, j) else 0
                            for j in range(3)] for i in range(3)],
        "rounded_2_decimals": row_softmax(rounded, causal),
    }


if __name__ == "__main__":
    for course, qs in true_values().items():
        print(course)
        for name, value in qs.items():
            print(" ", name, mp.nstr(value, 8) if not isinstance(value, list) else value)
    for name, w in mistakes().items():
        print(name, [[mp.nstr(x, 6) for x in row] for row in w])
