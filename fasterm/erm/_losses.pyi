from collections.abc import Callable

import numpy as np
import numpy.typing as npt

LOGISTIC: int
HINGE: int
SQUARED: int
ABSOLUTE: int
LINEAR: int

def grad_sum(
    kind: int,
    X: npt.NDArray[np.floating],
    y: npt.NDArray[np.floating] | None,
    w: npt.NDArray[np.floating],
    norms: npt.NDArray[np.float64] | None,
    data_norm: float,
    clip: float,
    label_bound: float,
    out: npt.NDArray[np.floating],
    n_threads: int = 1,
    weights: npt.NDArray[np.float64] | None = None,
) -> None: ...
def grad_sum_rows(
    kind: int,
    X: npt.NDArray[np.floating],
    y: npt.NDArray[np.floating] | None,
    w: npt.NDArray[np.floating],
    norms: npt.NDArray[np.float64] | None,
    data_norm: float,
    clip: float,
    label_bound: float,
    rows: npt.NDArray[np.int64],
    out: npt.NDArray[np.floating],
    n_threads: int = 1,
    weights: npt.NDArray[np.float64] | None = None,
) -> None: ...
def value_sum(
    kind: int,
    X: npt.NDArray[np.floating],
    y: npt.NDArray[np.floating] | None,
    w: npt.NDArray[np.floating],
    norms: npt.NDArray[np.float64] | None,
    data_norm: float,
    label_bound: float,
    n_threads: int = 1,
) -> tuple[float, int]: ...
def grad_matrix(
    kind: int,
    X: npt.NDArray[np.floating],
    y: npt.NDArray[np.floating] | None,
    w: npt.NDArray[np.floating],
    norms: npt.NDArray[np.float64] | None,
    data_norm: float,
    clip: float,
    label_bound: float,
    out: npt.NDArray[np.floating],
    n_threads: int = 1,
) -> None: ...
def row_norms(X: npt.NDArray[np.floating], out: npt.NDArray[np.float64], n_threads: int = 1) -> None: ...
def check_probed_row_norms(X: npt.NDArray[np.floating], norms: npt.NDArray[np.float64],
                           probes: npt.NDArray[np.intp], rtol: float) -> bool: ...

# pgd_loop: the whole (noisy) GD/PGD loop in compiled code (fasterm.erm._engine; src/cpp/fasterm/loops.hpp).
NOISE_NONE: int
NOISE_LAPLACE: int
NOISE_GAUSSIAN: int
SET_L2_BALL: int
SET_BOX: int
SET_SIMPLEX: int
SET_L1_BALL: int

def pgd_loop(
    kind: int,
    X: npt.NDArray[np.floating],
    y: npt.NDArray[np.floating] | None,
    norms: npt.NDArray[np.float64] | None,
    data_norm: float,
    clip: float,
    label_bound: float,
    w: npt.NDArray[np.floating],
    steps: int,
    lr: float,
    reg: float,
    noise: int,
    scale: float,
    bit_generator: np.random.BitGenerator | None,
    set_kind: int,
    set_param: float,
    set_a: npt.NDArray[np.floating] | None,
    set_b: npt.NDArray[np.floating] | None,
    acc: npt.NDArray[np.float64] | None,
    n_threads: int = 1,
    weights: npt.NDArray[np.float64] | None = None,
    progress: Callable[[int], object] | None = None,
    betas: npt.NDArray[np.float64] | None = None,
    lrs: npt.NDArray[np.float64] | None = None,
    acc_from: int = 0,
) -> None: ...

# sgd_loop: the whole noisy Poisson-minibatch SGD run in compiled code (fasterm.erm.solvers).
def poisson_rows(
    bit_generator: np.random.BitGenerator, n: int, q: float, draws: int
) -> list[npt.NDArray[np.int64]]: ...
def sgd_loop(
    kind: int,
    X: npt.NDArray[np.floating],
    y: npt.NDArray[np.floating] | None,
    norms: npt.NDArray[np.float64] | None,
    data_norm: float,
    clip: float,
    label_bound: float,
    w: npt.NDArray[np.floating],
    steps: int,
    q: float,
    inv_m: float,
    lr: float,
    reg: float,
    scale: float,
    bit_generator: np.random.BitGenerator,
    set_kind: int,
    set_param: float,
    set_a: npt.NDArray[np.floating] | None,
    set_b: npt.NDArray[np.floating] | None,
    acc: npt.NDArray[np.float64] | None,
    n_threads: int = 1,
    weights: npt.NDArray[np.float64] | None = None,
    row_bound: float = 0.0,
    intercept_scaling: float = 0.0,
    rows_within_bound: bool = False,
    progress: Callable[[int], object] | None = None,
) -> None: ...
