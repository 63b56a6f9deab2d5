"""fasterm.online: compiled RWM against a slow reference, batch == streaming,
numerical range, regret bounds (Theorems 11.1, 11.3, 11.6), calibration, errors.

The reference below is the textbook algorithm written out in plain Python:
weights exp(−η(L_i − min L)) from cumulative losses summed in order, one
uniform ``Generator.random()`` per draw, inversion over the running sum.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import fasterm as fe
from fasterm import accounting, online
from fasterm.learning import _online

# ---------------------------------------------------------------------------
# Reference
# ---------------------------------------------------------------------------


def rwm_reference(L, eta, rng, lo=-math.inf, hi=math.inf):
    """Actions of RWM(η) over the rows of L, drawing u = rng.random() per round."""
    T, k = L.shape
    cum = [0.0] * k
    actions = []
    for t in range(T):
        m = min(cum)
        w = [math.exp(-eta * (c - m)) for c in cum]
        target = rng.random() * math.fsum(w)
        acc, a = 0.0, None
        for i, wi in enumerate(w):
            acc += wi
            if acc > target:
                a = i
                break
        if a is None:  # rounding at the very end: the last positive weight
            a = max(i for i, wi in enumerate(w) if wi > 0)
        actions.append(a)
        cum = [c + min(max(float(x), lo), hi) for c, x in zip(cum, L[t])]
    return np.array(actions)


def reference_probabilities(cum, eta):
    z = -eta * (cum - cum.min())
    p = np.exp(z)
    return p / p.sum()


def expected_regret(L, eta, lo=-math.inf, hi=math.inf):
    """(1/T) Σ_t ⟨p_t, ℓ_t⟩ − min_i (1/T) Σ_t ℓ_{t,i}: the regret averaged over the algorithm."""
    Lc = np.clip(L, lo, hi)
    cum = np.zeros(L.shape[1])
    total = 0.0
    for row in Lc:
        total += reference_probabilities(cum, eta) @ row
        cum += row
    return (total - cum.min()) / L.shape[0]


def one_good_expert(T, k):
    """Expert 0 never loses, every other expert always does: the learner pays
    ≈ ln k/η before it has found expert 0, close to Theorem 11.1's second term."""
    L = np.ones((T, k))
    L[:, 0] = 0.0
    return L


def greedy_adversary(T, k, eta):
    """Loss 1 on the expert RWM(η) currently favours most, 0 elsewhere.

    The weights are deterministic, so this is a fixed (oblivious) sequence; it
    punishes any learner that concentrates on a leader."""
    r = online.RWM(k, eta, random_state=0)
    L = np.zeros((T, k))
    for t in range(T):
        L[t, int(np.argmax(r.weights))] = 1.0
        r.update(L[t])
    return L


def theorem_11_1(eta, k, T):
    return eta + math.log(k) / (eta * T)


# ---------------------------------------------------------------------------
# Exactness: compiled vs reference, batch vs streaming
# ---------------------------------------------------------------------------

# (k, eta, loss generator): small eta takes the incremental-weights path,
# large eta (or a wide loss spread) the exact exp path; k not a multiple of
# the vector width or block size exercises the tails.
CASES = [
    (1, 0.3, lambda g, T, k: g.random((T, k))),
    (5, 0.02, lambda g, T, k: g.random((T, k))),
    (7, 0.1, lambda g, T, k: g.random((T, k))),
    (33, 1.5, lambda g, T, k: g.random((T, k))),
    (40, 0.01, lambda g, T, k: g.uniform(-1, 1, (T, k))),
    (100, 0.05, lambda g, T, k: g.standard_normal((T, k)) * 3.0),
    (9, 50.0, lambda g, T, k: g.random((T, k))),
]


