from collections.abc import Callable

import numpy as np
import numpy.typing as npt

LOGISTIC: int
HINGE: int

def grad_sum(
    kind: int,
    X: npt.NDArray[np.floating],
    y: npt.NDArray[np.int64],
    W: npt.NDArray[np.floating],
    norms: npt.NDArray[np.float64] | None,
    data_norm: float,
    intercept: float,
    clip: float,
    out: npt.NDArray[np.floating],
    weights: npt.NDArray[np.float64] | None = None,
    rows: npt.NDArray[np.int64] | None = None,
) -> None: ...
def csr_grad_sum(
    kind: int,
    data: npt.NDArray[np.floating],
    indices: npt.NDArray[np.int32 | np.int64],
    indptr: npt.NDArray[np.int32 | np.int64],
    d: int,
    y: npt.NDArray[np.int64],
    W: npt.NDArray[np.floating],
    norms: npt.NDArray[np.float64] | None,
    data_norm: float,
    intercept: float,
    clip: float,
    out: npt.NDArray[np.floating],
    weights: npt.NDArray[np.float64] | None = None,
    rows: npt.NDArray[np.int64] | None = None,
) -> None: ...

NOISE_NONE: int
NOISE_LAPLACE: int
NOISE_GAUSSIAN: int

def sgd_loop(
    kind: int,
    w: npt.NDArray[np.floating],
    K: int,
    X: npt.NDArray[np.floating] | None,
    data: npt.NDArray[np.floating] | None,
    indices: npt.NDArray[np.int64] | None,
    indptr: npt.NDArray[np.int64] | None,
    d: int,
    y: npt.NDArray[np.int64],
    norms: npt.NDArray[np.float64] | None,
    data_norm: float,
    intercept: float,
    clip: float,
    steps: int,
    start: int,
    q: float,
    inv_m: float,
    lr: float,
    reg: float,
    scale: float,
    bit_generator: np.random.BitGenerator,
    radius: float,
    tail: npt.NDArray[np.float64] | None,
    weights: npt.NDArray[np.float64] | None = None,
    progress: Callable[[int], object] | None = None,
) -> None: ...
def gd_loop(
    kind: int,
    w: npt.NDArray[np.floating],
    K: int,
    X: npt.NDArray[np.floating] | None,
    data: npt.NDArray[np.floating] | None,
    indices: npt.NDArray[np.int64] | None,
    indptr: npt.NDArray[np.int64] | None,
    d: int,
    y: npt.NDArray[np.int64],
    norms: npt.NDArray[np.float64] | None,
    data_norm: float,
    intercept: float,
    clip: float,
    steps: int,
    lr: float,
    reg: float,
    noise: int,
    scale: float,
    bit_generator: np.random.BitGenerator,
    radius: float,
    betas: npt.NDArray[np.float64] | None,
    avg: npt.NDArray[np.float64] | None,
    weights: npt.NDArray[np.float64] | None = None,
    progress: Callable[[int], object] | None = None,
) -> None: ...
