import numpy as np
import numpy.typing as npt

# Compiled samplers behind fasterm.mechanisms.exponential and
# fasterm.univariate.  Each fills ``out`` with len(out) independent draws from
# one precomputed table, drawing from ``bit_generator`` (a Generator's).
# Values are validated by the public functions.

def exponential_sample(
    bit_generator: np.random.BitGenerator,
    scores: npt.NDArray[np.floating],
    s_min: float,
    k: float,
    out: npt.NDArray[np.int64],
) -> None: ...
def median_erm_sample(
    bit_generator: np.random.BitGenerator,
    x_sorted: npt.NDArray[np.floating],
    a: float,
    b: float,
    epsilon: float,
    out: npt.NDArray[np.float64],
) -> None: ...
def quantile_rank_sample(
    bit_generator: np.random.BitGenerator,
    x_sorted: npt.NDArray[np.floating],
    a: float,
    b: float,
    epsilon: float,
    q: float,
    out: npt.NDArray[np.float64],
) -> None: ...
def truncnorm_sample(
    bit_generator: np.random.BitGenerator,
    mu: float,
    sigma: float,
    a: float,
    b: float,
    out: npt.NDArray[np.float64],
) -> None: ...
def is_sorted(x: npt.NDArray[np.floating]) -> bool: ...
def _exp_nonpos(
    x: npt.NDArray[np.float64], e: npt.NDArray[np.float64], em1: npt.NDArray[np.float64]
) -> None: ...