@pytest.mark.parametrize("k, eta, gen", CASES)
def test_run_rwm_matches_reference(k, eta, gen):
    g = np.random.default_rng(k)
    L = gen(g, 800, k)
    rng = np.random.default_rng(123)
    ref = rwm_reference(L, eta, np.random.default_rng(123))
    run = online.run_rwm(L, eta, random_state=rng)
    np.testing.assert_array_equal(run.actions, ref)
    np.testing.assert_array_equal(run.losses, L[np.arange(800), ref])
    np.testing.assert_allclose(run.expert_losses, L.sum(axis=0), rtol=1e-12, atol=1e-12)
    # exactly one uniform per round
    twin = np.random.default_rng(123)
    twin.random(800)
    assert rng.random() == twin.random()


@pytest.mark.parametrize("k, eta, gen", CASES)
def test_batch_equals_streaming(k, eta, gen):
    L = gen(np.random.default_rng(7 + k), 600, k)
    batch = online.run_rwm(L, eta, random_state=5)
    r = online.RWM(k, eta, random_state=5)
    streamed = []
    for row in L:
        streamed.append(r.choose())
        r.update(row)
    np.testing.assert_array_equal(batch.actions, streamed)
    # RWM.run continues a streaming learner with the same draws
    r2 = online.RWM(k, eta, random_state=5)
    first = []
    for row in L[:250]:
        first.append(r2.choose())
        r2.update(row)
    rest = r2.run(L[250:])
    np.testing.assert_array_equal(np.concatenate([first, rest.actions]), batch.actions)
    np.testing.assert_array_equal(r.cumulative_losses, r2.cumulative_losses)
    np.testing.assert_array_equal(r.weights, r2.weights)


def test_float32_and_float64_kernels_agree():
    L32 = np.random.default_rng(0).random((2000, 37), dtype=np.float32)
    a = online.run_rwm(L32, 0.07, random_state=3)
    b = online.run_rwm(L32.astype(np.float64), 0.07, random_state=3)
    np.testing.assert_array_equal(a.actions, b.actions)
    np.testing.assert_array_equal(a.expert_losses, b.expert_losses)


def test_noncontiguous_and_integer_input():
    L = np.random.default_rng(1).integers(0, 2, (500, 12))
    a = online.run_rwm(L, 0.1, random_state=0)
    b = online.run_rwm(np.asfortranarray(L.astype(float)), 0.1, random_state=0)
    c = online.run_rwm(np.repeat(L.astype(float), 2, axis=1)[:, ::2], 0.1, random_state=0)
    np.testing.assert_array_equal(a.actions, b.actions)
    np.testing.assert_array_equal(a.actions, c.actions)


@pytest.mark.parametrize("eta, scale", [(0.01, 1.0), (0.2, 1.0), (3.0, 1.0), (0.05, 20.0)])
def test_weights_match_closed_form(eta, scale):
    k = 23
    L = np.random.default_rng(11).uniform(-scale, scale, (300, k))
    r = online.RWM(k, eta)
    np.testing.assert_array_equal(r.weights, np.full(k, 1.0 / k))  # uniform before any loss
    cum = np.zeros(k)
    for row in L:
        r.update(row)
        cum += row
        np.testing.assert_allclose(r.weights, reference_probabilities(cum, eta), rtol=1e-12, atol=0)
        assert r.weights.sum() == pytest.approx(1.0, abs=1e-14)
    np.testing.assert_allclose(r.cumulative_losses, cum, rtol=1e-13)


def test_choose_samples_the_weights():
    from scipy import stats

    k = 6
    r = online.RWM(k, 0.8, random_state=2)
    r.update(np.array([0.0, 0.5, 1.0, 1.5, 2.0, 0.25]))
    p = r.weights
    draws = np.array([r.choose() for _ in range(30000)])
    counts = np.bincount(draws, minlength=k)
    assert stats.chisquare(counts, p * draws.size).pvalue > 1e-3
    # and a wrong distribution is detected at this sample size
    wrong = np.roll(p, 1)
    assert stats.chisquare(counts, wrong * draws.size).pvalue < 1e-9


