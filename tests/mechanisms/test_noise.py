"""Compiled noise samplers: exact twins on the same bit stream, distribution tests, errors."""

import math

import numpy as np
import pytest
from scipy import stats

import fasterm as fe
from fasterm import noise

# ---------------------------------------------------------------------------
# A slow, line-by-line Python twin of the Laplace ziggurat in
# src/cpp/fasterm/ziggurat.hpp, fed by the same PCG64 words.
# ---------------------------------------------------------------------------
R = 7.69711747013104972
V = 3.949659822581572e-3


def _tables():
    x = [0.0] * 257
    x[0] = V / math.exp(-R)
    x[1] = R
    for i in range(1, 255):
        x[i + 1] = -math.log(math.exp(-x[i]) + V / x[i])
    f = [math.exp(-xi) for xi in x]
    f[0] = math.exp(-R)
    f[256] = 1.0
    return x, f


class _Words:
    """next_uint64 / next_uint32 / next_double of numpy's PCG64, in Python."""

    def __init__(self, bit_generator):
        self.bg = np.random.PCG64()
        self.bg.state = bit_generator.state
        self.half = None

    def u64(self):
        return int(self.bg.random_raw())

    def u32(self):
        if self.half is not None:
            h, self.half = self.half, None
            return h
        w = self.u64()
        self.half = w >> 32
        return w & 0xFFFFFFFF

    def double(self):
        return (self.u64() >> 11) * 2.0**-53


def _laplace_twin(words, n, bits):
    x, f = _tables()
    pos_bits = 55 if bits == 64 else 23
    out = []
    while len(out) < n:
        word = words.u64() if bits == 64 else words.u32()
        sign = -1.0 if word & 1 else 1.0
        layer = (word >> 1) & 0xFF
        pos = word >> 9
        width = x[layer] / 2.0**pos_bits
        val = pos * width
        if bits == 32:
            # the float32 kernel rounds the magnitude to float32 before the sign
            val_out = float(np.float32(val))
        else:
            val_out = val
        if pos < int((x[layer + 1] / x[layer]) * 2.0**pos_bits):
            out.append(sign * val_out)
            continue
        if layer == 0:
            out.append(sign * float(np.float32(R - math.log1p(-words.double())) if bits == 32 else R - math.log1p(-words.double())))
            continue
        height = f[layer] + words.double() * (f[layer + 1] - f[layer])
        if height < math.exp(-val):
            out.append(sign * val_out)
    return np.array(out)


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_laplace_float64_equals_python_twin(seed):
    rng = np.random.default_rng(seed)
    twin = _laplace_twin(_Words(rng.bit_generator), 3000, 64)
    got = noise.laplace(3000, 1.0, random_state=rng)
    np.testing.assert_array_equal(got, twin)


@pytest.mark.parametrize("seed", [0, 7])
def test_laplace_float32_equals_python_twin(seed):
    rng = np.random.default_rng(seed)
    twin = _laplace_twin(_Words(rng.bit_generator), 3000, 32)
    got = noise.laplace(3000, 1.0, random_state=rng, dtype=np.float32)
    np.testing.assert_array_equal(got.astype(np.float64), twin)


def test_twin_exercises_slow_paths():
    # The equality tests above only mean something if the rare branches ran:
    # count them in a stream long enough to contain tails and wedges.
    x, _ = _tables()
    words = _Words(np.random.default_rng(3).bit_generator)
    tail = wedge = 0
    for _ in range(200_000):
        w = words.u64()
        layer = (w >> 1) & 0xFF
        pos = w >> 9
        if pos >= int((x[layer + 1] / x[layer]) * 2.0**55):
            tail += layer == 0
            wedge += layer != 0
    assert tail > 5 and wedge > 100


# ---------------------------------------------------------------------------
# Distribution tests against scipy (independent of our algorithm).
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 37.5])
def test_laplace_ks(dtype, scale):
    x = noise.laplace(100_000, scale, random_state=2024, dtype=dtype)
    assert x.dtype == dtype
    res = stats.kstest(x.astype(np.float64), stats.laplace(scale=scale).cdf)
    assert res.pvalue > 1e-3


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 37.5])
def test_gaussian_ks(dtype, scale):
    x = noise.gaussian(100_000, scale, random_state=99, dtype=dtype)
    assert x.dtype == dtype
    res = stats.kstest(x.astype(np.float64), stats.norm(scale=scale).cdf)
    assert res.pvalue > 1e-3


