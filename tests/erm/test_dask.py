"""noisy_pgd and the estimators on row-chunked dask arrays (fasterm.erm._dask).

The reference is the in-memory call with the same seed: the chunked run must
return the same ŵ (up to the order of a floating-point sum) and report the
same calibration.  One 2-process LocalCluster serves the module; a few tests
use dask's local (threaded) scheduler instead.
"""

import subprocess
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import fasterm as fe  # noqa: E402
from fasterm.erm import _dask  # noqa: E402

N, D = 2000, 6
NOISES = [("laplace", "pure"), ("laplace", "coordinate"), ("laplace", "l2"), ("gaussian", "l2")]
RESULT_FIELDS = ("epsilon", "delta", "steps", "lr", "noise", "calibration", "noise_scale",
                 "lipschitz", "sensitivity", "noise_norm_sq", "utility_bound")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0") as cluster:  # any free port
        with distributed.Client(cluster, set_as_default=False) as c:
            yield c


def make_data(dtype=np.float64, n=N, d=D, seed=0):
    rng = np.random.default_rng(seed)
    # row norms spread around the declared bound 1, so that the data-norm row
    # scale and the per-example clip both bind on some rows
    X = (rng.standard_normal((n, d)) * rng.uniform(0.2, 0.8, (n, 1))).astype(dtype)
    y = np.where(X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y.astype(dtype)


def run_both(X, y, chunks, client, *, loss=None, seed=3, **kw):
    loss = fe.losses.Logistic(l2=1e-3) if loss is None else loss
    kw = {"epsilon": 1.0, "delta": 1e-6, "steps": 20, "data_norm": 1.0, "clip": 0.6, **kw}
    C = fe.L2Ball(3.0, X.shape[1])
    ref = fe.noisy_pgd(loss, X, y, C, random_state=seed, **kw)
    Xd = da.from_array(X, chunks=(chunks, -1))
    yd = None if y is None else da.from_array(y, chunks=(chunks,))
    got = fe.noisy_pgd(loss, Xd, yd, C, random_state=seed, client=client, **kw)
    return ref, got


def assert_same_calibration(ref, got):
    for name in RESULT_FIELDS:
        assert getattr(got, name) == getattr(ref, name), name
    assert got.info == ref.info


@pytest.mark.parametrize("noise,calibration", NOISES)
def test_matches_in_memory_float64(client, noise, calibration):
    X, y = make_data()
    ref, got = run_both(X, y, 500, client, noise=noise, calibration=calibration)
    np.testing.assert_allclose(got.w, ref.w, rtol=0, atol=1e-10)
    assert got.w.dtype == np.float64
    assert_same_calibration(ref, got)
    # power: the noise moves ŵ far more than the tolerance, so a run that drew
    # it differently (per chunk, another seed, another stream) would fail
    other = fe.noisy_pgd(fe.losses.Logistic(l2=1e-3), X, y, fe.L2Ball(3.0, D), 1.0, delta=1e-6,
                         steps=20, data_norm=1.0, clip=0.6, noise=noise, calibration=calibration,
                         random_state=4)
    assert np.max(np.abs(other.w - ref.w)) > 1e-3


@pytest.mark.parametrize("noise,calibration", NOISES)
def test_matches_in_memory_float32(client, noise, calibration):
    X, y = make_data(np.float32)
    ref, got = run_both(X, y, 500, client, noise=noise, calibration=calibration)
    assert got.w.dtype == np.float32
    # per-chunk sums are rounded to float32 before their float64 reduction; observed
    # differences are a few 1e-8
    np.testing.assert_allclose(got.w, ref.w, rtol=0, atol=1e-6)  # ~8 ulps at |w| ~ 1.5
    assert_same_calibration(ref, got)


@pytest.mark.parametrize("noise,calibration", [("gaussian", "l2"), ("laplace", "l2")])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_secure_matches_in_memory(client, noise, calibration, dtype):
    """Secure mode on chunked X: float64 chunk sums on the workers, the exact grid release at
    the client — the in-memory secure result for the seed (the sums agree to ~1e-16, far
    inside a grid step, so the rounded releases and hence ŵ are the same)."""
    X, y = make_data(dtype)
    ref, got = run_both(X, y, 500, client, noise=noise, calibration=calibration, secure=True)
    assert got.w.dtype == dtype and ref.info["secure"] is not None
    np.testing.assert_array_equal(got.w, ref.w)
    assert_same_calibration(ref, got)
    # power: another seed's exact noise moves ŵ far more than any rounding
    _, other = run_both(X, y, 500, client, noise=noise, calibration=calibration, secure=True, seed=4)
    assert np.max(np.abs(other.w - ref.w)) > 1e-3


@pytest.mark.parametrize("chunks", [
    (N,), (1000, 1000), (1, 1999), (700, 13, 587, 700), (0, 1200, 0, 800), 250,
])
def test_chunk_boundaries(client, chunks):
    X, y = make_data()
    ref, got = run_both(X, y, chunks, client, noise="gaussian")
    np.testing.assert_allclose(got.w, ref.w, rtol=0, atol=1e-10)
    if chunks == (N,):  # one chunk: the same kernel call, the same sum, bit for bit
        np.testing.assert_array_equal(got.w, ref.w)


def test_regression_last_iterate_default_steps(client):
    """Squared loss with label clipping, default T and η, last iterate, numpy y."""
    X, _ = make_data()
    y = 3.0 * X[:, 0] + np.random.default_rng(5).standard_normal(N)  # |y| often > bound
    loss = fe.losses.Squared(label_bound=1.0, l2=1e-2)
    kw = dict(epsilon=2.0, delta=1e-6, data_norm=1.0, clip=None, steps=None, max_steps=30,
              average=False, noise="laplace", calibration="l2", label_bound=1.0)
    C = fe.L2Ball(3.0, D)
    ref = fe.noisy_pgd(loss, X, y, C, random_state=7, **kw)
    got = fe.noisy_pgd(loss, da.from_array(X, chunks=(300, D)), y, C, random_state=7,
                       client=client, **kw)
    np.testing.assert_allclose(got.w, ref.w, rtol=0, atol=1e-10)
    assert_same_calibration(ref, got)


def test_linear_loss_without_labels_and_generator(client):
    """Linear loss (no labels, no clip) from a Generator, advanced alike by both paths."""
    X, _ = make_data()
    g1, g2 = np.random.default_rng(11), np.random.default_rng(11)
    C = fe.L2Ball(1.0, D)
    kw = dict(epsilon=1.0, steps=25, data_norm=1.0, noise="laplace", calibration="pure")
    ref = fe.noisy_pgd(fe.losses.Linear(), X, None, C, random_state=g1, **kw)
    got = fe.noisy_pgd(fe.losses.Linear(), da.from_array(X, chunks=(600, D)), None, C,
                       random_state=g2, client=client, **kw)
    np.testing.assert_allclose(got.w, ref.w, rtol=0, atol=1e-10)
    assert g1.random() == g2.random()


def test_integer_X_becomes_float64(client):
    rng = np.random.default_rng(2)
    X = rng.integers(-2, 3, (N, D))
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0)
    ref, got = run_both(X, y, 800, client, data_norm=3.0)
    assert got.w.dtype == np.float64
    np.testing.assert_allclose(got.w, ref.w, rtol=0, atol=1e-10)


