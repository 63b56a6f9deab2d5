"""noisy SGD over row-chunked dask arrays (fasterm.erm._dask.SampledRows), the default for a dask X.

The reference is the in-memory run with the same seed: the chunked run draws the
same batches and the same noise from the same Generator, so ŵ must be the same
bits, and the rows each step's kernel sees must be the in-memory run's rows.
The sampling itself is checked for its law (each row's inclusion count over T
steps, a chi-square at a fixed seed): rows included independently at rate q,
whatever the data.
"""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import fasterm as fe  # noqa: E402
import fasterm.erm._sgdrun as _sgdrun  # noqa: E402
import fasterm.erm.solvers as _solvers  # noqa: E402
from fasterm.erm import _dask  # noqa: E402

D = 5


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0") as cluster:
        with distributed.Client(cluster, set_as_default=False) as c:
            yield c


def make_data(n, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, D)) * rng.uniform(0.1, 0.7, (n, 1))).astype(dtype)
    y = np.where(X @ rng.standard_normal(D) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0).astype(dtype)
    return X, y


SGD = dict(epsilon=1.0, delta=1e-6, data_norm=1.0, clip=0.6, batch_size=100)


def sgd(X, y, seed=3, **kw):
    return fe.noisy_sgd(fe.losses.Logistic(l2=1e-3), X, y, fe.L2Ball(3.0, D), random_state=seed, **{**SGD, **kw})


def assert_same_result(ref, got):
    np.testing.assert_array_equal(got.w, ref.w)
    assert got.w.dtype == ref.w.dtype
    for name in ("epsilon", "delta", "steps", "lr", "noise", "noise_scale", "lipschitz", "sensitivity",
                 "noise_norm_sq", "utility_bound"):
        assert getattr(got, name) == getattr(ref, name), name
    extra = {k: v for k, v in got.info.items() if k not in ref.info}
    assert {k: got.info[k] for k in ref.info} == ref.info
    assert set(extra) == {"dask_block_steps", "dask_rounds"}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("chunks", [(1000, 1000, 1000, 1000), (4000,), (1, 0, 2500, 1499)])
def test_matches_in_memory_bit_for_bit(client, dtype, chunks):
    X, y = make_data(4000, dtype)
    ref = sgd(X, y)
    got = sgd(da.from_array(X, chunks=(chunks, D)), da.from_array(y, chunks=(chunks,)), client=client)
    assert_same_result(ref, got)
    assert got.info["dask_rounds"] == _dask.SGD_ROUNDS  # T = 40 steps: blocks of 2
    # power: another seed moves ŵ (the comparison above is not vacuous)
    assert np.max(np.abs(sgd(X, y, seed=4).w - ref.w)) > 1e-3


def test_average_output_and_linear_loss_local_scheduler():
    """dask's threaded scheduler; output="average"; a loss without labels (y=None)."""
    X, y = make_data(3000)
    Xd = da.from_array(X, chunks=(700, D))
    assert_same_result(sgd(X, y, output="average"), sgd(Xd, da.from_array(y, chunks=700), output="average"))
    lin = dict(epsilon=1.0, delta=1e-6, data_norm=1.0, batch_size=50, random_state=2, lr=0.5)
    ref = fe.noisy_sgd(fe.losses.Linear(), X, None, fe.L2Ball(1.0, D), **lin)
    got = fe.noisy_sgd(fe.losses.Linear(), Xd, None, fe.L2Ball(1.0, D), **lin)
    assert_same_result(ref, got)


def test_X_read_once_and_blocks():
    """Each chunk is computed once for the whole run (persisted), whatever the number of blocks."""
    X, y = make_data(3000)
    calls = []

    def load(block):
        calls.append(block.shape[0])
        return block

    Xd = da.from_array(X, chunks=(600, D)).map_blocks(load, dtype=X.dtype)
    got = sgd(Xd, da.from_array(y, chunks=600), batch_size=30)  # T = 100 steps, 20 blocks of 5
    assert (got.info["dask_block_steps"], got.info["dask_rounds"]) == (5, 20)
    assert sorted(c for c in calls if c) == [600] * 5
    assert_same_result(sgd(X, y, batch_size=30), got)


