from collections.abc import Callable

import numpy as np
import numpy.typing as npt

# Compiled hit-and-run behind fasterm.expmech (src/cpp/fasterm/hitrun.hpp).
# Values are validated by fasterm.expmech; these check buffer sizes only.

LOGISTIC: int
HINGE: int
SQUARED: int
ABSOLUTE: int
LINEAR: int
BALL: int
BOX: int
SIMPLEX: int
AUTO: int
DIRECT: int
ARS: int
SPHERE: int
MIXED: int

def run_chain(
    bit_generator: np.random.BitGenerator,
    kind: int,
    X: npt.NDArray[np.floating],
    y: npt.NDArray[np.float64] | None,
    scale: npt.NDArray[np.float64] | None,
    g: npt.NDArray[np.float64] | None,
    kappa: float,
    lam: float,
    method: int,
    set_kind: int,
    center: npt.NDArray[np.float64] | None,
    radius: float,
    low: npt.NDArray[np.float64] | None,
    high: npt.NDArray[np.float64] | None,
    total: float,
    directions: int,
    margin_bound: float,
    w: npt.NDArray[np.float64],
    z: npt.NDArray[np.float64] | None,
    steps: int,
    trace: npt.NDArray[np.float64] | None = None,
    thin: int = 1,
    fresh_margins: bool = True,
    progress: Callable[[int], object] | None = None,
) -> int: ...
def line_sample(
    bit_generator: np.random.BitGenerator,
    kind: int,
    z: npt.NDArray[np.float64],
    c: npt.NDArray[np.float64],
    y: npt.NDArray[np.float64] | None,
    kappa: float,
    lam: float,
    wu: float,
    uu: float,
    a: float,
    b: float,
    out: npt.NDArray[np.float64],
    method: int = 0,
    margin_bound: float = ...,
) -> int: ...
def _log1p_unit(e: npt.NDArray[np.float64], out: npt.NDArray[np.float64]) -> None: ...
