"""The example of docs/getting_started.rst, runnable: a DataFrame with numeric and categorical
columns to a private model (declared bounds, then bounds="private"), and private tuning.

    python docs/examples/getting_started.py

The table is synthetic (made here, with a known logistic label) so that the
example runs anywhere; every figure the guide quotes is printed by this script.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import fasterm as fe
from fasterm.preprocessing import BoundedScaler


def make_table(n=6000, seed=0):
    """Patients: four numeric columns, two categorical ones, a binary outcome."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.uniform(18, 90, n).round(),
        "systolic_bp": rng.normal(130, 18, n).clip(80, 220).round(),
        "cholesterol": rng.lognormal(np.log(200), 0.2, n).round(),
        "bmi": rng.normal(27, 5, n).clip(14, 55).round(1),
        "smoker": rng.choice(["never", "former", "current"], n, p=[0.6, 0.25, 0.15]),
        "region": rng.choice(["north", "south", "east", "west"], n),
    })
    logit = (0.05 * (df.age - 55) + 0.03 * (df.systolic_bp - 130) + 0.01 * (df.cholesterol - 200)
             + 0.8 * (df.smoker == "current") + 0.3 * (df.smoker == "former") - 0.6)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    return df, y


# Public bounds, from outside the data: the ranges a clinic records (age of adult
# patients, the range a blood-pressure cuff reads, laboratory reporting ranges).
BOUNDS = {"age": (18, 100), "systolic_bp": (70, 250), "cholesterol": (100, 400), "bmi": (12, 60)}
CATEGORIES = {"smoker": ["never", "former", "current"], "region": ["north", "south", "east", "west"]}
NUMERIC, CATEGORICAL = list(BOUNDS), list(CATEGORIES)


def declared_pipeline(**params):
    k = len(CATEGORICAL)  # each one-hot block adds 1 to ‖x‖²: rows have norm ≤ √(1 + k)
    prep = ColumnTransformer([
        ("num", BoundedScaler(BOUNDS), NUMERIC),
        ("cat", OneHotEncoder(categories=[CATEGORIES[c] for c in CATEGORICAL], handle_unknown="ignore"),
         CATEGORICAL),
    ], sparse_threshold=0)  # PrivateSearch: sparse_output_ may not depend on the data's density
    return make_pipeline(prep, fe.DPLogisticRegression(data_norm=math.sqrt(1 + k), **params))


def private_pipeline(**params):
    k = len(CATEGORICAL)
    prep = ColumnTransformer([
        ("num", "passthrough", NUMERIC),
        ("cat", OneHotEncoder(categories=[CATEGORIES[c] for c in CATEGORICAL], handle_unknown="ignore",
                              sparse_output=False), CATEGORICAL),
    ])
    # bounds="private" maps every column into [-1, 1]/√d with private ranges: rows have norm ≤ 1
    return make_pipeline(prep, fe.DPLogisticRegression(bounds="private", **params))


def main(n=6000, seeds=10):
    df, y = make_table(n)
    print(f"table: {n} rows, {df.shape[1]} columns, positive rate {y.mean():.3f}")
    scores = {"declared": [], "private": [], "raw": [], "search": [], "nonprivate": []}
    spent = {}
    for seed in range(seeds):
        X_train, X_test, y_train, y_test = train_test_split(df, y, test_size=0.3, random_state=seed)
        model = declared_pipeline(epsilon=1.0, delta=1e-5, random_state=seed).fit(X_train, y_train)
        scores["declared"].append(model.score(X_test, y_test))
        spent["declared"] = (model[-1].epsilon_, model[-1].delta_)
        model = private_pipeline(epsilon=1.0, delta=1e-5, random_state=seed).fit(X_train, y_train)
        scores["private"].append(model.score(X_test, y_test))
        spent["private"] = (model[-1].epsilon_, model[-1].delta_)
        raw = ColumnTransformer([("num", "passthrough", NUMERIC),
                                 ("cat", OneHotEncoder(categories=[CATEGORIES[c] for c in CATEGORICAL]),
                                  CATEGORICAL)])
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            model = make_pipeline(raw, fe.DPLogisticRegression(random_state=seed)).fit(X_train, y_train)
        scores["raw"].append(model.score(X_test, y_test))
        spent["raw warned"] = any(issubclass(w.category, fe.DataWarning) for w in rec)
        search = fe.PrivateSearch(declared_pipeline(solver="noisy_gd"),
                                  {"dplogisticregression__max_steps": [10, 20, 40],
                                   "dplogisticregression__alpha": [1e-4, 1e-2]},
                                  epsilon=1.0, delta=1e-5, random_state=seed).fit(X_train, y_train)
        scores["search"].append(search.score(X_test, y_test))
        # non-private reference (it learns the scaling from the rows: never on private data)
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        ref = make_pipeline(ColumnTransformer([("num", StandardScaler(), NUMERIC),
                                               ("cat", OneHotEncoder(), CATEGORICAL)]), LogisticRegression())
        scores["nonprivate"].append(ref.fit(X_train, y_train).score(X_test, y_test))
        spent["search"] = (search.epsilon_, search.delta_)
    for key, label in (("declared", "declared bounds, BoundedScaler + OneHotEncoder"),
                       ("private", 'bounds="private" (numeric and one-hot columns)'),
                       ("raw", "raw numeric columns, bounds=None"),
                       ("search", "PrivateSearch over the declared pipeline"),
                       ("nonprivate", "non-private LogisticRegression (reference)")):
        extra = f"  (epsilon_, delta_) = ({spent[key][0]:.4f}, {spent[key][1]:.3g})" if key in spent else ""
        if key == "raw":
            extra = f"  DataWarning: {spent['raw warned']}"
        print(f"{label:48s} accuracy {np.mean(scores[key]):.3f} ± {np.std(scores[key]):.3f}{extra}")
    return scores


if __name__ == "__main__":
    main()
