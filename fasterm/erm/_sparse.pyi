from collections.abc import Callable

import numpy as np
import numpy.typing as npt

def grad_sum(
    kind: int,
    data: npt.NDArray[np.floating],
    indices: npt.NDArray[np.int32 | np.int64],
    indptr: npt.NDArray[np.int32 | np.int64],
    d: int,
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
def row_norms(
    data: npt.NDArray[np.floating],
    indices: npt.NDArray[np.int32 | np.int64],
    indptr: npt.NDArray[np.int32 | np.int64],
    d: int,
    out: npt.NDArray[np.float64],
    n_threads: int = 1,
) -> None: ...
def pgd_loop(
    kind: int,
    data: npt.NDArray[np.floating],
    indices: npt.NDArray[np.int32 | np.int64],
    indptr: npt.NDArray[np.int32 | np.int64],
    d: int,
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
