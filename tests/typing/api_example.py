"""The public API, called the way a typed user program calls it.

Checked statically by ``mypy --strict`` in CI (.ci/run) against the installed
package and its stubs; run by tests/package/test_typing_example.py, so the calls are
also correct at run time.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

import fasterm as fe
from fasterm import accounting, datasets, learning, losses, mechanisms, noise, online
from fasterm.erm.expmech import ExpMechResult
from fasterm.erm.optimize import OptimizeResult


def main() -> dict[str, float]:
    rng = np.random.default_rng(0)
    X, y01 = datasets.load_breast_cancer(scaled=True)
    X_train, X_test, y_train, y_test = datasets.train_test_split(X, y01, test_size=0.3, random_state=0)
    y_pm: npt.NDArray[np.float64] = 2.0 * y_train - 1.0
    d = X.shape[1]

    # feasible sets and losses
    ball = fe.L2Ball(radius=5.0, dim=d)
    box = fe.Box(low=-1.0, high=1.0, dim=d)
    simplex = fe.Simplex(dim=d, total=1.0)
    l1 = fe.L1Ball(radius=2.0, dim=d)
    v = rng.normal(size=d)
    projected: list[npt.NDArray[np.float64]] = [c.project(v) for c in (ball, box, simplex, l1)]
    inside = ball.contains(projected[0])
    loss = losses.Logistic()
    G: float = loss.lipschitz(1.0)
    sens: float = loss.sensitivity(1.0, radius=ball.radius)
    value: float = loss.value(ball.center, X_train, y_pm)
    grad: npt.NDArray[np.float64] = loss.grad_sum(ball.center, X_train, y_pm, clip=0.5)

    # optimisation, private and not
    res: OptimizeResult = fe.noisy_pgd(loss, X_train, y_pm, ball, epsilon=1.0, delta=1e-6,
                                       noise="gaussian", data_norm=1.0, random_state=0)
    res_pure = fe.noisy_pgd(losses.Hinge(), X_train, y_pm, ball, 1.0, data_norm=1.0,
                            calibration="pure", random_state=rng)
    base = fe.pgd(loss, X_train, y_pm, ball, steps=50)
    beta: float = loss.smoothness(1.0)
    res_gd: OptimizeResult = fe.noisy_gd(loss, X_train, y_pm, ball, 1.0, 1e-6, data_norm=1.0,
                                         accelerate=True, random_state=0)
    res_sgd: OptimizeResult = fe.noisy_sgd(loss, X_train, y_pm, ball, 1.0, 1e-6, batch_size=64.0,
                                           epochs=2.0, data_norm=1.0, random_state=0)
    em: ExpMechResult = fe.expmech_erm(loss, X_train[:100, :2], y_pm[:100], fe.L2Ball(2.0, 2),
                                       epsilon=1.0, data_norm=1.0, steps=20, random_state=0)

    # one-dimensional statistics
    x = rng.uniform(0.0, 100.0, size=500)
    med: float = fe.median(x, (0.0, 100.0), 0.5, random_state=0)
    med_rank = fe.median(x, (0.0, 100.0), 0.5, method="rank", random_state=0)
    q90: float = fe.quantile(x, 0.9, (0.0, 100.0), 0.5, random_state=0)
    avg: float = fe.mean(x, (0.0, 100.0), 0.5, random_state=0)

    # mechanisms and noise
    released = mechanisms.gaussian(X_train.mean(axis=0), l2_sensitivity=2 / len(X_train),
                                   epsilon=1.0, delta=1e-6, random_state=0)
    scalar = mechanisms.laplace(3.0, sensitivity=1.0, epsilon=1.0, random_state=0)
    vec = mechanisms.laplace_l2(np.zeros(4), l2_sensitivity=1.0, epsilon=1.0, delta=1e-6)
    exact = mechanisms.laplace(3.0, sensitivity=1.0, epsilon=1.0, random_state=0, secure=True)
    idx: int = mechanisms.exponential(np.array([3.0, 1.0, 2.0]), sensitivity=1.0, epsilon=1.0)
    lap: npt.NDArray[np.float64] = noise.laplace(10, 1.0, random_state=0)
    gau = noise.gaussian((2, 3), 0.5, random_state=0, dtype=np.float32)

    # accounting
    eps_b, delta_b = accounting.basic_composition([0.5, 0.5], [0.0, 1e-6])
    eps_a, delta_a = accounting.advanced_composition(epsilon=0.01, delta=0.0, k=1000, delta_prime=1e-6)
    eps_h, _ = accounting.heterogeneous_composition([0.1, 0.2], delta_prime=1e-6)
    sigma: float = accounting.calibrate_gaussian(1.0, 10, 1.0, 1e-6)
    z: float = accounting.calibrate_sgd_sigma(0.01, 100, 1.0, 1e-6)
    eps_sgd: float = accounting.sgd_epsilon(0.01, z, 100, 1e-6, neighbors="add_remove")
    rdp: npt.NDArray[np.float64] = accounting.rdp_subsampled_gaussian(0.01, z, 100)
    eps_rdp: float = accounting.rdp_epsilon(rdp, accounting.RDP_ORDERS, 1e-6)
    budget = accounting.BudgetAccountant(epsilon=1.0, delta=1e-6)
    budget.spend(0.5)
    remaining_eps, _ = budget.remaining

    # online learning
    L = rng.uniform(size=(200, 5))
    run = online.run_rwm(L, eta=0.05, random_state=0)
    rwm = online.RWM(n_experts=5, eta=0.1, random_state=0)
    a: int = rwm.choose()
    rwm.update(L[0])
    prwm = online.PrivateRWM(n_experts=5, rounds=10, epsilon=1.0, delta=1e-6, random_state=0)
    action: int = prwm.choose()
    prwm.update(L[0])
    lin = online.linear_learner(rng.uniform(-1, 1, size=(100, 4)), epsilon=1.0, delta=1e-6, random_state=0)
    theta: npt.NDArray[np.float64] = lin.w
    cal = online.calibrate_eta(1.0, 1e-6, rounds=100)

    # finite classes and statistical queries
    preds = rng.integers(0, 2, size=(8, 50))
    labels = rng.integers(0, 2, size=50)
    best: int = learning.private_pac_learner(preds, labels, epsilon=1.0, random_state=0)
    oracle = learning.SQOracle(X_train, y_train, epsilon=1.0, max_queries=2, random_state=0)
    answer: float = oracle.query(lambda Xq, yq: (yq > 0).astype(float))

    # scikit-learn estimators (fasterm[sklearn])
    clf = fe.DPLogisticRegression(epsilon=1.0, delta=1e-5, random_state=0, solver="auto")
    clf.fit(X_train, y_train)
    proba: npt.NDArray[np.float64] = clf.predict_proba(X_test)
    svc = fe.DPLinearSVC(epsilon=1.0, random_state=0).fit(X_train, y_train)
    reg = fe.DPLinearRegression(epsilon=1.0, label_bound=1.0, random_state=0)
    reg.fit(X_train, y_pm)
    pred: npt.NDArray[np.float64] = reg.predict(X_test)

    assert fe.__version__
    return {
        "inside": float(inside), "G": G, "sens": sens, "value": value, "grad": float(grad[0]),
        "pgd_eps": res.epsilon, "pgd_pure_eps": res_pure.epsilon, "pgd_w0": float(base.w[0]),
        "beta": beta, "gd_eps": res_gd.epsilon, "sgd_eps": res_sgd.epsilon, "sgd_sigma": z,
        "eps_sgd": eps_sgd, "eps_rdp": eps_rdp,
        "em_eps": em.epsilon, "median": med, "median_rank": med_rank, "q90": q90, "mean": avg,
        "released": float(np.asarray(released)[0]), "scalar": float(scalar), "secure": float(exact),
        "vec": float(np.asarray(vec)[0]), "idx": float(idx), "lap": float(lap[0]),
        "gau": float(gau[0, 0]), "eps_b": eps_b, "delta_b": delta_b, "eps_a": eps_a,
        "delta_a": delta_a, "eps_h": eps_h, "sigma": sigma, "remaining": remaining_eps,
        "run": float(run.actions[0]), "rwm": float(a), "prwm": float(action),
        "theta": float(theta.sum()), "eta": cal.eta, "best": float(best), "answer": answer,
        "proba": float(proba[0, 1]), "svc": float(svc.predict(X_test)[0]), "pred": float(pred[0]),
    }


if __name__ == "__main__":
    for k, val in main().items():
        print(f"{k:>12} {val:.6g}")
