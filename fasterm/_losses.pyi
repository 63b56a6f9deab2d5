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
