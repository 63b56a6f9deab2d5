"""The purification lemma of docs/pure.rst, checked on an exact instance.

Lemma (docs/pure.rst, "Purification"; the idea of Lin, Wang, Ma & Wang 2025):
if M is (ε₁, δ)-DP with outputs in a set Θ of diameter D_Θ and N has density
∝ exp(−‖v‖/β), then M + N is (log(e^{ε₁} + δ·e^{D_Θ/β}), 0)-DP.  The
comparison of pure-ε candidates (``experiments/pure_candidates.py``, ``pur(L)``)
rests on it.

Instance, computed here with scipy's quadrature only (nothing from fasterm):
M(D) = clip(σZ, −1, 1), M(D') = clip(1 + σZ, −1, 1) (Θ = [−1, 1], D_Θ = 2; two
atoms and a density), δ(ε₁) the exact hockey-stick divergence of this pair in
both directions, and the exact densities of M + Lap(β) on a grid of outputs
(beyond ±1 the ratio is constant).  The worst log-ratio must stay within the
lemma's bound; and in the sharp cases it exceeds both ε₁ (the δ term is
needed) and the bound with D_Θ/2 in place of D_Θ (a radius for the diameter
would be wrong).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm


def _clipped_gaussian(sigma, shift):
    """Law of clip(shift + σZ, −1, 1): (mass at −1, density on (−1, 1), mass at +1)."""
    return (float(norm.cdf((-1.0 - shift) / sigma)), lambda t: norm.pdf((t - shift) / sigma) / sigma,
            float(norm.sf((1.0 - shift) / sigma)))


def _hockey_stick(P, Q, eps1):
    """sup_A P(A) − e^{ε₁}Q(A): the smallest δ for this ordered pair."""
    a0, p, a1 = P
    b0, q, b1 = Q
    e = math.exp(eps1)
    cont = integrate.quad(lambda t: max(p(t) - e * q(t), 0.0), -1.0, 1.0, limit=200, epsabs=1e-13)[0]
    return cont + max(a0 - e * b0, 0.0) + max(a1 - e * b1, 0.0)


def _density_after_laplace(P, beta, z):
    a0, p, a1 = P

    def k(v):
        return math.exp(-abs(v) / beta) / (2.0 * beta)
    kink = [min(max(z, -1.0), 1.0)]
    cont = integrate.quad(lambda t: k(z - t) * p(t), -1.0, 1.0, points=kink, limit=200, epsabs=1e-14)[0]
    return cont + a0 * k(z + 1.0) + a1 * k(z - 1.0)


@pytest.mark.parametrize("sigma, eps1, beta, sharp", [
    (0.5, 1.0, 0.25, True), (0.5, 2.0, 0.25, True), (0.5, 0.25, 0.5, True),
    (1.0, 0.25, 0.5, False), (1.0, 1.0, 1.0, False), (2.0, 0.25, 2.0, False),
])
def test_purification_lemma(sigma, eps1, beta, sharp):
    P, Q = _clipped_gaussian(sigma, 0.0), _clipped_gaussian(sigma, 1.0)
    delta = max(_hockey_stick(P, Q, eps1), _hockey_stick(Q, P, eps1))
    assert delta > 0.0
    worst = max(abs(math.log(_density_after_laplace(P, beta, z) / _density_after_laplace(Q, beta, z)))
                for z in np.linspace(-3.0, 3.0, 61))
    diameter = 2.0
    bound = math.log(math.exp(eps1) + delta * math.exp(diameter / beta))
    assert worst <= bound * (1.0 + 1e-9)
    if sharp:
        assert worst > eps1
        assert worst > math.log(math.exp(eps1) + delta * math.exp(diameter / 2.0 / beta))
