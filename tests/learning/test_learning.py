"""fasterm.learning.SQOracle: noise distribution, unbiasedness, budget, clipping, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import fasterm as fe
from fasterm import accounting, learning


@pytest.fixture(scope="module")
def data():
    g = np.random.default_rng(0)
    X = g.standard_normal((1000, 3))
    y = (X[:, 0] + 0.5 * g.standard_normal(1000) > 0).astype(float)
    return X, y


def test_noise_is_laplace_with_the_calibrated_scale(data):
    # A constant query has the same mean on every data set, so answer − 0.3 is
    # the noise alone: it must be Laplace(0, 1/(n eps0)) with eps0 = eps/m.
    # (n = 50: phi is called once per example, so each query costs n calls.)
    X, y = data[0][:50], data[1][:50]
    m, eps = 3000, 30.0
    oracle = learning.SQOracle(X, y, eps, max_queries=m, random_state=1)
    b = 1.0 / (50 * eps / m)
    assert oracle.noise_scale == pytest.approx(b, rel=1e-15)
    assert oracle.epsilon_per_query == pytest.approx(eps / m, rel=1e-15)
    assert oracle.composition == "basic"
    noise = np.array([oracle.query(lambda X, y: np.full(len(y), 0.3)) for _ in range(m)]) - 0.3
    assert stats.kstest(noise, stats.laplace(scale=b).cdf).pvalue > 0.01
    # the test has power: a 20% larger scale, or Gaussian noise of the same
    # variance, is rejected at this sample size
    assert stats.kstest(noise, stats.laplace(scale=1.2 * b).cdf).pvalue < 1e-4
    assert stats.kstest(noise, stats.norm(scale=b * math.sqrt(2)).cdf).pvalue < 1e-4


def test_answers_are_unbiased(data):
    X, y = data[0][:100], data[1][:100]
    phi = lambda X, y: ((X[:, 1] > 0) == (y == 1)).astype(float)  # noqa: E731
    truth = phi(X, y).mean()
    m = 4000
    oracle = learning.SQOracle(X, y, float(m), max_queries=m, random_state=2)  # eps0 = 1, b = 1/n
    answers = np.array([oracle.query(phi) for _ in range(m)])
    se = oracle.noise_scale * math.sqrt(2.0 / m)
    assert abs(answers.mean() - truth) < 4 * se
    assert np.std(answers) == pytest.approx(oracle.noise_scale * math.sqrt(2), rel=0.1)


def test_same_seed_same_answer_and_clipping(data):
    X, y = data
    raw = lambda X, y: np.where(y == 1, 7.0, -3.0) * X[:, 0] + np.where(X[:, 2] > 1.5, np.nan, 0.0)  # noqa: E731
    oracle = learning.SQOracle(X, y, 1.0, max_queries=2, random_state=np.random.default_rng(5))
    got = oracle.query(raw)
    v = raw(X, y)
    clipped = np.clip(np.nan_to_num(v, nan=0.0), 0.0, 1.0)
    twin = np.random.default_rng(5)
    want = clipped.mean() + fe.noise.laplace(1, oracle.noise_scale, random_state=twin)[0]
    assert got == pytest.approx(want, rel=0, abs=1e-15)
    # outputs outside [0, 1] never raise, and only their clipped values count
    assert np.any(v > 1) and np.any(v < 0) and np.any(np.isnan(v))


def test_scalar_or_one_element_phi(data):
    # phi sees one example at a time: a scalar and a one-element array are the same answer
    X, y = data
    a = learning.SQOracle(X, y, 1.0, max_queries=1, random_state=3).query(lambda X, y: 0.25)
    b = learning.SQOracle(X, y, 1.0, max_queries=1, random_state=3).query(lambda X, y: np.full(len(y), 0.25))
    assert a == b


def test_refuses_query_m_plus_one(data):
    X, y = data
    oracle = learning.SQOracle(X, y, 1.0, max_queries=3, random_state=0)
    for q in range(3):
        oracle.query(lambda X, y: y)
        assert oracle.queries_answered == q + 1
    assert oracle.queries_remaining == 0

    def must_not_run(X, y):
        raise AssertionError("phi evaluated after the budget was exhausted")

    with pytest.raises(accounting.BudgetExceededError, match="max_queries=3"):
        oracle.query(must_not_run)
    assert oracle.queries_answered == 3
    assert oracle.spent == pytest.approx((1.0, 0.0))


def test_advanced_composition_when_it_is_better(data):
    X, y = data
    m, eps, delta = 1000, 1.0, 1e-6
    oracle = learning.SQOracle(X, y, eps, delta, max_queries=m)
    assert oracle.composition == "advanced"
    e0 = oracle.epsilon_per_query
    assert e0 > eps / m
    assert accounting.advanced_composition(e0, 0.0, m, delta)[0] == pytest.approx(eps, rel=1e-9)
    assert oracle.noise_scale == pytest.approx(1.0 / (1000 * e0), rel=1e-15)
    for _ in range(10):
        oracle.query(lambda X, y: y)
    # after 10 answers basic composition (10 eps0, 0) is the better guarantee
    assert oracle.spent == pytest.approx((10 * e0, 0.0))
    # with few queries basic composition wins outright
    few = learning.SQOracle(X, y, eps, delta, max_queries=2)
    assert few.composition == "basic" and few.epsilon_per_query == eps / 2


def test_spent_under_advanced_composition():
    oracle = learning.SQOracle(np.zeros((4, 1)), np.zeros(4), 1.0, 1e-6, max_queries=20000)
    for _ in range(20000):
        oracle.query(lambda X, y: y)
    e, d = oracle.spent
    assert e == pytest.approx(1.0, rel=1e-9) and e <= 1.0 and d == 1e-6


@pytest.mark.parametrize(
    "kwargs, exc, name",
    [
        (dict(epsilon=0.0), ValueError, "epsilon"),
        (dict(epsilon=math.inf), ValueError, "epsilon"),
        (dict(delta=1.0), ValueError, "delta"),
        (dict(delta=-0.1), ValueError, "delta"),
        (dict(max_queries=0), ValueError, "max_queries"),
        (dict(max_queries=2.5), TypeError, "max_queries"),
        (dict(X=np.zeros(5)), ValueError, "X"),
        (dict(y=np.zeros(4)), ValueError, "y"),
        (dict(X=np.full((5, 2), np.nan)), ValueError, "X"),
        (dict(random_state="seed"), TypeError, "random_state"),
    ],
)
def test_errors_name_the_parameter(kwargs, exc, name):
    args = dict(X=np.zeros((5, 2)), y=np.zeros(5), epsilon=1.0, delta=0.0, max_queries=3)
    args.update(kwargs)
    with pytest.raises(exc, match=name):
        learning.SQOracle(**args)


def test_max_queries_is_required():
    with pytest.raises(TypeError, match="max_queries"):
        learning.SQOracle(np.zeros((5, 2)), np.zeros(5), 1.0)


def test_bad_phi(data):
    X, y = data
    oracle = learning.SQOracle(X, y, 1.0, max_queries=5)
    with pytest.raises(TypeError, match="phi"):
        oracle.query(0.5)
    with pytest.raises(ValueError, match="phi"):
        oracle.query(lambda X, y: np.zeros(3))
    assert oracle.queries_answered == 0


def test_exported():
    assert fe.learning.SQOracle is learning.SQOracle


# ---------------------------------------------------------------------------
# Private PAC learner over a finite class (exponential mechanism)
# ---------------------------------------------------------------------------
from fasterm.learning import pac_learner_bound, private_pac_learner, private_pac_learner_from_callables  # noqa: E402


def _threshold_class(n=400, k=64, seed=0, flip=0.1):
    """1-D thresholds h_t(x) = [x > t] on noisy labels: OPT is about `flip`."""
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    flips = rng.random(n) < flip
    y = np.where(flips, 1 - (x > 0.37), (x > 0.37)).astype(float)
    thresholds = np.linspace(0, 1, k)
    preds = (x[None, :] > thresholds[:, None]).astype(float)
    return preds, y


def test_pac_learner_selection_probabilities_match_exponential_mechanism():
    preds, y = _threshold_class(n=50, k=6)
    n = y.size
    err = (preds != y).mean(axis=1)
    eps = 2.0
    p = np.exp(-eps * (err - err.min()) / (2 / n))
    p /= p.sum()
    rng = np.random.default_rng(5)
    counts = np.bincount([private_pac_learner(preds, y, eps, random_state=rng) for _ in range(30000)],
                         minlength=6)
    def pvalue(probs):
        keep = probs * 30000 > 5
        chi2 = (((counts - 30000 * probs) ** 2) / (30000 * probs))[keep].sum()
        return stats.chi2.sf(chi2, keep.sum() - 1)

    assert pvalue(p) > 1e-3
    # power: the frequencies reject the distribution of a 30% larger epsilon
    q = np.exp(-1.3 * eps * (err - err.min()) / (2 / n))
    assert pvalue(q / q.sum()) < 1e-6


@pytest.mark.parametrize("eps,n", [(0.5, 400), (1.0, 2000), (4.0, 300)])
def test_pac_learner_within_theorem_bound(eps, n):
    preds, y = _threshold_class(n=n, k=128, seed=1)
    err = (preds != y).mean(axis=1)
    beta = 0.05
    bound = err.min() + pac_learner_bound(128, n, eps, beta)
    rng = np.random.default_rng(2)
    chosen = np.array([err[private_pac_learner(preds, y, eps, random_state=rng)] for _ in range(400)])
    # at most a beta fraction may exceed the bound (binomial slack: 5 sd)
    assert np.mean(chosen > bound) <= beta + 5 * np.sqrt(beta * (1 - beta) / 400)
    assert pac_learner_bound(128, n, eps, beta) == pytest.approx(2 * (np.log(128) + np.log(20)) / (eps * n))


def test_pac_learner_from_callables_and_errors():
    rng = np.random.default_rng(0)
    X = rng.random((300, 1))
    y = (X[:, 0] > 0.5).astype(float)
    hyps = [lambda X, t=t: (X[:, 0] > t).astype(float) for t in (0.1, 0.5, 0.9)]
    idx, h = private_pac_learner_from_callables(hyps, X, y, 50.0, random_state=1)
    assert idx == 1 and h is hyps[1]
    with pytest.raises(ValueError, match="epsilon"):
        private_pac_learner(np.zeros((2, 3)), np.zeros(3), 0.0)
    with pytest.raises(ValueError, match="y"):
        private_pac_learner(np.zeros((2, 3)), np.zeros(4), 1.0)
    with pytest.raises(ValueError, match="predictions"):
        private_pac_learner(np.zeros(3), np.zeros(3), 1.0)
    with pytest.raises(TypeError, match="hypotheses"):
        private_pac_learner_from_callables([1, 2], X, y, 1.0)
    with pytest.raises(ValueError, match="hypothesis 0"):
        private_pac_learner_from_callables([lambda X: np.zeros(2)], X, y, 1.0)
