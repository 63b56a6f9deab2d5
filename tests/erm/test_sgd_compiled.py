"""The compiled noisy-SGD run (``_losses.sgd_loop``) against the Python reference loop.

fasterm.erm.solvers runs a dense noisy_sgd in one compiled call; the Python loop of
``_noisy_sgd`` (numpy's Generator for the batch, ``_engine.descend`` for the
step) stays the reference.  Both must give the same bits for a seed: the
compiled sampler draws what ``Generator.binomial`` and
``Generator.choice(replace=False)`` draw, in the same order, and the noise is
the next d normals of the same bit generator.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import fasterm as fe
from fasterm.erm import _losses, _sgdrun, solvers


def _reference_rows(rng, n, q):
    size = int(rng.binomial(n, q))
    if size == 0:
        return np.empty(0, dtype=np.int64)
    return np.sort(rng.choice(n, size=size, replace=False)) if size < n else np.arange(n)


@pytest.mark.parametrize("n, q", [(1, 0.5), (7, 0.5), (100, 0.01), (5_000, 0.0256), (9_999, 0.3),
                                  (10_001, 0.02), (10_001, 0.05), (160_000, 0.0064), (60_000, 0.2),
                                  (30, 1.0), (2_000_000, 1e-4)])
def test_poisson_rows_reproduce_generator(n, q):
    # Every branch of numpy's choice: Floyd's algorithm (n <= 10,000, or a batch <= n // 50),
    # the tail shuffle (n > 10,000 and a batch > n // 50), all rows (size n), no row (size 0);
    # and the Generator's state after the draws (the noise that follows must be the same).
    for seed in range(4):
        rng = np.random.default_rng(seed)
        ref = [_reference_rows(rng, n, q) for _ in range(5)]
        after = rng.random(3)
        bg = np.random.default_rng(seed).bit_generator
        got = _losses.poisson_rows(bg, n, q, 5)
        for a, b in zip(ref, got):
            assert a.dtype == b.dtype == np.int64
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.random.Generator(bg).random(3), after)


def test_sampler_check_passes_on_this_numpy(monkeypatch):
    monkeypatch.setattr(_sgdrun, "_SAMPLER_OK", None)
    assert _sgdrun.sampler_matches_numpy()


def test_sampler_check_catches_a_different_stream(monkeypatch):
    # A compiled sampler that drew other rows (as a numpy with another choice algorithm would
    # make it look) must be caught, so that the runs take the Python reference loop.
    real = _losses.poisson_rows

    def shifted(bg, n, q, draws):
        return [np.unique((r + 1) % n) for r in real(bg, n, q, draws)]

    monkeypatch.setattr(_sgdrun, "_SAMPLER_OK", None)
    monkeypatch.setattr(_losses, "poisson_rows", shifted)
    assert not _sgdrun.sampler_matches_numpy()
    X, y = _data(1_000, 4, np.float64)
    calls = []
    monkeypatch.setattr(_losses, "sgd_loop", lambda *a, **k: calls.append(1))
    solvers._noisy_sgd(fe.losses.Logistic(), X, y, fe.L2Ball(3.0, 4), 1.0, 1e-5, 5, sample_rate=0.1,
                       batch_size=None, epochs=1.0, data_norm=1.0, clip=None, random_state=0, label_bound=None,
                       lr=None, output="last", neighbors="replace_one")
    assert calls == []


def _run(monkeypatch, compiled, *args, **kw):
    monkeypatch.setattr(_sgdrun, "COMPILED", compiled)
    return solvers._noisy_sgd(*args, **kw)


def _data(n, d, dtype, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    X[:n // 10] *= 3.0  # rows beyond data_norm = 1
    w = rng.standard_normal(d)
    y = np.where(X @ w + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X.astype(dtype), y.astype(dtype)


@pytest.mark.parametrize("dtype, neighbors", [(np.float64, "replace_one"), (np.float32, "replace_one"),
                                              (np.float64, "add_remove")])
@pytest.mark.parametrize("intercept", [None, (1.0, 0.25)])
@pytest.mark.parametrize("output", ["last", "average"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("kind", ["logistic", "squared"])
def test_compiled_run_is_the_reference_bit_for_bit(monkeypatch, dtype, neighbors, intercept, output, weighted,
                                                   kind):
    # Every batch clipped at the run's one clip (its one-sided floating-point margin) in both loops; add_remove:
    # the caller's public batch size m divides the sum (float32 is refused there).
    n, d = 3_000, 7
    X, y = _data(n, d, dtype, seed=3)
    if kind == "squared":
        y = (y * 0.7).astype(dtype)
        loss = fe.losses.Squared(l2=1e-3)
    else:
        loss = fe.losses.Logistic(l2=1e-3)
    dim = d + (intercept is not None)
    sw = np.random.default_rng(5).uniform(0.0, 2.0, n) if weighted else None
    kw = dict(sample_rate=0.05, batch_size=None, epochs=1.0, data_norm=1.2, clip=0.8, label_bound=1.0,
              lr=0.7, output=output, neighbors=neighbors, intercept=intercept, sample_weight=sw,
              weight_bound=2.0 if weighted else 1.0)
    if neighbors == "add_remove":
        kw["batch_size"] = 140.0
    for C in (fe.L2Ball(2.0, dim), fe.L2Ball(0.3, dim, center=np.full(dim, 0.05))):
        for seed in (0, 11):
            ref = _run(monkeypatch, False, loss, X, y, C, 1.0, 1e-5, 25, random_state=seed, **kw)
            got = _run(monkeypatch, True, loss, X, y, C, 1.0, 1e-5, 25, random_state=seed, **kw)
            assert got.w.dtype == ref.w.dtype == dtype
            np.testing.assert_array_equal(got.w, ref.w)
            assert got.info == ref.info and got.noise_scale == ref.noise_scale
            assert got.utility_bound == ref.utility_bound and got.steps == ref.steps


def test_compiled_run_leaves_the_generator_where_the_reference_does(monkeypatch):
    X, y = _data(2_000, 5, np.float64, seed=1)
    states = []
    for compiled in (False, True):
        rng = np.random.default_rng(7)
        r = _run(monkeypatch, compiled, fe.losses.Logistic(), X, y, fe.L2Ball(3.0, 5), 1.0, 1e-5, 30,
                 sample_rate=0.1, batch_size=None, epochs=1.0, data_norm=1.0, clip=None, random_state=rng,
                 label_bound=None, lr=None, output="last", neighbors="replace_one")
        states.append((r.w, rng.random(4)))
    np.testing.assert_array_equal(states[0][0], states[1][0])
    np.testing.assert_array_equal(states[0][1], states[1][1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_default_estimator_fit_is_the_reference(monkeypatch, dtype):
    # DPLogisticRegression's default fit at n >= 5,000 is noisy_sgd with the design built per batch.
    X, y = _data(6_000, 6, dtype, seed=2)
    fits = []
    for compiled in (False, True):
        monkeypatch.setattr(_sgdrun, "COMPILED", compiled)
        with pytest.warns(fe.DataWarning, match=r"of 6000 rows .* above data_norm=1"):  # _data's X[:n // 10] *= 3
            m = fe.DPLogisticRegression(epsilon=1.0, delta=1e-5, random_state=3).fit(X, (y > 0).astype(int))
        assert m.result_.info["solver"] == "sgd"
        fits.append((m.coef_.copy(), m.intercept_.copy()))
    np.testing.assert_array_equal(fits[0][0], fits[1][0])
    np.testing.assert_array_equal(fits[0][1], fits[1][1])


def test_csr_and_other_sets_take_the_reference_loop(monkeypatch):
    # A CSR X and a set without a compiled projection run the Python loop; a numpy whose
    # sampler the compiled one does not reproduce too (the check says no).
    X, y = _data(1_500, 5, np.float64, seed=4)
    calls = []
    real = _losses.sgd_loop
    monkeypatch.setattr(_losses, "sgd_loop", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    kw = dict(sample_rate=0.1, batch_size=None, epochs=1.0, data_norm=1.0, clip=None, label_bound=None,
              lr=None, output="last", neighbors="replace_one")
    dense = solvers._noisy_sgd(fe.losses.Logistic(), X, y, fe.L2Ball(3.0, 5), 1.0, 1e-5, 10, random_state=0, **kw)
    assert calls == [1]
    csr = solvers._noisy_sgd(fe.losses.Logistic(), sp.csr_matrix(X), y, fe.L2Ball(3.0, 5), 1.0, 1e-5, 10,
                             random_state=0, **kw)
    assert calls == [1]
    np.testing.assert_allclose(csr.w, dense.w, rtol=1e-12, atol=1e-14)
    monkeypatch.setattr(_sgdrun, "_SAMPLER_OK", False)
    again = solvers._noisy_sgd(fe.losses.Logistic(), X, y, fe.L2Ball(3.0, 5), 1.0, 1e-5, 10, random_state=0, **kw)
    assert calls == [1]
    np.testing.assert_array_equal(again.w, dense.w)


def test_sgd_loop_rejects_bad_buffers():
    X = np.zeros((4, 3))
    w = np.zeros(3)
    bg = np.random.default_rng(0).bit_generator
    base = (0, X, np.ones(4), None, 1.0, 1.0, np.inf)
    with pytest.raises(ValueError, match="w has"):
        _losses.sgd_loop(*base, np.zeros(4), 2, 0.5, 0.5, 0.1, 0.0, 1.0, bg, _losses.SET_L2_BALL, 1.0, None, None,
                         None)
    with pytest.raises(ValueError, match="q must be"):
        _losses.sgd_loop(*base, w, 2, 0.0, 0.5, 0.1, 0.0, 1.0, bg, _losses.SET_L2_BALL, 1.0, None, None, None)
    with pytest.raises(ValueError, match="acc has"):
        _losses.sgd_loop(*base, w, 2, 0.5, 0.5, 0.1, 0.0, 1.0, bg, _losses.SET_L2_BALL, 1.0, None, None,
                         np.zeros(2))
    with pytest.raises(ValueError, match="y has"):
        _losses.sgd_loop(0, X, np.ones(3), None, 1.0, 1.0, np.inf, w, 2, 0.5, 0.5, 0.1, 0.0, 1.0, bg,
                         _losses.SET_L2_BALL, 1.0, None, None, None)
    with pytest.raises(ValueError, match="weights have"):
        _losses.sgd_loop(*base, w, 2, 0.5, 0.5, 0.1, 0.0, 1.0, bg, _losses.SET_L2_BALL, 1.0, None, None, None,
                         1, np.ones(5))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("intercept", [None, (1.0, 0.25)])
def test_given_row_norms_change_no_bit(monkeypatch, dtype, intercept):
    # The estimators hand noisy_sgd the row norms of their data check: both loops must give the
    # bits of the run that computes them itself (they decide which rows are clipped).
    from fasterm.erm._design import row_norms_unchecked

    X, y = _data(2_500, 6, dtype, seed=6)
    dim = 6 + (intercept is not None)
    kw = dict(sample_rate=0.08, batch_size=None, epochs=1.0, data_norm=1.0, clip=0.9, label_bound=None,
              lr=0.5, output="last", neighbors="replace_one", intercept=intercept)
    ref = _run(monkeypatch, False, fe.losses.Logistic(), X, y, fe.L2Ball(2.0, dim), 1.0, 1e-5, 20,
               random_state=2, **kw)
    for compiled in (False, True):
        got = _run(monkeypatch, compiled, fe.losses.Logistic(), X, y, fe.L2Ball(2.0, dim), 1.0, 1e-5, 20,
                   random_state=2, checked=True, row_norms=row_norms_unchecked(X), **kw)
        np.testing.assert_array_equal(got.w, ref.w)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_one_compiled_call_one_clip_the_same_bits_and_draws(monkeypatch, dtype):
    # One clip for every batch size: the compiled loop is called once (no restart from a saved
    # generator state), with the run's one clip, and gives the reference's bits; the generator
    # ends where the reference leaves it.
    X, y = _data(4_000, 5, dtype, seed=8)
    kw = dict(sample_rate=0.05, batch_size=None, epochs=1.0, data_norm=1.0, clip=0.9, label_bound=None,
              lr=0.5, output="average", neighbors="replace_one", intercept=(1.0, 0.5))
    out = []
    real = _losses.sgd_loop
    for compiled in (False, True):
        seen = []
        monkeypatch.setattr(_losses, "sgd_loop", lambda *a, **k: (seen.append(a[5]), real(*a, **k))[1])
        rng = np.random.default_rng(4)
        r = _run(monkeypatch, compiled, fe.losses.Logistic(l2=1e-2), X, y, fe.L2Ball(2.0, 6), 1.0, 1e-5, 40,
                 random_state=rng, **kw)
        out.append((r.w, rng.random(3)))
        if compiled:
            assert len(seen) == 1 and 0.0 < seen[0] < 0.9
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


def test_sgd_loop_refuses_bad_scale_and_clip():
    # A zero scale would release a noiseless w; a zero, negative, infinite or NaN clip has no sensitivity.
    X = np.ones((4, 3))
    w = np.zeros(3)
    bg = np.random.default_rng(0).bit_generator
    args = (0, X, np.ones(4), None, 1.0)
    for scale in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="scale"):
            _losses.sgd_loop(*args, 1.0, np.inf, w, 2, 0.5, 0.5, 0.1, 0.0, scale, bg,
                             _losses.SET_L2_BALL, 1.0, None, None, None)
    for clip in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="clip must be"):
            _losses.sgd_loop(*args, clip, np.inf, w, 2, 0.5, 0.5, 0.1, 0.0, 1.0, bg,
                             _losses.SET_L2_BALL, 1.0, None, None, None)
    assert np.all(w == 0.0)  # nothing ran
    # the run's one clip clips a batch of any size: every step runs
    for m_rows in (1, 4):
        Xm = np.ones((m_rows, 3))
        wm = np.zeros(3)
        _losses.sgd_loop(0, Xm, np.ones(m_rows), None, 1.0, 1.0, np.inf, wm, 5, 1.0, 1.0, 0.1, 0.0, 1.0,
                         np.random.default_rng(0).bit_generator, _losses.SET_L2_BALL, 1.0, None, None, None)
        assert np.all(wm != 0.0)


def test_compiled_run_releases_the_gil():
    # A Python thread keeps running while sgd_loop runs: it records times inside the middle of
    # the call (with the GIL held it could not run a bytecode until the call returned).
    import threading
    import time

    rng = np.random.default_rng(0)
    n, d = 200_000, 50
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    w = np.zeros(d)
    stamps, stop = [], threading.Event()

    def tick():
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0.001)

    th = threading.Thread(target=tick)
    th.start()
    try:
        time.sleep(0.01)
        bg = np.random.default_rng(1).bit_generator
        t0 = time.perf_counter()
        _losses.sgd_loop(0, X, y, None, 1.0, 0.5, np.inf, w, 400, 0.02, 1 / 4000, 0.1, 0.0, 0.01,
                         bg, _losses.SET_L2_BALL, 5.0, None, None, None)
        t1 = time.perf_counter()
    finally:
        stop.set()
        th.join()
    assert t1 - t0 > 0.05  # long enough for the thread to be scheduled
    mid = [t for t in stamps if t0 + 0.3 * (t1 - t0) < t < t0 + 0.7 * (t1 - t0)]
    assert len(mid) >= 3


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("inside", [True, False])
def test_rows_within_the_bound_skip_the_norms_with_the_same_bits(monkeypatch, dtype, inside):
    # Rows all inside data_norm (or one just outside): the compiled run is told so (it then reads
    # no norms and scales no row) only when it is true, and gives the reference's bits either way.
    X, y = _data(6_000, 6, dtype, seed=9)
    X = (0.9 * X / np.linalg.norm(X, axis=1).max()).astype(dtype)  # max norm 0.9
    if not inside:
        X[np.argmax(np.linalg.norm(X, axis=1))] *= dtype(1.25)  # one row beyond data_norm = 1
    seen = []
    real = _losses.sgd_loop
    monkeypatch.setattr(_losses, "sgd_loop", lambda *a, **k: (seen.append(k["rows_within_bound"]), real(*a, **k))[1])
    fits = []
    for compiled in (False, True):
        monkeypatch.setattr(_sgdrun, "COMPILED", compiled)
        m = fe.DPLogisticRegression(epsilon=1.0, delta=1e-5, random_state=5).fit(X, y > 0)
        fits.append((m.coef_.copy(), m.intercept_.copy()))
    assert seen == [inside]
    np.testing.assert_array_equal(fits[0][0], fits[1][0])
    np.testing.assert_array_equal(fits[0][1], fits[1][1])
