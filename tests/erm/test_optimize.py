"""pgd and noisy_pgd: Theorem 1/2 bounds, privacy bookkeeping, noise path, errors."""

import math
import platform

import numpy as np
import pytest
from scipy import optimize as sopt

import fasterm as fe
from fasterm import accounting as A




def _logistic_value(w, X, y):
    return float(np.mean(np.logaddexp(0.0, -y * (X @ w))))


def _logistic_min(X, y, R):
    """Non-private minimiser on the ball of radius R by scipy (ball inactive here)."""
    f = lambda w: _logistic_value(w, X, y)  # noqa: E731
    g = lambda w: -(X.T @ (y / (1 + np.exp(y * (X @ w))))) / len(y)  # noqa: E731
    res = sopt.minimize(f, np.zeros(X.shape[1]), jac=g, method="BFGS", options={"gtol": 1e-10})
    assert np.linalg.norm(res.x) < R, "test setup: the unconstrained minimiser must lie in C"
    return res.fun


@pytest.fixture(scope="module")
def problem(logistic_data):
    X, y = logistic_data(4000, 5, seed=1)
    R = 5.0
    return X, y, R, _logistic_min(X, y, R)


# ---------------------------------------------------------------------------
# Theorem 1: non-private PGD
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("T", [10, 100, 1000])
def test_pgd_meets_theorem1(problem, T):
    X, y, R, L_star = problem
    C = fe.L2Ball(R, X.shape[1])
    res = fe.pgd(fe.losses.Logistic(), X, y, C, steps=T)
    G = np.linalg.norm(X, axis=1).max()
    assert res.lr == pytest.approx(2 * R / (G * math.sqrt(T)))
    excess = _logistic_value(res.w, X, y) - L_star
    assert -1e-9 <= excess <= 2 * R * G / math.sqrt(T)
    assert res.utility_bound == pytest.approx(2 * R * G / math.sqrt(T))
    assert C.contains(res.w)


def test_pgd_converges_and_last_iterate(problem):
    X, y, R, L_star = problem
    C = fe.L2Ball(R, X.shape[1])
    res = fe.pgd(fe.losses.Logistic(), X, y, C, steps=3000, lr=2.0, average=False)
    assert _logistic_value(res.w, X, y) - L_star < 1e-6


@pytest.mark.parametrize("loss", [fe.losses.Hinge(), fe.losses.Absolute()])
def test_pgd_nonsmooth_losses_meet_theorem1(loss, logistic_data):
    X, y = logistic_data(2000, 3, seed=4)
    C = fe.L2Ball(2.0, 3)
    long = fe.pgd(loss, X, y, C, steps=20000, lr=0.01, average=True)
    L_star = loss.value(long.w, X, y)
    for T in [10, 100]:
        res = fe.pgd(loss, X, y, C, steps=T)
        assert loss.value(res.w, X, y) - L_star <= res.utility_bound + 1e-6


# ---------------------------------------------------------------------------
# Theorem 2: noisy PGD, mean over seeds
# ---------------------------------------------------------------------------
OPTIONS = [("laplace", "pure"), ("laplace", "coordinate"), ("laplace", "l2"), ("gaussian", "l2")]


@pytest.mark.parametrize("noise,cal", OPTIONS)
@pytest.mark.parametrize("eps", [0.5, 4.0])
def test_noisy_pgd_mean_excess_within_theorem2(problem, noise, cal, eps):
    X, y, R, L_star = problem
    C = fe.L2Ball(R, X.shape[1])
    loss = fe.losses.Logistic()
    excess, bounds = [], []
    for seed in range(12):
        res = fe.noisy_pgd(loss, X, y, C, eps, delta=1e-6, noise=noise, calibration=cal,
                           data_norm=1.0, random_state=seed)
        excess.append(_logistic_value(res.w, X, y) - L_star)
        bounds.append(res.utility_bound)
    assert len(set(bounds)) == 1
    assert np.mean(excess) <= bounds[0]


