"""The test functions of bench/search_bench.py, shared by the black-box
trial (trial.py) and the in-process Optuna runs, so both see the very same
function. Each problem: its parameters (id -> spec), its known minimum, and
f(values) where values maps parameter ids to numbers or category names."""
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