def test_exp_kernel_accuracy():
    g = np.random.default_rng(0)
    x = np.concatenate([-g.random(200000) * 707.0, -g.random(100000), -np.logspace(-300, 2, 2000), [0.0, -0.0]])
    got = _online.exp_nonpos(x)
    want = np.exp(x)
    ulps = np.abs(got - want) / np.spacing(want)
    assert ulps.max() <= 1.0
    assert _online.exp_nonpos(np.array([0.0]))[0] == 1.0
    np.testing.assert_array_equal(_online.exp_nonpos(np.array([-707.5, -800.0, -1e300, -np.inf])), 0.0)


# ---------------------------------------------------------------------------
# Numerical range: 1e6 rounds, large eta
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("low, high", [(0.0, 1.0), (-1.0, 1.0)])
def test_million_rounds_large_eta(low, high):
    T, k, eta = 1_000_000, 3, 50.0
    g = np.random.default_rng(4)
    means = np.array([0.5, 0.45, 0.55]) * (high - low) + low
    L = np.clip(means + (high - low) * 0.3 * g.standard_normal((T, k)), low, high)
    r = online.RWM(k, eta, random_state=0)
    run = r.run(L)
    w = r.weights
    assert np.all(np.isfinite(w)) and w.sum() == pytest.approx(1.0)
    cum = L.sum(axis=0)
    # the naive weights exp(-eta L_i) underflow (or overflow) long before this
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        naive = np.exp(-eta * cum)
        assert not np.all(np.isfinite(naive / naive.sum()))
    np.testing.assert_allclose(w, reference_probabilities(r.cumulative_losses, eta), rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(r.cumulative_losses, cum, rtol=1e-9)
    # the learner has settled on the best expert
    assert np.mean(run.actions[-10000:] == 1) > 0.99
    assert run.regret < 0.01


# ---------------------------------------------------------------------------
# Regret: Theorem 11.1
# ---------------------------------------------------------------------------


def test_regret_one_good_expert():
    # Theorem 11.1: E[Regret] <= eta + ln k/(eta T).  Here the learner pays
    # ~ln k/(eta T), so the bound is nearly attained and a wrong learner fails.
    T, k = 4000, 8
    eta = math.sqrt(math.log(k) / T)
    L = one_good_expert(T, k)
    bound = theorem_11_1(eta, k, T)
    regrets = [online.run_rwm(L, eta, random_state=s).regret for s in range(20)]
    exact = expected_regret(L, eta)
    assert np.mean(regrets) <= bound
    assert exact <= bound
    assert exact > 0.4 * bound  # the test is not vacuous
    assert abs(np.mean(regrets) - exact) < 0.1 * bound


def test_regret_greedy_adversary():
    T, k = 3000, 4
    eta = math.sqrt(math.log(k) / T)
    L = greedy_adversary(T, k, eta)
    bound = theorem_11_1(eta, k, T)
    regrets = [online.run_rwm(L, eta, random_state=s).regret for s in range(20)]
    assert np.mean(regrets) <= bound
    assert expected_regret(L, eta) <= bound
    # following the leader deterministically would pay ~1 per round here
    leader = L[np.arange(T), np.argmax(np.vstack([np.zeros(k), np.cumsum(-L, axis=0)[:-1]]), axis=1)]
    assert leader.mean() - L.sum(0).min() / T > 10 * bound


def test_regret_switching_sequence():
    # the best expert changes every T/4 rounds
    T, k = 4000, 4
    eta = math.sqrt(math.log(k) / T)
    L = np.ones((T, k))
    for j in range(4):
        L[j * T // 4:(j + 1) * T // 4, j] = 0.0
    L[:, 3] = 0.6  # a steady expert: the best in hindsight
    bound = theorem_11_1(eta, k, T)
    regrets = [online.run_rwm(L, eta, random_state=s).regret for s in range(20)]
    assert np.mean(regrets) <= bound
    assert expected_regret(L, eta) <= bound


def test_regret_stochastic():
    T, k = 5000, 10
    eta = math.sqrt(math.log(k) / T)
    means = np.linspace(0.2, 0.8, k)
    bound = theorem_11_1(eta, k, T)
    regrets = []
    for s in range(20):
        L = (np.random.default_rng(1000 + s).random((T, k)) < means).astype(float)
        regrets.append(online.run_rwm(L, eta, random_state=s).regret)
    assert np.mean(regrets) <= bound
    # uniform play would have regret ~ mean(means) - min(means) = 0.3
    assert 0.3 > 5 * bound


def test_regret_bound_function():
    assert online.regret_bound(0.1, 4, 100) == pytest.approx(0.1 + math.log(4) / 10.0)
    assert online.regret_bound(0.1, 4, 100, (-1, 1)) == pytest.approx(0.4 + math.log(4) / 10.0)


# ---------------------------------------------------------------------------
# PrivateRWM: calibration and Theorem 11.3
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.1, 1.0, 8.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-5, 0.1])
@pytest.mark.parametrize("T", [1, 10, 1000, 10**6])
@pytest.mark.parametrize("sens", [1.0, 2.0, 0.5])
def test_exact_calibration_plugs_back(eps, delta, T, sens):
    cal = online.calibrate_eta(eps, delta, T, loss_sensitivity=sens)
    eps0 = 2.0 * cal.eta * sens
    assert eps0 == pytest.approx(cal.epsilon_round, rel=1e-15)
    basic = T * eps0
    adv = accounting.advanced_composition(eps0, 0.0, T, delta)[0]
    assert min(basic, adv) == pytest.approx(eps, rel=1e-9)
    assert min(basic, adv) <= eps  # never over budget, not even by an ulp
    assert cal.epsilon == pytest.approx(eps, rel=1e-9)
    if cal.composition == "advanced":
        assert adv < basic and cal.delta == delta
    else:
        assert basic <= adv and cal.delta == 0.0