@pytest.mark.parametrize("noise,cal", OPTIONS)
def test_reported_privacy_and_scale(noise, cal, logistic_data):
    X, y = logistic_data(1000, 8, seed=2)
    C = fe.L2Ball(3.0, 8)
    eps, delta, T = 0.7, 1e-5, 37
    res = fe.noisy_pgd(fe.losses.Logistic(), X, y, C, eps, delta=delta, steps=T, noise=noise,
                       calibration=cal, data_norm=2.0, random_state=0)
    sens = 2 * 2.0 / 1000  # Δ₂ = 2G/n, G = data_norm for logistic
    assert res.sensitivity == pytest.approx(sens)
    assert res.steps == T
    if noise == "gaussian":
        assert res.noise_scale == pytest.approx(A.calibrate_gaussian(sens, T, eps, delta), rel=1e-12)
        mu = math.sqrt(T) * sens / res.noise_scale
        assert A.gaussian_delta(mu, res.epsilon) == pytest.approx(delta, rel=1e-9)
    elif cal == "pure":
        assert res.noise_scale == pytest.approx(T * math.sqrt(8) * sens / eps)
        assert res.delta == 0.0
    elif cal == "coordinate":
        b, eps0 = A.calibrate_laplace_coordinate(sens, 8, T, eps, delta)
        assert res.noise_scale == pytest.approx(b)
    else:
        assert res.noise_scale == pytest.approx(A.calibrate_laplace_l2(sens, 8, T, eps, delta))
    assert res.epsilon == pytest.approx(eps, rel=1e-9) and res.epsilon <= eps * (1 + 1e-9)
    assert res.delta <= delta


@pytest.mark.parametrize("noise,cal", [("laplace", "l2"), ("gaussian", "l2")])
def test_noise_path_has_calibrated_variance(noise, cal):
    # Zero data: the gradient is 0, the ball is huge, so w_T = -lr * sum_t h_t.
    n, d, T = 50, 4, 20
    X, y = np.zeros((n, d)), np.ones(n)
    C = fe.L2Ball(1e9, d)
    finals = []
    for seed in range(400):
        res = fe.noisy_pgd(fe.losses.Logistic(), X, y, C, 1.0, delta=1e-5, steps=T, noise=noise,
                           calibration=cal, data_norm=1.0, random_state=seed, lr=1.0, average=False)
        finals.append(res.w)
    finals = np.array(finals)
    per_coord_var = res.noise_scale**2 * (2.0 if noise == "laplace" else 1.0)
    # T steps of lr=1: variance T * var(h); 1600 samples -> ~3.5% standard error
    assert np.var(finals) == pytest.approx(T * per_coord_var, rel=0.15)


def test_defaults_depend_only_on_public_quantities(logistic_data):
    X1, y1 = logistic_data(3000, 6, seed=10)
    X2, y2 = logistic_data(3000, 6, seed=11)
    X2 *= 0.1  # very different data, same public bounds
    C = fe.L2Ball(2.0, 6)
    r1 = fe.noisy_pgd(fe.losses.Logistic(), X1, y1, C, 1.0, delta=1e-6, data_norm=1.0, random_state=0)
    r2 = fe.noisy_pgd(fe.losses.Logistic(), X2, y2, C, 1.0, delta=1e-6, data_norm=1.0, random_state=0)
    assert (r1.steps, r1.lr, r1.noise_scale) == (r2.steps, r2.lr, r2.noise_scale)


