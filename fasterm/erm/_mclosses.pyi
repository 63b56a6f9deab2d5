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