def test_pure_calibration_is_basic_composition():
    cal = online.calibrate_eta(2.0, 0.0, 50, loss_sensitivity=2.0)
    assert cal.composition == "basic" and cal.delta == 0.0
    assert cal.eta == pytest.approx(2.0 / (2 * 2.0 * 50), rel=1e-15)
    for eps, T in [(0.1, 11), (0.2, 44), (0.7, 10), (1.0, 49)]:  # T * (eps / T) > eps for the first two
        cal = online.calibrate_eta(eps, 0.0, T)
        assert T * cal.epsilon_round <= eps and cal.epsilon <= eps


@pytest.mark.parametrize("eps, delta, T", [(1.0, 1e-5, 1000), (0.5, 1e-8, 10**5), (2.0, 0.01, 37)])
def test_closed_form_calibration(eps, delta, T):
    cal = online.calibrate_eta(eps, delta, T, calibration="closed_form")
    assert cal.eta == pytest.approx(eps / math.sqrt(32 * T * math.log(1 / delta)), rel=1e-14)
    cal2 = online.calibrate_eta(eps, delta, T, loss_sensitivity=2.0, calibration="closed_form")
    assert cal2.eta == pytest.approx(cal.eta / 2, rel=1e-14)
    assert cal.epsilon <= eps
    # the exact calibration is never worse
    assert online.calibrate_eta(eps, delta, T).eta >= cal.eta


def test_closed_form_refused_when_it_is_not_private():
    # delta near 1: dropping T eps0 (e^eps0 - 1) is no longer harmless
    with pytest.raises(ValueError, match="closed_form"):
        online.calibrate_eta(10.0, 0.5, 100, calibration="closed_form")
    with pytest.raises(ValueError, match="delta"):
        online.calibrate_eta(1.0, 0.0, 100, calibration="closed_form")


def test_private_rwm_records_calibration():
    p = online.PrivateRWM(5, 1000, 1.0, 1e-6, loss_range=(-1, 1))
    assert p.calibration.loss_sensitivity == 2.0
    assert p.eta == online.calibrate_eta(1.0, 1e-6, 1000, loss_sensitivity=2.0).eta
    assert (p.epsilon, p.delta) == (p.calibration.epsilon, p.calibration.delta)
    assert p.regret_bound == pytest.approx(p.eta * 4 + math.log(5) / (p.eta * 1000))
    assert not hasattr(p, "weights")
    # the documented signature: random_state is the sixth positional parameter
    a = online.PrivateRWM(5, 10, 1.0, 1e-6, (0, 1), 7).run(np.zeros((10, 5))).actions
    b = online.PrivateRWM(5, 10, 1.0, 1e-6, random_state=7).run(np.zeros((10, 5))).actions
    np.testing.assert_array_equal(a, b)