def test_scheduler_address(client):
    X, y = make_data()
    ref, got = run_both(X, y, 500, client.scheduler.address, steps=10)
    np.testing.assert_allclose(got.w, ref.w, rtol=0, atol=1e-10)


def test_default_client(client):
    """client=None inside ``client.as_current()`` (or with a default Client) runs on the cluster."""
    X, y = make_data()
    C = fe.L2Ball(3.0, D)
    kw = dict(epsilon=1.0, delta=1e-6, steps=10, data_norm=1.0, clip=0.6)
    ref = fe.noisy_pgd(fe.losses.Logistic(), X, y, C, random_state=2, **kw)
    # get_worker() raises outside a worker: the chunks are prepared on the cluster
    Xd = da.from_array(X, chunks=(500, D)).map_blocks(
        lambda b: (distributed.get_worker(), b)[1], dtype=X.dtype, meta=np.empty((0, 0)))
    with client.as_current():
        got = fe.noisy_pgd(fe.losses.Logistic(), Xd, y, C, random_state=2, **kw)
    np.testing.assert_allclose(got.w, ref.w, rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="No worker found"):  # the check has power
        fe.noisy_pgd(fe.losses.Logistic(), Xd, y, C, random_state=2, **kw)


def test_balance_spreads_chunks(client):
    """Chunks piled on one worker are spread (each step waits for the busiest worker)."""
    first = sorted(client.nthreads())[0]
    rows = [400, 300, 300, 200, 100, 100]
    parts = [client.submit(lambda r: (np.full((r, 2), float(r)), None, None), r,
                           workers=[first], pure=False) for r in rows]
    client.gather(parts)
    balanced = _dask.balance(client, parts, rows)
    where = {k: ws[0] for k, ws in client.who_has(balanced).items()}
    load = {}
    for f, r in zip(balanced, rows):
        load[where[f.key]] = load.get(where[f.key], 0) + r
    assert sorted(load.values()) == [700, 700]
    assert [p[0][0, 0] for p in client.gather(balanced)] == rows  # same chunks, same order
    again = _dask.balance(client, balanced, rows)  # balanced input: nothing moves
    assert all(a is b for a, b in zip(again, balanced))
    # and a fit on X persisted on one worker still matches the in-memory one
    X, y = make_data()
    Xd = client.persist(da.from_array(X, chunks=(400, D)), workers=[first])
    ref, _ = run_both(X, y, 400, client, steps=10)
    got = fe.noisy_pgd(fe.losses.Logistic(l2=1e-3), Xd, y, fe.L2Ball(3.0, D), 1.0, delta=1e-6,
                       steps=10, data_norm=1.0, clip=0.6, random_state=3, client=client)
    np.testing.assert_allclose(got.w, ref.w, rtol=0, atol=1e-10)


