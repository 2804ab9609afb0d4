"""The test functions of bench/search_bench.py, shared by the black-box
trial (trial.py), the ask-and-tell runs and the in-process Optuna runs, so
all see the very same function. Each problem: its parameters (id -> spec),
its known minimum, and f(values) where values maps parameter ids to
numbers or category names.

Three smooth or mildly multimodal problems (Branin, Hartmann-6, mixed), the
standard multimodal ones in 2, 4 and 6 dimensions (Levy, Rastrigin, Ackley,
Styblinski-Tang, on their usual domains), and `bowl3`, held out: the search
was tuned on the others and only then measured on it."""
import math

BRANIN_MIN = 0.397887357729739
HARTMANN6_MIN = -3.32236801141551

_A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
      [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
_P = [[0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886],
      [0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991],
      [0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650],
      [0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381]]
_ALPHA = [1.0, 1.2, 3.0, 3.2]


def branin(v):
    x, y = v["x1"], v["x2"]
    b, c, t = 5.1 / (4 * math.pi ** 2), 5 / math.pi, 1 / (8 * math.pi)
    return (y - b * x * x + c * x - 6) ** 2 + 10 * (1 - t) * math.cos(x) + 10


def hartmann6(v):
    s = 0.0
    for i in range(4):
        e = sum(_A[i][j] * (v["x%d" % (j + 1)] - _P[i][j]) ** 2
                for j in range(6))
        s += _ALPHA[i] * math.exp(-e)
    return -s


# A small "training run": a log-scale learning rate whose best value depends
# on the optimizer (a categorical), an integer depth, and an offset per
# optimizer; minimum 0 at lr=1e-3, layers=5, adam.
_BEST_LR = {"adam": 1e-3, "sgd": 3e-2, "rmsprop": 1e-2}
_OFFSET = {"adam": 0.0, "sgd": 0.3, "rmsprop": 0.6}


def mixed(v):
    opt = v["optimizer"]
    l = math.log10(v["lr"] / _BEST_LR[opt])
    return l * l + 0.05 * (v["layers"] - 5) ** 2 + _OFFSET[opt]


def _xs(v):
    return [v["x%d" % (j + 1)] for j in range(len(v))]


def levy(v):
    w = [1 + (x - 1) / 4 for x in _xs(v)]
    s = math.sin(math.pi * w[0]) ** 2
    for wi in w[:-1]:
        s += (wi - 1) ** 2 * (1 + 10 * math.sin(math.pi * wi + 1) ** 2)
    return s + (w[-1] - 1) ** 2 * (1 + math.sin(2 * math.pi * w[-1]) ** 2)


def rastrigin(v):
    xs = _xs(v)
    return 10 * len(xs) + sum(x * x - 10 * math.cos(2 * math.pi * x)
                              for x in xs)


def ackley(v):
    xs = _xs(v)
    n = len(xs)
    return (-20 * math.exp(-0.2 * math.sqrt(sum(x * x for x in xs) / n))
            - math.exp(sum(math.cos(2 * math.pi * x) for x in xs) / n)
            + 20 + math.e)


def styblinski_tang(v):
    return 0.5 * sum(x ** 4 - 16 * x * x + 5 * x for x in _xs(v))


STYBLINSKI_TANG_MIN = -39.16616570377142  # per dimension, at x = -2.903534

# The held-out problem: a bowl on [0, 1]^3 (3 |x - c|^2) covered with shallow
# local minima, ripples of period 1/4 along the four diagonals of the cube
# (so not separable); minimum 0 at c.
_BOWL_C = (0.63, 0.28, 0.71)
_BOWL_U = [(1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1)]


def bowl3(v):
    d = [x - c for x, c in zip(_xs(v), _BOWL_C)]
    s = 3 * sum(t * t for t in d)
    for u in _BOWL_U:
        t = sum(a * b for a, b in zip(u, d)) / math.sqrt(3)
        s += 0.1 * (1 - math.cos(2 * math.pi * 4 * t))
    return s


def _box(d, low, high):
    return {"x%d" % j: ("float", low, high, False) for j in range(1, d + 1)}


# (kind, low, high, log) or ("categorical", values)
PROBLEMS = {
    "branin": {"f": branin, "min": BRANIN_MIN,
               "params": {"x1": ("float", -5, 10, False),
                          "x2": ("float", 0, 15, False)}},
    "hartmann6": {"f": hartmann6, "min": HARTMANN6_MIN,
                  "params": {"x%d" % j: ("float", 0, 1, False)
                             for j in range(1, 7)}},
    "mixed": {"f": mixed, "min": 0.0,
              "params": {"lr": ("float", 1e-5, 1, True),
                         "layers": ("int", 1, 12, False),
                         "optimizer": ("categorical",
                                       ["adam", "sgd", "rmsprop"])}},
}
for _d in (2, 4, 6):
    PROBLEMS["levy%d" % _d] = {"f": levy, "min": 0.0,
                               "params": _box(_d, -10, 10)}
    PROBLEMS["rastrigin%d" % _d] = {"f": rastrigin, "min": 0.0,
                                    "params": _box(_d, -5.12, 5.12)}
    PROBLEMS["ackley%d" % _d] = {"f": ackley, "min": 0.0,
                                 "params": _box(_d, -32.768, 32.768)}
    PROBLEMS["styblinski%d" % _d] = {"f": styblinski_tang,
                                     "min": STYBLINSKI_TANG_MIN * _d,
                                     "params": _box(_d, -5, 5)}
PROBLEMS["bowl3"] = {"f": bowl3, "min": 0.0, "params": _box(3, 0, 1),
                     "held_out": True}


def parse_args(problem, args):
    """The values of Vertex-style --id=value arguments."""
    values = {}
    for arg in args:
        key, _, text = arg[2:].partition("=")
        kind = problem["params"][key][0]
        values[key] = text if kind == "categorical" else float(text)
    return values