def test_private_rwm_theorem_11_3_closed_form():
    # Theorem 11.3 (first line), losses in [0, 1], eta = eps/sqrt(32 T ln(1/delta)):
    #   E[Regret] <= eps/sqrt(32 T ln(1/delta)) + sqrt(32 ln(1/delta)) ln k / (eps sqrt(T))
    eps, delta, k, T = 1.0, 1e-3, 4, 6000
    bound = eps / math.sqrt(32 * T * math.log(1 / delta)) + math.sqrt(32 * math.log(1 / delta)) * math.log(k) / (
        eps * math.sqrt(T)
    )
    second_line = math.sqrt(128 * math.log(1 / delta)) * math.log(k) / (eps * math.sqrt(T))
    L = one_good_expert(T, k)
    learners = [online.PrivateRWM(k, T, eps, delta, calibration="closed_form", random_state=s) for s in range(40)]
    regrets = [p.run(L).evaluate_nonprivate(L).regret for p in learners]
    assert learners[0].regret_bound == pytest.approx(bound, rel=1e-12)
    assert np.mean(regrets) <= bound <= second_line
    exact = expected_regret(L, learners[0].eta)
    assert exact <= bound and exact > 0.5 * bound


def test_private_rwm_theorem_11_3_exact_calibration():
    # Theorem 11.1 at the calibrated eta (the argument of Theorem 11.3), and,
    # since eta_closed <= eta_exact <= sqrt(ln k / T), also Theorem 11.3's
    # closed-form bound.
    eps, delta, k, T = 1.0, 1e-3, 4, 1500
    p0 = online.PrivateRWM(k, T, eps, delta)
    eta_closed = eps / math.sqrt(32 * T * math.log(1 / delta))
    assert eta_closed <= p0.eta <= math.sqrt(math.log(k) / T)
    thm_11_3 = theorem_11_1(eta_closed, k, T)
    for L in (one_good_expert(T, k), greedy_adversary(T, k, p0.eta)):
        regrets = [online.PrivateRWM(k, T, eps, delta, random_state=s).run(L).evaluate_nonprivate(L).regret
                   for s in range(40)]
        assert np.mean(regrets) <= p0.regret_bound <= thm_11_3
        assert expected_regret(L, p0.eta) <= p0.regret_bound


def test_private_rwm_clips_to_declared_range():
    g = np.random.default_rng(0)
    raw = g.normal(0.5, 2.0, (700, 6))
    a = online.PrivateRWM(6, 700, 1.0, 1e-5, random_state=9).run(raw)
    ref = rwm_reference(raw, a.eta, np.random.default_rng(9), lo=0.0, hi=1.0)
    np.testing.assert_array_equal(a.actions, ref)
    b = online.PrivateRWM(6, 700, 1.0, 1e-5, random_state=9).run(np.clip(raw, 0, 1))
    np.testing.assert_array_equal(a.actions, b.actions)
    # the release is the actions and η only; the losses are the caller's, evaluated on demand
    assert not hasattr(a, "losses") and not hasattr(a, "expert_losses")
    ea, eb = a.evaluate_nonprivate(raw), b.evaluate_nonprivate(np.clip(raw, 0, 1))
    np.testing.assert_array_equal(ea.losses, eb.losses)
    np.testing.assert_array_equal(ea.expert_losses, eb.expert_losses)
    np.testing.assert_array_equal(ea.losses, np.clip(raw, 0, 1)[np.arange(700), a.actions])
    assert ea.losses.min() >= 0 and ea.losses.max() <= 1
    # streaming gives the same actions and clips the same way
    p = online.PrivateRWM(6, 700, 1.0, 1e-5, random_state=9)
    streamed = []
    for row in raw:
        streamed.append(p.choose())
        p.update(row)
    np.testing.assert_array_equal(streamed, a.actions)