def test_local_scheduler_and_X_persisted_once():
    """No cluster: dask's threaded scheduler.  X's chunks are computed once, not per step."""
    X, y = make_data()
    calls = []

    def load(block):
        calls.append(block.shape[0])
        return block

    Xd = da.from_array(X, chunks=(400, D)).map_blocks(load, dtype=X.dtype)
    C = fe.L2Ball(3.0, D)
    kw = dict(epsilon=1.0, delta=1e-6, steps=30, data_norm=1.0, clip=0.6, noise="gaussian")
    ref = fe.noisy_pgd(fe.losses.Logistic(), X, y, C, random_state=1, **kw)
    got = fe.noisy_pgd(fe.losses.Logistic(), Xd, da.from_array(y, chunks=500), C,
                       random_state=1, **kw)
    np.testing.assert_allclose(got.w, ref.w, rtol=0, atol=1e-10)
    assert sorted(c for c in calls if c) == [400] * 5  # once per chunk for 30 steps (0: meta)


# -- estimators ------------------------------------------------------------------------------


@pytest.fixture
def estimators():
    pytest.importorskip("sklearn")
    return fe.DPLogisticRegression, fe.DPLinearSVC, fe.DPLinearRegression


def _assert_same_fit(ref, got):
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(got.intercept_, ref.intercept_, rtol=0, atol=1e-10)
    assert (got.epsilon_, got.delta_, got.n_iter_) == (ref.epsilon_, ref.delta_, ref.n_iter_)
    assert got.n_features_in_ == ref.n_features_in_
    assert_same_calibration(ref.result_, got.result_)


# make_data's rows spread around data_norm and 2·X[:, 1] beyond label_bound=2 on purpose (the
# clipping is part of the comparison): the clipping warnings are expected
@pytest.mark.filterwarnings("ignore:.*have a norm above data_norm:fasterm.DataWarning",
                            "ignore:.*have \\|y\\| > label_bound:fasterm.DataWarning")
def test_estimators_fit_dask(client, estimators):
    LogReg, SVC, LinReg = estimators
    X, y = make_data()
    y01 = (y > 0).astype(np.int64)  # labels {0, 1}: classes_ from the label set
    Xd = da.from_array(X, chunks=(700, D))
    with client.as_current():
        # solver="noisy_pgd": the one solver with a dask path ("auto" picks it for dask X)
        for est, target in [(LogReg(random_state=0, max_steps=40, solver="noisy_pgd"), y01),
                            (SVC(random_state=0, steps=30, noise="laplace", classes=(0, 1),
                                 fit_intercept=False), y01),
                            (LinReg(random_state=0, max_steps=30, label_bound=2.0, solver="noisy_pgd"), 2 * X[:, 1])]:
            ref = est.__class__(**est.get_params()).fit(X, target)
            got = est.fit(Xd, da.from_array(target, chunks=500))
            _assert_same_fit(ref, got)
            if hasattr(ref, "classes_"):
                np.testing.assert_array_equal(got.classes_, ref.classes_)
            np.testing.assert_allclose(got.predict(X), ref.predict(X), rtol=0, atol=1e-10)
        auto = LogReg(random_state=0, max_steps=40).fit(Xd, da.from_array(y01, chunks=500))
        assert "solver" not in auto.result_.info  # noisy_pgd's result
        _assert_same_fit(LogReg(random_state=0, max_steps=40, solver="noisy_pgd").fit(X, y01), auto)