def test_rows_beyond_data_norm_are_clipped_not_rejected(logistic_data):
    X, y = logistic_data(500, 4, seed=3)
    X_big = X.copy()
    X_big[:50] *= 10.0  # rows far outside the declared bound
    clipped = X_big / np.maximum(1.0, np.linalg.norm(X_big, axis=1, keepdims=True))
    C = fe.L2Ball(2.0, 4)
    a = fe.noisy_pgd(fe.losses.Logistic(), X_big, y, C, 1.0, delta=1e-6, steps=30, data_norm=1.0, random_state=5)
    b = fe.noisy_pgd(fe.losses.Logistic(), clipped, y, C, 1.0, delta=1e-6, steps=30, data_norm=1.0, random_state=5)
    np.testing.assert_allclose(a.w, b.w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(X_big[:50] / 10.0, X[:50], rtol=1e-15)  # input untouched


def test_seed_reproduces_and_float32_agrees(logistic_data):
    X, y = logistic_data(2000, 5, seed=6)
    C = fe.L2Ball(2.0, 5)
    kw = dict(delta=1e-6, steps=50, noise="gaussian", data_norm=1.0)
    a = fe.noisy_pgd(fe.losses.Logistic(), X, y, C, 2.0, random_state=9, **kw)
    b = fe.noisy_pgd(fe.losses.Logistic(), X, y, C, 2.0, random_state=9, **kw)
    np.testing.assert_array_equal(a.w, b.w)
    c = fe.noisy_pgd(fe.losses.Logistic(), X.astype(np.float32), y.astype(np.float32), C, 2.0,
                     random_state=9, **kw)
    assert c.w.dtype == np.float32
    # Same Gaussian stream (float32 ziggurat differs), so compare losses, not iterates.
    assert abs(_logistic_value(c.w.astype(float), X, y) - _logistic_value(a.w, X, y)) < 0.05


def test_regression_with_label_bound():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 3)) / 2
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    y = X @ np.array([0.5, -0.3, 0.2]) + 0.05 * rng.standard_normal(3000)
    C = fe.L2Ball(1.0, 3)
    res = fe.noisy_pgd(fe.losses.Squared(), X, y, C, 2.0, delta=1e-6, noise="gaussian",
                       data_norm=1.0, label_bound=1.0, random_state=0)
    assert res.lipschitz == pytest.approx(2 * (1.0 + 1.0) * 1.0)
    assert res.utility_bound is not None and math.isfinite(res.utility_bound)


@pytest.mark.parametrize(
    "kwargs,param,exc",
    [
        (dict(epsilon=0.0), "epsilon", ValueError),
        (dict(epsilon=-1.0), "epsilon", ValueError),
        (dict(epsilon=float("nan")), "epsilon", ValueError),
        (dict(delta=1.0), "delta", ValueError),
        (dict(delta=-0.1), "delta", ValueError),
        (dict(noise="cauchy"), "noise", ValueError),
        (dict(calibration="rdp"), "calibration", ValueError),
        (dict(data_norm=None), "data_norm", ValueError),
        (dict(data_norm=0.0), "data_norm", ValueError),
        (dict(clip=-1.0), "clip", ValueError),
        (dict(steps=0), "steps", ValueError),
        (dict(steps=2.5), "steps", TypeError),
        (dict(delta=0.0, noise="gaussian"), "delta", ValueError),
        (dict(delta=0.0, calibration="coordinate"), "delta", ValueError),
        (dict(random_state="x"), "random_state", TypeError),
    ],
)
def test_bad_parameters(kwargs, param, exc, logistic_data):
    X, y = logistic_data(100, 3, seed=0)
    args = dict(epsilon=1.0, delta=1e-6, data_norm=1.0)
    args.update(kwargs)
    with pytest.raises(exc, match=param):
        fe.noisy_pgd(fe.losses.Logistic(), X, y, fe.L2Ball(1.0, 3), **args)


def test_bad_data(logistic_data):
    C = fe.L2Ball(1.0, 3)
    good = dict(epsilon=1.0, delta=1e-6, data_norm=1.0)
    X, y = logistic_data(100, 3, seed=0)
    with pytest.raises(ValueError, match="X"):
        fe.noisy_pgd(fe.losses.Logistic(), np.ones((100, 4)), y, C, **good)
    with pytest.raises(ValueError, match="y"):
        fe.noisy_pgd(fe.losses.Logistic(), X, y[:-1], C, **good)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError, match="X"):
        fe.noisy_pgd(fe.losses.Logistic(), Xn, y, C, **good)
    with pytest.raises(ValueError, match="X"):
        fe.noisy_pgd(fe.losses.Logistic(), np.empty((0, 3)), np.empty(0), C, **good)
    with pytest.raises(TypeError, match="X"):
        fe.noisy_pgd(fe.losses.Logistic(), X.astype(object), y, C, **good)
    with pytest.raises(TypeError, match="loss"):
        fe.noisy_pgd("logistic", X, y, C, **good)
    with pytest.raises(TypeError, match="constraint"):
        fe.noisy_pgd(fe.losses.Logistic(), X, y, None, **good)


# -- the compiled loop against the numpy reference loop ---------------------------------------
class _NoKernelBall(fe.erm.constraints.L2Ball):
    """An L2 ball that hides its compiled projection: the optimisers use the numpy loop."""

    def _loop_spec(self, dtype):
        return None