def test_private_rwm_run_releases_the_actions_only():
    # the run holds the actions and public constants; the losses paid and the regret come from the
    # caller's losses on request, and equal those of the non-private RWM replaying the actions
    g = np.random.default_rng(5)
    L = g.uniform(-0.5, 1.5, (50, 4))
    run = online.PrivateRWM(4, 50, 1.0, 1e-5, random_state=2).run(L)
    assert sorted(f.name for f in dataclasses.fields(run)) == ["actions", "eta", "loss_range"]
    ev = run.evaluate_nonprivate(L)
    Lc = np.clip(L, 0, 1)
    np.testing.assert_array_equal(ev.losses, Lc[np.arange(50), run.actions])
    np.testing.assert_array_equal(ev.expert_losses, Lc.sum(axis=0))
    assert ev.regret == pytest.approx((Lc[np.arange(50), run.actions].sum() - Lc.sum(axis=0).min()) / 50)
    with pytest.raises(ValueError, match="loss_matrix"):
        run.evaluate_nonprivate(L[:10])
    with pytest.raises(ValueError, match="loss_matrix"):
        run.evaluate_nonprivate(L[:, :1] if run.actions.max() > 0 else L[:, :0])


def test_private_rwm_refuses_extra_rounds():
    p = online.PrivateRWM(3, 5, 1.0, 1e-5, random_state=0)
    p.run(np.zeros((3, 3)))
    assert p.rounds_remaining == 2
    with pytest.raises(accounting.BudgetExceededError, match="rounds=5"):
        p.run(np.zeros((3, 3)))
    assert p.rounds_remaining == 2  # nothing was spent
    p.choose()
    p.choose()
    with pytest.raises(ValueError, match="rounds=5"):
        p.choose()


# ---------------------------------------------------------------------------
# Linear learner: Algorithm 17, Theorem 11.6
# ---------------------------------------------------------------------------


def test_linear_learner_theorem_11_6():
    d, n, beta = 8, 100_000, 0.05
    mu = np.array([0.2, -0.6, 0.45, 0.0, -0.25, 0.6, -0.45, 0.25])
    for s in range(8):
        g = np.random.default_rng(200 + s)
        S = np.where(g.random((n, d)) < (1 + mu) / 2, 1.0, -1.0)
        res = online.linear_learner(S, 1.0, 1e-5, random_state=s)
        assert res.w.sum() == pytest.approx(1.0) and np.all(res.w >= 0)
        bound = res.risk_bound(beta)
        assert res.w @ mu - mu.min() <= bound
    # a uniform theta (or one that chased the largest loss) would break it
    assert min(mu.mean(), mu.max()) - mu.min() > 2 * bound
    assert res.calibration.loss_sensitivity == 2.0
    assert res.eta == pytest.approx(res.calibration.epsilon_round / 4)


def test_linear_learner_is_rwm_on_clipped_rows():
    g = np.random.default_rng(3)
    S = g.uniform(-2, 2, (3000, 10)).astype(np.float32)
    res = online.linear_learner(S, 1.0, 1e-5, random_state=4)
    p = online.PrivateRWM(10, 3000, 1.0, 1e-5, loss_range=(-1, 1), random_state=4)
    run = p.run(np.clip(S, -1, 1))
    assert p.eta == res.eta
    np.testing.assert_array_equal(res.counts, np.bincount(run.actions, minlength=10))
    np.testing.assert_array_equal(res.theta, res.counts / 3000)