def test_block_plan_is_public_and_bounded():
    assert _dask.sgd_block_steps(3907, 4_000_000, 1024 / 4e6, 101, 8) == 159  # bytes bind: 25 rounds
    assert _dask.sgd_block_steps(977, 1_000_000, 1024 / 1e6, 101, 8) == 49    # rounds bind: 20
    assert _dask.sgd_block_steps(5, 100, 0.5, 3, 8) == 1
    assert _dask.sgd_block_steps(10, 10**9, 1.0, 10**6, 8) == 1  # one step's rows beyond the budget


def _recording(monkeypatch):
    """Record the rows (column 0) every step's gradient kernel receives, in the Python loop."""
    seen = []
    kernel = _solvers._grad_sum_kernel

    def spy(kind, Xb, *args, **kw):
        seen.append(Xb[:, 0].copy())
        return kernel(kind, Xb, *args, **kw)

    monkeypatch.setattr(_solvers, "_grad_sum_kernel", spy)
    monkeypatch.setattr(_sgdrun, "COMPILED", False)  # the in-memory reference runs the Python loop too
    return seen


def test_sampling_same_rows_as_in_memory_and_independent_per_row(monkeypatch):
    """Every step's kernel gets the in-memory run's batch, and each row's inclusion count over T steps
    is Bin(T, q), independently of the data (a chi-square, fixed seed).

    Column 0 encodes the row index; column 1 makes half of the rows long (a sampler that favours
    short or long rows, or that reuses a batch across steps, fails the chi-square)."""
    n, q, T = 3000, 0.02, 500
    idx = np.arange(n)
    X = np.zeros((n, 3))
    X[:, 0] = (idx + 0.5) / (4.0 * n)
    X[:, 1] = np.where(idx % 2 == 1, 0.9, 0.01)
    y = np.where(idx % 3 == 0, 1.0, -1.0)
    kw = dict(epsilon=1.0, delta=1e-6, data_norm=1.0, clip=0.5, sample_rate=q, steps=T, random_state=11)
    seen = _recording(monkeypatch)
    ref = fe.noisy_sgd(fe.losses.Logistic(), X, y, fe.L2Ball(2.0, 3), **kw)
    mem = [np.rint(s * 4.0 * n - 0.5).astype(np.int64) for s in seen]
    seen.clear()
    got = fe.noisy_sgd(fe.losses.Logistic(), da.from_array(X, chunks=(700, 3)), da.from_array(y, chunks=700),
                       fe.L2Ball(2.0, 3), **kw)
    rows = [np.rint(s * 4.0 * n - 0.5).astype(np.int64) for s in seen]
    np.testing.assert_array_equal(got.w, ref.w)
    assert len(rows) == len(mem) and all(np.array_equal(a, b) for a, b in zip(rows, mem))

    scipy_stats = pytest.importorskip("scipy.stats")
    counts = np.bincount(np.concatenate(rows), minlength=n)
    expected, var = T * q, T * q * (1 - q)
    stat = float(((counts - expected) ** 2).sum() / var)
    p = scipy_stats.chi2.sf(stat, n)
    assert 1e-3 < p < 1 - 1e-3, (stat, p)
    # long and short rows alike: their mean counts differ by no more than sampling noise
    long_, short = counts[idx % 2 == 1].mean(), counts[idx % 2 == 0].mean()
    assert abs(long_ - short) < 4 * np.sqrt(2 * var / (n / 2)), (long_, short)