def test_ks_has_power():
    # The same KS test rejects a 5% error in scale and a Gaussian posing as Laplace.
    x = noise.laplace(100_000, 1.0, random_state=5)
    assert stats.kstest(x, stats.laplace(scale=1.05).cdf).pvalue < 1e-6
    g = noise.gaussian(100_000, math.sqrt(2.0), random_state=5)  # same variance as Lap(1)
    assert stats.kstest(g, stats.laplace(scale=1.0).cdf).pvalue < 1e-3


def test_laplace_tail_is_exponential():
    # Beyond the ziggurat's base layer (|x| > R) the sampler switches to its tail
    # branch: |x| - R must be Exp(1), and the tail mass must be exp(-R).
    x = np.abs(noise.laplace(4_000_000, 1.0, random_state=11))
    tail = x[x > R] - R
    expected = 4_000_000 * math.exp(-R)
    assert abs(tail.size - expected) < 5 * math.sqrt(expected)
    assert stats.kstest(tail, "expon").pvalue > 1e-3


def test_laplace_sign_balanced_and_symmetric():
    x = noise.laplace(1_000_000, 2.0, random_state=8)
    pos = np.count_nonzero(x > 0)
    assert abs(pos - 500_000) < 5 * 500.0  # 5 sigma of Binomial(1e6, 1/2)
    assert stats.ks_2samp(x[x > 0], -x[x < 0]).pvalue > 1e-3


# ---------------------------------------------------------------------------
# Reproducibility and stream semantics.
# ---------------------------------------------------------------------------
def test_gaussian_equals_numpy_normal_bit_for_bit():
    a = noise.gaussian(10_001, 2.5, random_state=5)
    b = np.random.default_rng(5).normal(0.0, 2.5, 10_001)
    np.testing.assert_array_equal(a, b)


def test_gaussian_float32_equals_numpy_standard_normal_float32():
    a = noise.gaussian(5000, 3.0, random_state=6, dtype=np.float32)
    b = np.random.default_rng(6).standard_normal(5000, dtype=np.float32) * np.float32(3.0)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("sampler", [noise.laplace, noise.gaussian])
def test_seed_reproduces_and_generator_advances(sampler):
    np.testing.assert_array_equal(sampler(100, 1.0, random_state=3), sampler(100, 1.0, random_state=3))
    assert not np.array_equal(sampler(100, 1.0, random_state=3), sampler(100, 1.0, random_state=4))
    g = np.random.default_rng(3)
    first, second = sampler(100, 1.0, random_state=g), sampler(100, 1.0, random_state=g)
    assert not np.array_equal(first, second)
    # Drawing 200 at once from a fresh Generator gives the same stream as 100 + 100.
    whole = sampler(200, 1.0, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(whole, np.concatenate([first, second]))


@pytest.mark.parametrize("sampler", [noise.laplace, noise.gaussian])
def test_shapes_out_and_zero_scale(sampler):
    assert sampler((3, 4), 1.0, random_state=0).shape == (3, 4)
    assert sampler(0, 1.0, random_state=0).shape == (0,)
    buf = np.full((5, 2), np.nan, dtype=np.float32)
    res = sampler(scale=1.0, out=buf, random_state=0)
    assert res is buf and np.isfinite(buf).all()
    np.testing.assert_array_equal(sampler(10, 0.0, random_state=1), np.zeros(10))


@pytest.mark.parametrize("sampler", [noise.laplace, noise.gaussian])
def test_bad_parameters(sampler):
    with pytest.raises(ValueError, match="scale"):
        sampler(10, -1.0)
    with pytest.raises(ValueError, match="scale"):
        sampler(10, float("nan"))
    with pytest.raises(ValueError, match="scale"):
        sampler(10, float("inf"))
    with pytest.raises(TypeError, match="scale"):
        sampler(10, "1")
    with pytest.raises(TypeError, match="dtype"):
        sampler(10, 1.0, dtype=np.int64)
    with pytest.raises(TypeError, match="out"):
        sampler(scale=1.0, out=np.zeros(4, dtype=np.int32))
    with pytest.raises(ValueError, match="out"):
        sampler(scale=1.0, out=np.zeros((4, 4))[:, 0])
    with pytest.raises(ValueError, match="size"):
        sampler(-3, 1.0)
    with pytest.raises(ValueError, match="size"):
        sampler(None, 1.0)
    with pytest.raises(TypeError, match="random_state"):
        sampler(3, 1.0, random_state="seed")
    with pytest.raises(TypeError, match="random_state"):
        sampler(3, 1.0, random_state=np.random.RandomState(0))


def test_version_exposed():
    assert isinstance(fe.__version__, str) and fe.__version__