_SETS = {
    "l2": lambda d: fe.erm.constraints.L2Ball(2.0, d),
    "l2-centred": lambda d: fe.erm.constraints.L2Ball(1.5, d, center=np.linspace(-0.3, 0.3, d)),
    "box": lambda d: fe.erm.constraints.Box(-0.7, 0.9, d),
    "box-vec": lambda d: fe.erm.constraints.Box(-np.linspace(0.1, 1, d), np.linspace(0.2, 2, d), d),
    "simplex": lambda d: fe.erm.constraints.Simplex(d, total=3.0),
    "l1": lambda d: fe.erm.constraints.L1Ball(1.2, d),
}
_LOSSES = {
    "logistic": fe.losses.Logistic(l2=0.05),
    "hinge": fe.losses.Hinge(),
    "squared": fe.losses.Squared(l2=0.1),
    "absolute": fe.losses.Absolute(),
    "linear": fe.losses.Linear(),
}


def _backend(noise, scale, seed):
    from fasterm.erm import _backends

    if noise is None:
        return _backends.NoNoise()
    return _backends.FloatNoise(noise, "l2", np.random.default_rng(seed), scale)


def _reference_run(loss, X, y, constraint, steps, lr, average, noise, scale, seed, clip, data_norm,
                   label_bound=None):
    """The engine's numpy loop around the compiled gradient sum (no fused loop)."""
    from fasterm.erm import _engine, _losses

    w, X, y, c, dn, ybound, norms, nt = loss._prepare(
        constraint.center.astype(X.dtype), X, y, clip=clip, data_norm=data_norm,
        label_bound=label_bound)
    # the floating-point margin of a full-batch release (fasterm.erm._float_margin, the one place)
    c = _engine.release_clip(loss, constraint, c, X.dtype, X.shape[0], X.shape[1], scale=1.0 / X.shape[0])

    def grad_sum(w, out):
        _losses.grad_sum(loss._kind, X, y, w, norms, dn, c, ybound, out, nt)

    return _engine.descend(grad_sum, w, constraint, steps, lr, scale=1.0 / X.shape[0],
                           noise=_backend(noise, scale, seed), reg=float(loss.l2), average=average)


