"""The configurations of the fit-hash list (``tests/hashes/make.py`` runs them).

Each :class:`Config` is one fit on small fixed synthetic data with the fixed
noise seed :data:`SEED`: a readable id and a function that returns the
released object (a fitted estimator, a solver's result, the main job's table).
:func:`grid` lists them all:

* **estimators** — ``DPLogisticRegression``, ``DPLinearSVC`` (binary, binary
  with declared ``classes``, K = 3) and ``DPLinearRegression`` × every
  ``solver`` but "expmech" × ``noise``/``calibration`` (None, "gaussian",
  "laplace" with "l2", "pure", "coordinate"; the solvers without noise get
  None and one refused noise) × float32/float64 × dense/CSR × without/with
  ``sample_weight`` × δ ∈ {1e-5, 0} at n = 300; the same with
  ``solver="auto"`` (and "noisy_sgd") and three noises at n = 1,500 and
  n = 5,000, the branches of the default rule (docs/solvers.rst);
  "expmech" on a few tiny cases; declared ``bounds`` and ``bounds="private"``;
* **functional solvers** — :func:`fasterm.noisy_gd`, :func:`fasterm.noisy_sgd`,
  :func:`fasterm.noisy_pgd`, :func:`fasterm.objective_perturbation`,
  :func:`fasterm.expmech_erm` and :func:`fasterm.ssp.adassp` over losses,
  noises, dtypes, formats, weights and δ;
* **dask** arrays (``dask.array.from_array`` with row chunks, the local
  threaded scheduler; left out when dask is not installed), **secure mode**
  (``secure=True`` and :func:`fasterm.secure_mode`), one
  :class:`fasterm.PrivateSearch`, and the main job: the table ``python -m
  fasterm`` prints (its fit times and version blanked) and the numbers
  behind it (:func:`fasterm.__main__.run`, to the bit).

An invalid combination is a configuration too: its entry records the
exception type it raises, so a change in what is valid shows in the list.
Ids are the comparison's keys: a configuration added or renamed between the
"before" and the "after" list shows as NEW or MISSING.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import zlib
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp

import fasterm as fe

#: The noise seed of every fit (``random_state``).
SEED = 0
EPSILON = 1.0
DIM = 4
DELTAS = (1e-5, 0.0)
DTYPES = ("float32", "float64")
FORMATS = ("dense", "csr")
#: n of the full product, and the sizes of the default rule's other branches
#: (noisy_gd's small budget below 1,000 rows, noisy_gd from 1,000, noisy_sgd from 5,000).
N_SMALL = 300
N_BRANCHES = (1_500, 5_000)

ESTIMATOR_TASKS = {
    "DPLogisticRegression": ("binary", "binary-classes", "multiclass"),
    "DPLinearSVC": ("binary", "binary-classes", "multiclass"),
    "DPLinearRegression": ("regression",),
}
GRADIENT_SOLVERS = ("auto", "noisy_gd", "noisy_sgd", "noisy_pgd")
OTHER_SOLVERS = ("objpert", "objpert_threshold", "adassp")
NOISES = ((None, None), ("gaussian", None), ("laplace", "l2"), ("laplace", "pure"), ("laplace", "coordinate"))
#: The solvers without noise: the default and one refused noise.
OTHER_NOISES = ((None, None), ("laplace", "l2"))
BRANCH_NOISES = ((None, None), ("gaussian", None), ("laplace", "l2"))
#: The declared label set of the task "binary-classes" (K = 2 via ``classes``).
CLASSES = ("no", "yes")


@dataclass(frozen=True)
class Config:
    """One fit: ``run()`` returns the released object (or raises)."""

    id: str
    run: Callable[[], object]


# ---------------------------------------------------------------------------- data

def dataset(task: str, n: int, dtype: str = "float64", fmt: str = "dense", d: int = DIM):
    """``(X, y, sample_weight)``: fixed synthetic data for ``task``.

    Rows lie in the unit ball with about half of their entries zero (the same
    values stored dense or CSR), drawn from a generator seeded by (task, n, d)
    only, so that the dtype and the format change nothing but the storage.
    Tasks: "binary" (labels 0/1 from a logistic model), "binary-classes"
    (labels "no"/"yes"), "multiclass" (0, 1, 2 from a multinomial model),
    "regression" (a linear model plus noise, in [−1, 1]).
    """
    rng = np.random.default_rng(zlib.crc32(f"{task}/{n}/{d}".encode()))
    X = rng.standard_normal((n, d)) / math.sqrt(d) * (rng.random((n, d)) < 0.5) * 2.0
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    W = rng.standard_normal((d, 3)) * 2.0
    u = rng.random(n)
    z = X @ W
    weights = rng.uniform(0.0, 1.0, n)
    if task in ("binary", "binary-classes"):
        y = (u < 1.0 / (1.0 + np.exp(-z[:, 0]))).astype(np.int64)
        if task == "binary-classes":
            y = np.asarray(CLASSES)[y]
    elif task == "multiclass":
        y = np.argmax(z - np.log(-np.log(rng.random((n, 3)))), axis=1).astype(np.int64)
    elif task == "regression":
        y = np.clip(0.5 * z[:, 0] + 0.1 * (u - 0.5), -1.0, 1.0)
    else:
        raise ValueError(f"unknown task {task!r}")
    X = X.astype(dtype)
    if fmt == "csr":
        X = sp.csr_matrix(X)
    return X, y, weights


def _labels(y, task):
    """±1 labels of a classification task for the functional solvers (regression: y)."""
    return y if task == "regression" else np.where(y == 1, 1.0, -1.0)


def _fmt(value) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


# ---------------------------------------------------------------------------- estimators

def _fmt_bounds(bounds) -> str:
    """Declared bounds are always (−3, 5): scalars, or one array entry per feature."""
    if isinstance(bounds, tuple):
        return "(-3,5)" if np.ndim(bounds[0]) == 0 else "(-3,5)/feature"
    return str(bounds)


def _fit_estimator(name, task, n, dtype, fmt, weighted, *, chunks=None, **params):
    X, y, w = dataset(task, n, dtype, fmt)
    if task == "binary-classes":
        params["classes"] = CLASSES
    if chunks is not None:
        import dask.array as da
        X = da.from_array(X, chunks=(chunks, X.shape[1]))
        y = da.from_array(y, chunks=chunks)
        w = da.from_array(w, chunks=chunks)
    if isinstance(params.get("bounds"), tuple):
        # raw features in [−3, 5] that the declared bounds map into the ball (CSR: scaled only,
        # a sparse matrix has no shift; bounds need dense X)
        X = X * 4.0 if fmt == "csr" else X * 4.0 + 1.0
    est = getattr(fe, name)(epsilon=EPSILON, random_state=SEED, **params)
    return est.fit(X, y, sample_weight=w if weighted else None)


def _estimator_config(name, solver, noise, calibration, dtype, fmt, task, weighted, delta, n, *,
                      tag="", chunks=None, **extra):
    shown = " ".join(f"{k}={_fmt_bounds(v) if k == 'bounds' else _fmt(v)}" for k, v in extra.items())
    cid = (f"{name} solver={solver} noise={_fmt(noise)} cal={_fmt(calibration)} {dtype} {fmt} "
           f"y={task} w={'yes' if weighted else 'no'} delta={_fmt(delta)} n={n}{tag}"
           + (f" {shown}" if shown else ""))
    params = dict(solver=solver, noise=noise, calibration=calibration, delta=delta, **extra)
    return Config(cid, lambda: _fit_estimator(name, task, n, dtype, fmt, weighted, chunks=chunks, **params))


def _estimator_grid():
    for name, tasks in ESTIMATOR_TASKS.items():
        for task in tasks:
            solver_noises = [(s, nc) for s in GRADIENT_SOLVERS for nc in NOISES]
            solver_noises += [(s, nc) for s in OTHER_SOLVERS for nc in OTHER_NOISES]
            for (solver, (noise, cal)) in solver_noises:
                for dtype in DTYPES:
                    for fmt in FORMATS:
                        for weighted in (False, True):
                            for delta in DELTAS:
                                yield _estimator_config(name, solver, noise, cal, dtype, fmt, task,
                                                        weighted, delta, N_SMALL)
            # the default rule's branches in n (and noisy_sgd where "auto" picks it)
            for n in N_BRANCHES:
                for solver in ("auto", "noisy_sgd") if n >= 5_000 else ("auto",):
                    for noise, cal in BRANCH_NOISES:
                        for dtype in DTYPES:
                            for fmt in FORMATS:
                                for weighted in (False, True):
                                    for delta in DELTAS:
                                        yield _estimator_config(name, solver, noise, cal, dtype, fmt, task,
                                                                weighted, delta, n)
            # the exponential mechanism: tiny cases (an uncertified chain; δ > 0 needed)
            for delta in DELTAS:
                yield _estimator_config(name, "expmech", None, None, "float64", "dense", task, False, delta, 100,
                                        steps=200)
            yield _estimator_config(name, "expmech", None, None, "float32", "dense", task, False, 1e-5, 100,
                                    steps=200)
            yield _estimator_config(name, "expmech", None, None, "float64", "dense", task, True, 1e-5, 100,
                                    steps=200)
            # declared feature bounds, and private ones (n = 5,000: many rows per feature)
            low, high = np.full(DIM, -3.0), np.full(DIM, 5.0)
            for dtype in DTYPES:
                for delta in DELTAS:
                    yield _estimator_config(name, "auto", None, None, dtype, "dense", task, False, delta, N_SMALL,
                                            bounds=(low, high))
            yield _estimator_config(name, "auto", None, None, "float64", "csr", task, False, 1e-5, N_SMALL,
                                    bounds=(-3.0, 5.0))
            for dtype in DTYPES:
                yield _estimator_config(name, "auto", None, None, dtype, "dense", task, False, 1e-5, 5_000,
                                        bounds="private")


# ---------------------------------------------------------------------------- functional solvers

_LOSSES = {
    "Logistic": lambda: fe.losses.Logistic(l2=1e-3),
    "Hinge": lambda: fe.losses.Hinge(l2=1e-3),
    "Squared": lambda: fe.losses.Squared(label_bound=1.0, l2=1e-3),
}
_TASK_OF = {"Logistic": "binary", "Hinge": "binary", "Squared": "regression"}


def _solver_data(loss, dtype, fmt, n=N_SMALL):
    X, y, w = dataset(_TASK_OF[loss], n, dtype, fmt)
    return X, _labels(y, _TASK_OF[loss]), w


def _functional(fn, loss, dtype, fmt, weighted, n=N_SMALL, constraint=None, **kw):
    X, y, w = _solver_data(loss, dtype, fmt, n)
    if weighted:
        kw["sample_weight"] = w
    C = constraint() if constraint is not None else fe.L2Ball(5.0, DIM)
    return fn(_LOSSES[loss](), X, y, C, EPSILON, data_norm=1.0, random_state=SEED, **kw)


def _functional_config(fname, loss, dtype, fmt, weighted, tag="", **kw):
    kw_id = " ".join(f"{k}={_fmt(v)}" for k, v in kw.items() if k not in ("constraint",))
    cid = (f"fasterm.{fname} loss={loss} {kw_id} {dtype} {fmt} w={'yes' if weighted else 'no'}{tag}"
           .replace("  ", " "))
    fn = getattr(fe, fname)
    return Config(cid, lambda: _functional(fn, loss, dtype, fmt, weighted, **kw))


def _functional_grid():
    for dtype in DTYPES:
        for fmt in FORMATS:
            for weighted in (False, True):
                for delta in DELTAS:
                    for loss in ("Logistic", "Hinge", "Squared"):
                        for noise, cal in NOISES[1:]:
                            yield _functional_config("noisy_pgd", loss, dtype, fmt, weighted, delta=delta,
                                                     noise=noise, calibration=cal or "l2")
                            yield _functional_config("noisy_gd", loss, dtype, fmt, weighted, delta=delta,
                                                     noise=noise, calibration=cal or "l2")
                        yield _functional_config("noisy_sgd", loss, dtype, fmt, weighted, delta=delta)
                for loss in ("Logistic", "Squared"):
                    yield _functional_config("noisy_gd", loss, dtype, fmt, weighted, delta=1e-5,
                                             accelerate="auto", output="average")
                    yield _functional_config("noisy_gd", loss, dtype, fmt, weighted, delta=1e-5, accelerate=True)
                    yield _functional_config("noisy_sgd", loss, dtype, fmt, weighted, delta=1e-5,
                                             sample_rate=0.2, steps=30, output="average")
                    yield _functional_config("noisy_sgd", loss, dtype, fmt, weighted, delta=1e-5,
                                             sample_rate=0.2, batch_size=60.0, epochs=2.0,
                                             neighbors="add_remove")
                    yield _functional_config("noisy_pgd", loss, dtype, fmt, weighted, delta=1e-5,
                                             noise="gaussian", steps=25, average=False)
            # other feasible sets
            for cname, make in (("Box", lambda: fe.Box(-1.0, 1.0, DIM)), ("L1Ball", lambda: fe.L1Ball(3.0, DIM)),
                                ("Simplex", lambda: fe.Simplex(DIM))):
                yield _functional_config("noisy_pgd", "Logistic", dtype, fmt, False, tag=f" constraint={cname}",
                                         constraint=make, delta=1e-5, noise="gaussian")
                yield _functional_config("noisy_gd", "Squared", dtype, fmt, False, tag=f" constraint={cname}",
                                         constraint=make, delta=1e-5, noise="gaussian")
    # objective perturbation (pure ε) and AdaSSP
    for dtype in DTYPES:
        for fmt in FORMATS:
            for name, make, task in (("SmoothHinge", fe.objpert.SmoothHinge, "binary"),
                                     ("Logistic", fe.losses.Logistic, "binary"),
                                     ("LogCosh", fe.objpert.LogCosh, "regression")):
                yield _objpert_config(name, make, task, dtype, fmt)
            for weighted in (False, True):
                for delta in DELTAS:
                    yield _adassp_config(dtype, fmt, weighted, delta)
    # the exponential mechanism: tiny cases
    for loss, cname, make in (("Logistic", "L2Ball", lambda: fe.L2Ball(2.0, DIM)),
                              ("Squared", "Box", lambda: fe.Box(-1.0, 1.0, DIM)),
                              ("Hinge", "Simplex", lambda: fe.Simplex(DIM))):
        yield _expmech_config(loss, cname, make)


def _objpert(make, task, dtype, fmt):
    X, y, _ = dataset(task, N_SMALL, dtype, fmt)
    return fe.objective_perturbation(make(l2=1e-3), X, _labels(y, task), EPSILON, data_norm=1.0,
                                     random_state=SEED, **({"label_bound": 1.0} if task == "regression" else {}))


def _objpert_config(name, make, task, dtype, fmt):
    return Config(f"fasterm.objective_perturbation loss={name} {dtype} {fmt}",
                  lambda: _objpert(make, task, dtype, fmt))


def _adassp(dtype, fmt, weighted, delta):
    X, y, w = dataset("regression", N_SMALL, dtype, fmt)
    return fe.ssp.adassp(X, y, EPSILON, delta, sample_weight=w if weighted else None, random_state=SEED)


def _adassp_config(dtype, fmt, weighted, delta):
    return Config(f"fasterm.ssp.adassp delta={_fmt(delta)} {dtype} {fmt} w={'yes' if weighted else 'no'}",
                  lambda: _adassp(dtype, fmt, weighted, delta))


def _expmech(loss, make):
    X, y, _ = dataset(_TASK_OF[loss], 100, "float64", "dense")
    return fe.expmech_erm(_LOSSES[loss](), X, _labels(y, _TASK_OF[loss]), make(), EPSILON, data_norm=1.0,
                          steps=200, random_state=SEED)


def _expmech_config(loss, cname, make):
    return Config(f"fasterm.expmech_erm loss={loss} constraint={cname} steps=200 float64 dense n=100",
                  lambda: _expmech(loss, make))


# ---------------------------------------------------------------------------- dask, secure mode, search, main job

def _dask_grid():
    try:
        import dask.array  # noqa: F401
    except ImportError:
        return
    dask = dict(tag=" dask chunks=64", chunks=64)
    # the default T once (a dask step is a graph per chunk: slow), then T = 10
    yield _estimator_config("DPLogisticRegression", "auto", None, None, "float64", "dense", "binary", False, 1e-5,
                            N_SMALL, **dask)
    for name, tasks in ESTIMATOR_TASKS.items():
        task = tasks[0]
        for dtype in DTYPES:
            for delta in DELTAS:
                yield _estimator_config(name, "auto", None, None, dtype, "dense", task, False, delta, N_SMALL,
                                        **dask, steps=10)
        yield _estimator_config(name, "noisy_pgd", "laplace", "coordinate", "float32", "dense", task, False, 1e-5,
                                N_SMALL, **dask, steps=10)
        yield _estimator_config(name, "auto", None, None, "float64", "dense", task, False, 1e-5, N_SMALL,
                                **dask, steps=10, bounds=(-3.0, 5.0))
        # refused: weights, an in-memory solver, K > 2 classes
        yield _estimator_config(name, "auto", None, None, "float64", "dense", task, True, 1e-5, N_SMALL,
                                **dask, steps=10)
        yield _estimator_config(name, "noisy_gd", None, None, "float64", "dense", task, False, 1e-5, N_SMALL,
                                **dask, steps=10)
        if "multiclass" in tasks:
            yield _estimator_config(name, "auto", None, None, "float64", "dense", "multiclass", False, 1e-5,
                                    N_SMALL, **dask, steps=10)
    for dtype in DTYPES:
        for noise, cal in NOISES[1:]:
            yield Config(f"fasterm.noisy_pgd loss=Logistic noise={noise} calibration={cal or 'l2'} steps=10 {dtype} "
                         f"dask chunks=64", lambda dtype=dtype, noise=noise, cal=cal: _dask_pgd(dtype, noise, cal))


def _dask_pgd(dtype, noise, cal):
    import dask.array as da
    X, y, _ = _solver_data("Logistic", dtype, "dense")
    return fe.noisy_pgd(fe.losses.Logistic(l2=1e-3), da.from_array(X, chunks=(64, DIM)), da.from_array(y, chunks=64),
                        fe.L2Ball(5.0, DIM), EPSILON, 1e-5, steps=10, noise=noise, calibration=cal or "l2",
                        data_norm=1.0, random_state=SEED)


def _secure_grid():
    for dtype in DTYPES:
        for noise, cal, delta in (("gaussian", None, 1e-5), ("laplace", "l2", 0.0)):
            yield _estimator_config("DPLogisticRegression", "noisy_pgd", noise, cal, dtype, "dense", "binary",
                                    False, delta, N_SMALL, secure=True)
            yield _functional_config("noisy_pgd", "Squared", dtype, "dense", False, delta=delta, noise=noise,
                                     calibration=cal or "l2", secure=True)
        yield Config(f"DPLinearSVC solver=auto multiclass {dtype} dense under fasterm.secure_mode()",
                     lambda dtype=dtype: _under_secure_mode(dtype))
    # refused: objective perturbation has no exact-grid version
    yield _estimator_config("DPLogisticRegression", "objpert", None, None, "float64", "dense", "binary",
                            False, 0.0, N_SMALL, secure=True)


def _under_secure_mode(dtype):
    with fe.secure_mode():
        return _fit_estimator("DPLinearSVC", "multiclass", N_SMALL, dtype, "dense", False)


def _search():
    X, y, _ = dataset("binary", 1_000, "float64", "dense")
    search = fe.PrivateSearch(fe.DPLogisticRegression(), {"alpha": [1e-4, 1e-2], "max_steps": [10, 30]},
                              epsilon=EPSILON, delta=1e-5, random_state=SEED)
    return search.fit(X, y)


#: The main job's fit-time column (the last field of a row, "%7.2f" milliseconds).
_FIT_MS = re.compile(r"(?m)^(.*\S)[ ]+\d+\.\d\d[ ]*$")


def _main_table(argv):
    """The table ``python -m fasterm argv`` prints, its fit times replaced by "<ms>"."""
    import fasterm.__main__ as main_job

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main_job.main([*argv, "--no-progress"])
    text = out.getvalue().replace(f"fasterm {fe.__version__}:", "fasterm <version>:")
    return _FIT_MS.sub(r"\1 <ms>", text)


def _main_run(delta):
    """The main job's numbers behind the table (accuracies to the bit), without the fit times."""
    import fasterm.__main__ as main_job

    out = main_job.run([0.5, 2.0], 2, delta, noises=("gaussian", "laplace") if delta > 0 else ("laplace",))
    for row in out["rows"]:
        row.pop("seconds")
    return out


def _other_grid():
    yield Config("PrivateSearch DPLogisticRegression alpha x max_steps float64 dense y=binary n=1000", _search)
    for argv in (["--epsilons", "1", "--seeds", "2"],
                 ["--epsilons", "0.5", "2", "--seeds", "2", "--delta", "0"],
                 ["--epsilons", "1", "--seeds", "2", "--model", "svm", "--noise", "laplace",
                  "--calibration", "pure"]):
        yield Config("python -m fasterm " + " ".join(argv), lambda argv=argv: _main_table(argv))
    for delta in DELTAS:
        yield Config(f"fasterm.__main__.run epsilons=0.5,2 seeds=2 delta={_fmt(delta)}",
                     lambda delta=delta: _main_run(delta))


def grid() -> list[Config]:
    """Every configuration, in a fixed order; ids are unique."""
    configs = [*_estimator_grid(), *_functional_grid(), *_dask_grid(), *_secure_grid(), *_other_grid()]
    ids = [c.id for c in configs]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise RuntimeError(f"duplicate configuration ids: {dup[:5]}")
    return configs
