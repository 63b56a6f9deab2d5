"""A regression target in its own units (issue 35, item 7): ``target_bounds`` against the hand-scaled target.

Data.  scikit-learn's diabetes data, raw (``load_diabetes(scaled=False)``:
442 patients, 10 raw columns — age, sex, body mass index, mean blood pressure
and six serum measurements — and y, "a quantitative measure of disease
progression one year after baseline", 25–346 in the rows).  Ships with
scikit-learn: no download.

Declared bounds, from clinical ranges, not from the rows: age 18–100, sex
1–2 (its coding), bmi 12–60, bp 50–150 mmHg, s1 (total cholesterol) 100–400
mg/dL, s2 (LDL) 0–300, s3 (HDL) 10–120, s4 (total/HDL ratio) 1–12, s5 (log
triglycerides, ln of 20–2,000 mg/dL) 3.0–7.6, s6 (glucose) 50–250 mg/dL.
The target's documentation gives its units but no range: it is declared
[0, 400] (a round range of the measure).

Comparison.  20 random 70/30 splits (``train_test_split`` with
random_state = s), the estimators' random_state = s, ``DPLinearRegression``
with ``bounds=`` the declared feature bounds, δ = 1e-5, its defaults
otherwise, ε ∈ {1, 3, 10}; test R² (mean ± sd) of

* ``target_bounds=(0, 400)`` on the raw y;
* the hand-scaled target y' = (y − 200)/200 with ``label_bound=1``, its
  predictions mapped back by 200·ŷ' + 200 (the fit must be the previous
  one bit for bit: checked on every split, ``result_.w`` equal);
* ``label_bound=400`` on the raw y (the natural bound of the raw target);
* ``label_bound=400, radius=1e5`` (the workaround the issue found);
* scikit-learn's non-private ``LinearRegression`` on the raw columns.

    python experiments/raw_regression.py
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

import fasterm as fe

BOUNDS = ([18, 1, 12, 50, 100, 0, 10, 1, 3.0, 50], [100, 2, 60, 150, 400, 300, 120, 12, 7.6, 250])
TARGET = (0.0, 400.0)


def run(epsilon, splits):
    X, y = load_diabetes(return_X_y=True, scaled=False)
    c, h = (TARGET[0] + TARGET[1]) / 2, (TARGET[1] - TARGET[0]) / 2
    r2 = {"target_bounds": [], "hand-scaled": [], "label_bound=400": [], "label_bound=400, radius=1e5": [],
          "non-private": []}
    same = True
    for s in range(splits):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=s)
        est = dict(epsilon=epsilon, delta=1e-5, bounds=BOUNDS, random_state=s)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", fe.DataWarning)
            raw = fe.DPLinearRegression(target_bounds=TARGET, **est).fit(Xtr, ytr)
            hand = fe.DPLinearRegression(**est).fit(Xtr, (ytr - c) / h)
            naive = fe.DPLinearRegression(label_bound=400.0, **est).fit(Xtr, ytr)
            wide = fe.DPLinearRegression(label_bound=400.0, radius=1e5, **est).fit(Xtr, ytr)
        same &= bool(np.array_equal(raw.result_.w, hand.result_.w))
        r2["target_bounds"].append(raw.score(Xte, yte))
        r2["hand-scaled"].append(r2_score(yte, h * hand.predict(Xte) + c))
        r2["label_bound=400"].append(naive.score(Xte, yte))
        r2["label_bound=400, radius=1e5"].append(wide.score(Xte, yte))
        r2["non-private"].append(LinearRegression().fit(Xtr, ytr).score(Xte, yte))
    gap = float(np.max(np.abs(np.subtract(r2["target_bounds"], r2["hand-scaled"]))))
    return r2, same, gap


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 3.0, 10.0])
    parser.add_argument("--splits", type=int, default=20)
    args = parser.parse_args(argv)
    for eps in args.epsilons:
        r2, same, gap = run(eps, args.splits)
        print(f"epsilon = {eps:g}: target_bounds fit == hand-scaled fit on every split: {same}; "
              f"largest |R2 difference| {gap:.1e}")
        for key, values in r2.items():
            print(f"  {key:30s} R2 {np.mean(values):7.3f} ± {np.std(values):.3f}")


if __name__ == "__main__":
    main()
