"""The README tour's accuracy figure: DPLogisticRegression(epsilon=1, delta=1e-5) on the tour's split.

The tour fits on ``train_test_split(X, y, test_size=0.3, random_state=0)`` of the
pre-scaled breast-cancer data with fresh noise (``random_state=None``), so its
score varies from run to run: this prints its distribution over noise seeds
0..N-1 for that split, the same for bounds= on the raw rows (the same map, so
the same numbers), and scikit-learn's non-private LogisticRegression.

    python experiments/readme_tour.py            # N = 200
"""

from __future__ import annotations

import sys

import numpy as np

import fasterm as fe
from fasterm.datasets import FEATURE_BOUNDS, load_breast_cancer, train_test_split


def main(n_seeds=200):
    X, y = load_breast_cancer(scaled=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
    R, _ = load_breast_cancer()
    R_train, R_test, _, _ = train_test_split(R, y, test_size=0.3, random_state=0)
    a = [fe.DPLogisticRegression(epsilon=1.0, delta=1e-5, random_state=s).fit(X_train, y_train).score(X_test, y_test)
         for s in range(n_seeds)]
    b = [fe.DPLogisticRegression(epsilon=1.0, delta=1e-5, bounds=FEATURE_BOUNDS, random_state=s)
         .fit(R_train, y_train).score(R_test, y_test) for s in range(n_seeds)]
    q = np.quantile(a, [0.1, 0.5, 0.9])
    print(f"tour split, pre-scaled, eps=1: mean {np.mean(a):.3f} sd {np.std(a):.3f} "
          f"(10%/50%/90%: {q[0]:.3f}/{q[1]:.3f}/{q[2]:.3f}) over {n_seeds} noise seeds")
    print(f"tour split, raw rows with bounds=FEATURE_BOUNDS: mean {np.mean(b):.3f} sd {np.std(b):.3f}")
    try:
        from sklearn.linear_model import LogisticRegression

        print(f"non-private LogisticRegression(): {LogisticRegression().fit(X_train, y_train).score(X_test, y_test):.3f}")
    except ImportError:
        pass


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
