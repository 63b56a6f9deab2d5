"""Multiclass SGD rules compared on development data (not the benchmark problem): docs/multiclass.rst.

    python experiments/multiclass_sgd_rules.py

Synthetic multinomial problems (rows in the unit ball, planted W, 80/20
splits) of other sizes than the benchmark's; ε = 1 and 0.3, two seeds each.
Candidates set fasterm.linear_model._multiclass's module constants (LR_MULTIPLE,
TAIL_AVERAGE, SGD_EPOCHS) and, for "clip 0.5", clip=0.5·X_aug; the mean
accuracy of each over the six cells decided the rule.
"""
import os

import numpy as np

if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:1])
import fasterm as fe
from fasterm.linear_model import _multiclass as M
def synth(n, d, K, scale, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)); X /= np.linalg.norm(X, axis=1, keepdims=True); X *= rng.uniform(0.3, 1.0, (n, 1))
    W = rng.standard_normal((d, K)); W *= scale / np.linalg.norm(W, axis=0)
    Z = X @ W; P = np.exp(Z - Z.max(1, keepdims=True)); P /= P.sum(1, keepdims=True)
    y = (P.cumsum(1) > rng.random((n, 1))).argmax(1)
    m = int(0.8 * n)
    return X[:m], y[:m], X[m:], y[m:]
sets = {"K5 d50 n40k": synth(50000, 50, 5, 25, 11), "K8 d80 n15k": synth(19000, 80, 8, 30, 12),
        "K12 d40 n200k": synth(250000, 40, 12, 25, 13)}
from sklearn.linear_model import LogisticRegression
for k, (a, b, c, d) in sets.items():
    print(k, "sklearn", round(LogisticRegression().fit(a, b).score(c, d), 4), flush=True)
cands = {"A declared": dict(LR_MULTIPLE=4.0, TAIL_AVERAGE=0.0, SGD_EPOCHS=1.0, clip="auto"),
         "B clip.5 lr2": dict(LR_MULTIPLE=2.0, TAIL_AVERAGE=0.0, SGD_EPOCHS=1.0, clip=0.5),
         "C B+tail": dict(LR_MULTIPLE=2.0, TAIL_AVERAGE=0.5, SGD_EPOCHS=1.0, clip=0.5),
         "D C+2x epochs": dict(LR_MULTIPLE=2.0, TAIL_AVERAGE=0.5, SGD_EPOCHS=2.0, clip=0.5),
         "E A+tail+2x": dict(LR_MULTIPLE=4.0, TAIL_AVERAGE=0.5, SGD_EPOCHS=2.0, clip="auto")}
for name, cfg in cands.items():
    cfg = dict(cfg)
    clip = cfg.pop("clip")
    for k_, v in cfg.items():
        setattr(M, k_, v)
    row = []
    for k, (a, b, c, d) in sets.items():
        for eps in (1.0, 0.3):
            cl = clip if clip == "auto" else clip * (1.0 + 0.25 ** 2) ** 0.5  # 0.5·X_aug
            accs = [fe.DPLogisticRegression(epsilon=eps, clip=cl, random_state=r).fit(a, b).score(c, d)
                    for r in range(2)]
            row.append(np.mean(accs))
    print(name, " ".join(f"{x:.4f}" for x in row), "mean", f"{np.mean(row):.4f}", flush=True)
