import numpy as np
import numpy.typing as npt

# Each function projects a 1-D vector, or each row of a C-contiguous 2-D
# batch, writing into ``out`` (same shape and dtype, float32 or float64; may
# be ``v`` itself).  Values are validated by fasterm.constraints.

def simplex(v: npt.NDArray[np.floating], out: npt.NDArray[np.floating], total: float) -> None: ...
def l1_ball(v: npt.NDArray[np.floating], out: npt.NDArray[np.floating], radius: float) -> None: ...
def l2_ball(
    v: npt.NDArray[np.floating],
    out: npt.NDArray[np.floating],
    center: npt.NDArray[np.floating] | None,
    radius: float,
) -> None: ...
def box(
    v: npt.NDArray[np.floating],
    out: npt.NDArray[np.floating],
    low: float | npt.NDArray[np.floating],
    high: float | npt.NDArray[np.floating],
) -> None: ...