@pytest.mark.parametrize("set_name", list(_SETS))
@pytest.mark.parametrize("loss_name", list(_LOSSES))
@pytest.mark.parametrize("noise", [None, "laplace", "gaussian"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_compiled_loop_matches_numpy_loop(set_name, loss_name, noise, dtype):
    from fasterm.erm import _engine

    rng = np.random.default_rng(7)
    n, d = 57, 9
    X = (rng.normal(size=(n, d)) * 0.6).astype(dtype)
    X[3] *= 5.0  # beyond data_norm: scaled down in both loops
    y = rng.normal(size=n).astype(dtype) if loss_name in ("squared", "absolute") else \
        np.where(rng.random(n) < 0.5, 1.0, -1.0).astype(dtype)
    loss, C = _LOSSES[loss_name], _SETS[set_name](d)
    kw = dict(steps=23, lr=0.3, noise=noise, scale=0.05 if noise else 0.0, clip=0.8,
              data_norm=1.0, label_bound=1.5 if loss_name in ("squared", "absolute") else None)
    for average in (True, False):
        ref = _reference_run(loss, X, y, C, average=average, seed=11, **kw)
        got = _engine.run(loss, X, y, C, kw["steps"], kw["lr"], average, data_norm=1.0, clip=0.8,
                          label_bound=kw["label_bound"], noise=_backend(noise, kw["scale"], 11))
        assert got.dtype == dtype
        # Same operations in the same order on the same noise: equal to rounding (bit for
        # bit where the compiler contracts nothing, as on x86-64).
        tol = 1e-12 if dtype == np.float64 else 1e-5
        np.testing.assert_allclose(got, ref, rtol=tol, atol=tol)
        if platform.machine() in ("x86_64", "AMD64"):
            np.testing.assert_array_equal(got, ref)
        assert not np.array_equal(ref, C.center.astype(dtype))  # the loop did move


def test_set_without_compiled_projection_uses_numpy_loop(logistic_data):
    X, y = logistic_data(200, 4, 3)
    base = fe.erm.constraints.L2Ball(1.0, 4)
    kw = dict(epsilon=1.0, delta=1e-6, noise="gaussian", data_norm=1.0, random_state=5, steps=40)
    a = fe.noisy_pgd(fe.losses.Logistic(), X, y, base, **kw)
    b = fe.noisy_pgd(fe.losses.Logistic(), X, y, _NoKernelBall(1.0, 4), **kw)
    np.testing.assert_allclose(a.w, b.w, rtol=1e-12, atol=1e-14)
    assert a.epsilon == b.epsilon and a.noise_scale == b.noise_scale


def test_noise_stream_is_d_draws_per_step():
    """Step t's noise is draws t·d … t·d + d − 1 of the sampler: with a zero loss gradient
    (Linear loss on zero data) and no projection binding, w_T = −η Σ_t h_t exactly."""
    d, T, lr, scale = 5, 17, 0.01, 0.3
    X = np.zeros((10, d))
    C = fe.erm.constraints.L2Ball(1e6, d)
    from fasterm.erm import _engine

    for noise, draw in (("laplace", fe.noise.laplace), ("gaussian", fe.noise.gaussian)):
        w = _engine.run(fe.losses.Linear(), X, None, C, T, lr, False, data_norm=1.0, clip=1.0,
                        noise=_backend(noise, scale, 2))
        h = draw((T, d), scale, random_state=np.random.default_rng(2))
        expect = np.zeros(d)
        for t in range(T):
            expect = expect + (-lr) * h[t]  # the loop's own order: w + (−η)·g
        np.testing.assert_allclose(w, expect, rtol=1e-13, atol=1e-16)


def test_compiled_loop_rejects_bad_buffers():
    from fasterm.erm import _losses

    X = np.ones((4, 3))
    y = np.ones(4)
    w = np.zeros(3)
    norms = np.full(4, math.sqrt(3.0))
    args = dict(kind=0, X=X, y=y, norms=norms, data_norm=1.0, clip=1.0, label_bound=math.inf,
                w=w, steps=3, lr=0.1, reg=0.0, noise=0, scale=0.0, bit_generator=None,
                set_kind=0, set_param=1.0, set_a=None, set_b=None, acc=None)
    for change, msg in [({"w": np.zeros(2)}, "w has"), ({"acc": np.zeros(2)}, "acc has"),
                        ({"set_kind": 7}, "set_kind"), ({"set_kind": 1}, "box needs"),
                        ({"noise": 1}, "bit generator"), ({"set_param": 0.0}, "set_param"),
                        ({"steps": -1}, "steps"), ({"set_a": np.zeros(5)}, "set_a has")]:
        with pytest.raises(ValueError, match=msg):
            _losses.pgd_loop(**{**args, **change})


def test_engine_schedule_and_momentum_hooks():
    """The hooks the solvers plug into: a step-size schedule (a constant schedule is the
    constant step, bit for bit) and Nesterov momentum (against a plain reference loop)."""
    from fasterm.erm import _backends, _engine

    rng = np.random.default_rng(8)
    n, d, T = 80, 4, 30
    X = rng.normal(size=(n, d)) * 0.4
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    loss, C = fe.losses.Logistic(l2=0.05), fe.erm.constraints.L2Ball(1.5, d)

    def data_grad(w):  # Σ_i ∇ℓ_i(w) of the logistic loss
        return -(y / (1.0 + np.exp(y * (X @ w)))) @ X

    def grad_sum(w, out):
        out[:] = data_grad(w)

    def run(lr, momentum=None, average=True):
        return _engine.descend(grad_sum, C.center.copy(), C, T, lr, scale=1.0 / n,
                               noise=_backends.NoNoise(), reg=loss.l2, average=average, momentum=momentum)

    np.testing.assert_array_equal(run(0.5), run(lambda t: 0.5))
    assert not np.array_equal(run(0.5), run(lambda t: 0.5 / (t + 1)))

    beta = lambda t: t / (t + 3.0)  # noqa: E731 - the FISTA-like schedule
    w_prev = w = C.center.copy()
    acc = np.zeros(d)
    for t in range(T):
        yt = w + beta(t) * (w - w_prev)
        acc += yt
        g = data_grad(yt) / n + loss.l2 * yt
        w_prev, w = w, C.project(yt - 0.5 * g)
    np.testing.assert_allclose(run(0.5, beta, average=False), w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(run(0.5, beta), C.project(acc / T), rtol=1e-12, atol=1e-14)
    assert not np.allclose(run(0.5, beta, average=False), run(0.5, average=False))