def test_estimator_refuses(client, estimators):
    LogReg, _, _ = estimators
    X, y = make_data()
    Xd = da.from_array(X, chunks=(700, D))
    with pytest.raises(ValueError, match="solver='expmech' needs X in memory"):
        LogReg(solver="expmech").fit(Xd, y)
    with pytest.raises(ValueError, match="more than two classes need X in memory"):
        LogReg().fit(Xd, da.from_array(np.arange(N) % 3, chunks=700))
    with pytest.raises(ValueError, match="more than two classes need X in memory"):
        LogReg(classes=[0, 1, 2]).fit(Xd, da.from_array(np.arange(N) % 3, chunks=700))
    with pytest.raises(ValueError, match="X must be chunked along rows"):
        LogReg().fit(da.from_array(X, chunks=(700, 3)), y)


# -- bad input ---------------------------------------------------------------------------------


def _call(X, y, client=None, loss=None, **kw):
    C = fe.L2Ball(1.0, D)
    loss = fe.losses.Logistic() if loss is None else loss
    return fe.noisy_pgd(loss, X, y, C, 1.0, delta=1e-6, steps=3, data_norm=1.0,
                        random_state=0, client=client, **kw)


def test_bad_input(client):
    X, y = make_data()
    Xd, yd = da.from_array(X, chunks=(500, D)), da.from_array(y, chunks=500)
    with pytest.raises(ValueError, match=r"X must be chunked along rows.*rechunk"):
        _call(da.from_array(X, chunks=(500, 2)), yd, client)
    with pytest.raises(ValueError, match="y has 1999 entries but X has 2000 rows"):
        _call(Xd, yd[:-1], client)
    with pytest.raises(ValueError, match="y has 1999 entries"):
        _call(Xd, y[:-1], client)
    with pytest.raises(TypeError, match="X must hold real numbers"):
        _call(Xd.astype(np.complex128), yd, client)
    with pytest.raises(TypeError, match="y must hold real numbers"):
        _call(Xd, yd.astype(np.complex128), client)
    with pytest.raises(TypeError, match="y must hold real numbers"):
        _call(Xd, y.astype(str), client)
    with pytest.raises(ValueError, match="X must have 2 dimension"):
        _call(Xd[:, 0], yd, client)
    with pytest.raises(ValueError, match="y must have 1 dimension"):
        _call(Xd, Xd, client)
    with pytest.raises(ValueError, match="X has unknown chunk sizes"):
        _call(Xd[Xd[:, 0] > 0], yd, client)
    with pytest.raises(ValueError, match="X must not be empty"):
        _call(Xd[:0], yd[:0], client)
    with pytest.raises(ValueError, match="X has 6 columns but constraint has dim 5"):
        fe.noisy_pgd(fe.losses.Logistic(), Xd, yd, fe.L2Ball(1.0, 5), 1.0, data_norm=1.0,
                     client=client)
    with pytest.raises(ValueError, match="y is required for Logistic"):
        _call(Xd, None, client)
    with pytest.raises(TypeError, match="client must be None, a dask.distributed.Client"):
        _call(Xd, yd, client=42)
    with pytest.raises(TypeError, match="client must be None"):
        _call(X, y, client=object())
    with pytest.raises(TypeError, match="X must be a dask array of numpy chunks"):
        _call(Xd.map_blocks(lambda b: b, meta=np.ma.masked_array(np.empty((0, 0)))), yd, client)


@pytest.mark.parametrize("where", ["X", "y"])
@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_data(client, where, value):
    """The in-memory path's check and message; computed on the workers, one flag per chunk."""
    X, y = make_data()
    (X if where == "X" else y)[1234] = value  # noqa: RUF027
    for args in [(X, y), (da.from_array(X, chunks=(500, D)), da.from_array(y, chunks=500))]:
        with pytest.raises(ValueError, match=f"{where} must contain only finite values"):
            _call(*args, client=client)


def test_import_does_not_load_dask(tmp_path):
    code = ("import sys, fasterm, fasterm.erm.optimize, fasterm.linear_model._rules, fasterm.linear_model; "
            "assert not any(m == 'dask' or m.startswith(('dask.', 'distributed')) "
            "for m in sys.modules), sorted(m for m in sys.modules if 'dask' in m)")
    # cwd outside the checkout: `python -c` puts the working directory first on
    # sys.path, and the source folder there has no compiled modules.
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)
    assert not _dask.is_dask_collection(np.zeros(3))