def test_linear_learner_closed_form_and_pure():
    S = np.zeros((100, 3))
    cf = online.linear_learner(S, 1.0, 1e-5, calibration="closed_form")
    assert cf.eta == pytest.approx(1.0 / math.sqrt(32 * 100 * math.log(1e5)) / 2)
    pure = online.linear_learner(S, 1.0, 0.0)
    assert pure.delta == 0.0 and pure.eta == pytest.approx(1.0 / (4 * 100))


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, exc, name",
    [
        (lambda: online.RWM(0, 0.1), ValueError, "n_experts"),
        (lambda: online.RWM(2.5, 0.1), TypeError, "n_experts"),
        (lambda: online.RWM(3, 0.0), ValueError, "eta"),
        (lambda: online.RWM(3, math.nan), ValueError, "eta"),
        (lambda: online.RWM(3, math.inf), ValueError, "eta"),
        (lambda: online.RWM(3, 0.1, random_state="x"), TypeError, "random_state"),
        (lambda: online.run_rwm(np.zeros(5), 0.1), ValueError, "loss_matrix"),
        (lambda: online.run_rwm(np.zeros((5, 0)), 0.1), ValueError, "loss_matrix"),
        (lambda: online.run_rwm(np.array([["a"]]), 0.1), TypeError, "loss_matrix"),
        (lambda: online.RWM(3, 0.1).update([1.0, 2.0]), ValueError, "losses"),
        (lambda: online.RWM(3, 0.1).update([1.0, math.nan, 0.0]), ValueError, "losses"),
        (lambda: online.RWM(3, 0.1).run(np.zeros((4, 2))), ValueError, "loss_matrix"),
        (lambda: online.PrivateRWM(3, 0, 1.0, 1e-5), ValueError, "rounds"),
        (lambda: online.PrivateRWM(3, 10, 0.0, 1e-5), ValueError, "epsilon"),
        (lambda: online.PrivateRWM(3, 10, 1.0, 1.0), ValueError, "delta"),
        (lambda: online.PrivateRWM(3, 10, 1.0, 1e-5, loss_range=(1, 0)), ValueError, "loss_range"),
        (lambda: online.PrivateRWM(3, 10, 1.0, 1e-5, loss_range=(0, math.inf)), ValueError, "loss_range"),
        (lambda: online.PrivateRWM(3, 10, 1.0, 1e-5, loss_range=5), TypeError, "loss_range"),
        (lambda: online.PrivateRWM(3, 10, 1.0, 1e-5, calibration="x"), ValueError, "calibration"),
        (lambda: online.PrivateRWM(3, 10, 1.0, 1e-5, loss_range=(0, 2), calibration="closed_form").update([0]),
         ValueError, "losses"),
        (lambda: online.linear_learner(np.zeros(4), 1.0, 1e-5), ValueError, "S"),
        (lambda: online.linear_learner(np.zeros((4, 2)), -1.0, 1e-5), ValueError, "epsilon"),
        (lambda: online.calibrate_eta(1.0, 1e-5, 10, loss_sensitivity=0), ValueError, "loss_sensitivity"),
        (lambda: online.LinearLearnerResult.risk_bound(None, 0.0), ValueError, "beta"),
    ],
)
def test_errors_name_the_parameter(call, exc, name):
    with pytest.raises(exc, match=name):
        call()


def test_nonfinite_matrix_rolls_back():
    L = np.random.default_rng(0).random((400, 5))
    L[300, 2] = np.inf
    r = online.RWM(5, 0.1, random_state=1)
    r.update(np.ones(5))
    state = r._rng.bit_generator.state
    w = r.weights
    with pytest.raises(ValueError, match="finite"):
        r.run(L)
    assert r._rng.bit_generator.state == state
    np.testing.assert_array_equal(r.weights, w)
    assert r.rounds_played == 1
    p = online.PrivateRWM(5, 1000, 1.0, 1e-5, random_state=1)
    L[300, 2] = np.nan
    with pytest.raises(ValueError, match="finite"):
        p.run(L)
    assert p.rounds_remaining == 1000
    # clipping must not hide an infinity
    L[300, 2] = -np.inf
    with pytest.raises(ValueError, match="finite"):
        p.run(L)
    g = np.random.default_rng(5)
    before = g.bit_generator.state
    with pytest.raises(ValueError, match="S"):
        online.linear_learner(L, 1.0, 1e-5, random_state=g)
    assert g.bit_generator.state == before


def test_exports():
    assert fe.online.RWM is online.RWM
    assert {"online", "learning"} <= set(fe.__all__)