def test_interrupt_cancels_outstanding_blocks(client, monkeypatch):
    """A KeyboardInterrupt during the run (Ctrl-C) cancels the blocks already requested."""
    X, y = make_data(4000)
    cancelled = []
    real_cancel = _dask._Distributed.cancel

    def spy_cancel(self, handle):
        cancelled.extend(handle)
        return real_cancel(self, handle)

    calls = [0]
    real_gather = _dask.SampledRows.gather

    def interrupted(self, rows):
        calls[0] += 1
        if calls[0] == 7:
            raise KeyboardInterrupt
        return real_gather(self, rows)

    monkeypatch.setattr(_dask._Distributed, "cancel", spy_cancel)
    monkeypatch.setattr(_dask.SampledRows, "gather", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sgd(da.from_array(X, chunks=(1000, D)), da.from_array(y, chunks=1000), client=client)
    assert cancelled and all(f.status == "cancelled" for f in cancelled)


def test_refusals(client):
    X, y = make_data(2000)
    Xd, yd = da.from_array(X, chunks=(500, D)), da.from_array(y, chunks=500)
    with pytest.raises(ValueError, match="neighbors='add_remove' needs X in memory"):
        sgd(Xd, yd, sample_rate=0.05, neighbors="add_remove", client=client)
    with pytest.raises(ValueError, match="sample_weight is not supported for a dask X"):
        sgd(Xd, yd, sample_weight=np.ones(2000), client=client)
    with pytest.raises(ValueError, match="X must be chunked along rows"):
        sgd(da.from_array(X, chunks=(500, 2)), yd, client=client)
    bad = X.copy()
    bad[1500, 2] = np.nan
    with pytest.raises(ValueError, match="X must contain only finite values"):
        sgd(da.from_array(bad, chunks=(500, D)), yd, client=client)


# -- the estimators' default ------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:.*have a norm above data_norm:fasterm.DataWarning")
def test_estimators_default_is_sgd_on_dask(client):
    pytest.importorskip("sklearn")
    n = 6000
    X, y = make_data(n)
    y01 = (y > 0).astype(np.int64)
    Xd = da.from_array(X, chunks=(1500, D))
    with client.as_current():
        for dtype in (np.float64, np.float32):
            ref = fe.DPLogisticRegression(random_state=0).fit(X.astype(dtype), y01)
            got = fe.DPLogisticRegression(random_state=0).fit(Xd.astype(dtype), da.from_array(y01, chunks=1500))
            assert got.result_.info["solver"] == "sgd"
            np.testing.assert_array_equal(got.coef_, ref.coef_)
            np.testing.assert_array_equal(got.intercept_, ref.intercept_)
            assert (got.epsilon_, got.delta_, got.n_iter_) == (ref.epsilon_, ref.delta_, ref.n_iter_)
        # regression: the default on a dask X is noisy_sgd (the in-memory regression rule is noisy_gd,
        # one full pass per step); the same fit as solver="noisy_sgd" in memory
        target = 0.5 * X[:, 0]
        ref = fe.DPLinearRegression(random_state=1, solver="noisy_sgd").fit(X, target)
        got = fe.DPLinearRegression(random_state=1).fit(Xd, da.from_array(target, chunks=1500))
        assert got.result_.info["solver"] == "sgd"
        np.testing.assert_array_equal(got.coef_, ref.coef_)
        assert got.intercept_ == ref.intercept_
        # below SGD_MIN_ROWS (and for the hinge loss) a dask X still takes noisy_pgd
        small = fe.DPLogisticRegression(random_state=0, max_steps=5).fit(Xd[:3000], da.from_array(y01[:3000],
                                                                                              chunks=1500))
        assert "solver" not in small.result_.info


def test_verbose_reports_steps_done(capsys):
    """``verbose=1``: the steps done out of T on stderr (public: T and the step count only)."""
    pytest.importorskip("sklearn")
    X, y = make_data(6000)
    y01 = (y > 0).astype(np.int64)
    est = fe.DPLogisticRegression(random_state=0, verbose=1).fit(da.from_array(X, chunks=(2000, D)),
                                                                da.from_array(y01, chunks=2000))
    err = capsys.readouterr().err
    assert est.result_.info["solver"] == "sgd"
    assert f"{est.n_iter_}/{est.n_iter_}" in err, err[-300:]


@pytest.mark.parametrize("q", [0.002, 1.0])
def test_empty_and_full_batches(q):
    """q·n < 1 (most batches empty, no row requested for them) and q = 1 (every row, every step)."""
    X, y = make_data(200)
    kw = dict(batch_size=None, sample_rate=q, steps=60)
    got = sgd(da.from_array(X, chunks=(70, D)), da.from_array(y, chunks=70), **kw)
    assert_same_result(sgd(X, y, **kw), got)
