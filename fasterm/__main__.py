"""``python -m fasterm`` / ``fasterm``: a private model on real data, end to end.

Fits a differentially private linear classifier on the Wisconsin Diagnostic
Breast Cancer data that ships with fasterm (569 × 30; rows scaled into the
unit ball with the *published* feature ranges, so the scaling spends no
privacy), over random 70/30 train/test splits (``--test-size``), for several ε.  Prints, for
each ε and noise, the mean ± sd test accuracy over the splits, the privacy
actually spent and the fit time, beside a long non-private fit
(:func:`fasterm.pgd`) on the same splits.  ``--png PATH`` writes the
privacy–utility curve (needs matplotlib: ``pip install "fasterm[plot]"``).

Needs numpy only: the estimators' numpy core (:mod:`fasterm.linear_model._rules`) is
called directly, with the same defaults as ``fasterm.DPLogisticRegression``
and ``fasterm.DPLinearSVC``.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time

import numpy as np

import fasterm as fe
import fasterm._warnings as _warnings
from fasterm.linear_model import _rules as _linear
from fasterm.linear_model._plan import make_plan, plan_for
from fasterm.datasets import load_breast_cancer, train_test_split

_MODELS = {"logistic": "logistic", "svm": "hinge"}
_TITLES = {"logistic": "logistic regression", "svm": "linear SVM"}
_DESCRIPTION = (
    "Private linear classifiers on the breast-cancer data shipped with fasterm: mean test "
    "accuracy over random 70/30 splits and the privacy spent, for several epsilons, beside a "
    "non-private fit. Needs numpy only; --png needs matplotlib.")
_NONPRIVATE_STEPS = 2000
#: Fewer test (or training) rows per split than this: a warning (an accuracy on m rows moves in steps of 1/m).
_FEW_ROWS = 50


class _TextBar:
    """A minimal progress bar on stderr (used when tqdm is not installed)."""

    def __init__(self, total: int, desc: str, width: int = 30):
        self.total, self.desc, self.width, self.done = max(total, 1), desc, width, 0
        self._draw()

    def _draw(self):
        filled = self.width * self.done // self.total
        sys.stderr.write(f"\r{self.desc} [{'#' * filled}{'.' * (self.width - filled)}] "
                         f"{self.done}/{self.total}")
        sys.stderr.flush()

    def update(self, n: int = 1):
        self.done += n
        self._draw()

    def close(self):
        sys.stderr.write("\r" + " " * (len(self.desc) + self.width + 24) + "\r")
        sys.stderr.flush()


class _NoBar:
    def update(self, n: int = 1):
        pass

    def close(self):
        pass


def _progress_bar(total: int, desc: str, enabled: bool):
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _TextBar(total, desc)
    return tqdm(total=total, desc=desc, leave=False, file=sys.stderr)


def _accuracy(coef, intercept, X, y01) -> float:
    return float(np.mean(((X @ coef + intercept) > 0) == (y01 == 1)))


def streams(seed: int, n_fits: int):
    """Independent generators for seed ``seed``: ``(split, [noise of fit 0, …, n_fits − 1])``.

    ``np.random.SeedSequence(seed).spawn`` derives them: the split and each
    fit's noise draw from statistically independent streams, where seeding
    both from ``seed`` itself would make the noise reuse the split's random
    bits, and every ε the same noise bits.  A seed still reproduces a run.
    """
    split_seq, noise_seq = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(split_seq), [np.random.default_rng(s) for s in noise_seq.spawn(n_fits)]


def run(epsilons, seeds, delta, model="logistic", solver="auto", noises=("gaussian",),
        calibration=None, test_size=0.3, progress=False):
    """The experiment behind the table: a dict with the rows and the non-private reference.

    Each row: ``eps``, ``method`` (label), ``acc`` (array over seeds),
    ``eps_spent``, ``delta_spent`` (max over seeds), ``steps`` (T; None for
    objective perturbation, whose result reports only its iteration cap) and
    ``seconds`` (mean fit time).  Seed s gives split s and one noise stream per fit, all
    independent (:func:`streams`).
    """
    kind = _MODELS[model]
    X, y = load_breast_cancer(scaled=True)
    params = dict(_linear.DEFAULTS, radius=_linear.DEFAULT_RADIUS[kind], solver=solver)
    rngs = [streams(s, len(epsilons) * max(1, len(noises))) for s in range(seeds)]
    splits = [train_test_split(X, y, test_size, random_state=split_rng) for split_rng, _ in rngs]

    def plan(eps, noise):
        # the fit plan of one row of the table (every split has the same public sizes)
        p = dict(params, epsilon=eps, delta=delta)
        if noise is not None:
            p["noise"] = noise
            p["calibration"] = calibration if noise == "laplace" else None
        return plan_for(kind, splits[0][0], **p)

    # the algorithm the solver runs (a noise given keeps "auto" among the noisy gradient
    # solvers, the only ones that take one: one row per noise)
    gradient = plan(epsilons[0], noises[0] if noises else None).optimiser is not None
    variants = list(noises) if gradient else [None]
    bar = _progress_bar(len(epsilons) * len(variants) * seeds + seeds, "fasterm fits", progress)
    try:
        ref = []
        for X_tr, X_te, y_tr, y_te in splits:
            s = _linear.resolve_intercept_scaling(kind, "gradient", params["intercept_scaling"])
            A = _linear.design(X_tr, params["data_norm"], True, s)
            res = fe.pgd(_linear.make_loss(kind, params["alpha"]), A, np.where(y_tr == 1, 1.0, -1.0),
                         fe.L2Ball(params["radius"], A.shape[1]), steps=_NONPRIVATE_STEPS)
            ref.append(_accuracy(res.w[:-1], res.w[-1] * s, X_te, y_te))
            bar.update()
        rows = []
        for i, eps in enumerate(epsilons):
            for j, noise in enumerate(variants):
                acc, spent_e, spent_d, secs, steps = [], 0.0, 0.0, 0.0, 0
                fit_plan = plan(eps, noise)
                for s, (X_tr, X_te, y_tr, y_te) in enumerate(splits):
                    t0 = time.perf_counter()
                    coef, b, res = _linear.fit_binary(fit_plan, X_tr, np.where(y_tr == 1, 1.0, -1.0),
                                                      random_state=rngs[s][1][i * len(variants) + j])
                    secs += time.perf_counter() - t0
                    acc.append(_accuracy(coef, b, X_te, y_te))
                    # delta None: an approximate release (expmech chain), δ not certified
                    d_res = math.nan if res.delta is None else res.delta
                    spent_e, spent_d = max(spent_e, res.epsilon), (
                        math.nan if math.isnan(d_res) or math.isnan(spent_d) else max(spent_d, d_res))
                    # objective perturbation reports its iteration cap (a public constant),
                    # not a step count: shown as "-"
                    steps = None if fit_plan.iteration_cap else max(steps, res.steps)
                    bar.update()
                if fit_plan.optimiser is None:
                    label = fit_plan.method
                else:
                    label = f"{fit_plan.public_solver}/" + ("gaussian" if noise == "gaussian"
                                                            else f"laplace-{calibration or 'l2'}")
                rows.append(dict(eps=eps, method=label, acc=np.array(acc), eps_spent=spent_e,
                                 delta_spent=spent_d, steps=steps, seconds=secs / seeds))
    finally:
        bar.close()
    return dict(rows=rows, nonprivate=np.array(ref), n_train=splits[0][0].shape[0],
                n_test=splits[0][1].shape[0], d=X.shape[1], model=model)


def format_table(out) -> str:
    ref = out["nonprivate"]
    lines = [
        f"fasterm {fe.__version__}: private {_TITLES[out['model']]} on the breast-cancer data "
        f"(n_train={out['n_train']}, n_test={out['n_test']}, d={out['d']}; rows scaled into the "
        f"unit ball with the published feature ranges), {len(ref)} random train/test splits",
        "",
        f"{'epsilon':>8}  {'method':<22} {'accuracy':>15}  {'eps spent':>9}  {'delta spent':>11}  "
        f"{'T':>4}  {'fit ms':>7}",
    ]
    lines.append("-" * len(lines[-1]))
    for r in out["rows"]:
        lines.append(
            f"{r['eps']:>8g}  {r['method']:<22} {r['acc'].mean():>7.3f} ± {r['acc'].std():.3f}  "
            f"{r['eps_spent']:>9.4g}  {r['delta_spent']:>11.3g}  {'-' if r['steps'] is None else r['steps']:>4}  "
            f"{1e3 * r['seconds']:>7.2f}")
    lines.append(
        f"{'inf':>8}  {'non-private pgd':<22} {ref.mean():>7.3f} ± {ref.std():.3f}  "
        f"{'inf':>9}  {'-':>11}  {_NONPRIVATE_STEPS:>4d}  {'':>7}")
    return "\n".join(lines)


def write_png(out, path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for label in dict.fromkeys(r["method"] for r in out["rows"]):
        rows = [r for r in out["rows"] if r["method"] == label]
        eps = [r["eps"] for r in rows]
        ax.errorbar(eps, [r["acc"].mean() for r in rows], yerr=[r["acc"].std() for r in rows],
                    marker="o", capsize=3, label=f"fasterm {label}")
    ax.axhline(out["nonprivate"].mean(), color="k", ls="--", lw=1, label="non-private")
    ax.set_xscale("log")
    ax.set_xlabel("ε (privacy budget)")
    ax.set_ylabel("test accuracy (mean ± sd over splits)")
    ax.set_title(f"Private {_TITLES[out['model']]}, breast-cancer data")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _positive_float(text):
    # ArgumentTypeError's message is shown as it is (a ValueError would name this function)
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def _png_path_error(path: str) -> str | None:
    """Why ``--png PATH`` cannot be written (checked before the run, which takes a while), or None."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return f"--png {path}: is a folder; give a file name, e.g. {os.path.join(path, 'curve.png')}"
    if not os.path.isdir(folder):
        return f"--png {path}: the folder {folder} does not exist"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"--png {path}: the folder {folder} is not writable"
    return None


def _split_warnings(test_size: float, delta: float) -> list[str]:
    """Warnings for a ``--test-size`` that leaves few test or training rows in each split, and for
    a ``--delta`` of at least 1/n for the n training rows (:func:`fasterm._warnings.warn_large_delta`)."""
    X, y = load_breast_cancer(scaled=True)
    X_tr, X_te = train_test_split(X, y, test_size, random_state=0)[:2]  # the sizes are those of every split
    n_train, n_test = X_tr.shape[0], X_te.shape[0]
    out = []
    if n_test < _FEW_ROWS:
        out.append(f"--test-size {test_size:g} holds out {n_test} of the {X.shape[0]} rows: each split's test "
                   f"accuracy is measured on {n_test} row{'s' if n_test != 1 else ''} (it moves in steps of "
                   f"1/{n_test}); --test-size {_FEW_ROWS / X.shape[0]:.2f} or more holds out {_FEW_ROWS}")
    if n_train < _FEW_ROWS:
        out.append(f"--test-size {test_size:g} leaves {n_train} of the {X.shape[0]} rows for training")
    if delta > 0.0 and delta >= 1.0 / n_train:
        out.append(f"--delta {delta:g} is at least 1/n for the n = {n_train} training rows: (epsilon, delta)-DP "
                   "with delta >= 1/n allows a release that publishes whole records; choose delta well below "
                   f"1/n, e.g. {1.0 / n_train**2:.1g}")
    return out


def main(argv=None) -> int:
    # Each help string states its default once, by hand (argparse's ArgumentDefaultsHelpFormatter
    # would add a second "(default: ...)" to those that explain theirs, and "(default: None)").
    epsilons = [0.1, 0.3, 1.0, 3.0, 10.0]
    ap = argparse.ArgumentParser(prog="fasterm", description=_DESCRIPTION)
    ap.add_argument("--epsilons", type=_positive_float, nargs="+", default=epsilons,
                    help=f"privacy budgets ε to run (default: {' '.join(f'{e:g}' for e in epsilons)})")
    ap.add_argument("--delta", type=float, default=1e-5,
                    help="δ; 0 gives pure ε-DP (Laplace noise only) (default: %(default)g)")
    ap.add_argument("--seeds", type=int, default=20,
                    help="number of random splits (and noise seeds) (default: %(default)s)")
    ap.add_argument("--model", choices=sorted(_MODELS), default="logistic",
                    help="logistic: DPLogisticRegression; svm: DPLinearSVC (hinge loss) (default: %(default)s)")
    ap.add_argument("--solver", choices=list(_linear.CLASSIFIER_SOLVERS), default="auto",
                    help="the private algorithm, as the estimators' solver=: auto (objective "
                         "perturbation when --delta 0 and no --noise is given, else the noisy gradient "
                         "solver of the public rule, docs/solvers.rst), noisy_gd, noisy_sgd, noisy_pgd, "
                         "objpert (pure ε), objpert_threshold, expmech (hit-and-run) (default: %(default)s)")
    ap.add_argument("--noise", choices=list(_linear.NOISES), nargs="+", default=None,
                    help="noise of the noisy gradient solvers, one table row per choice (default: "
                         "gaussian and laplace, laplace only with --delta 0; with --delta 0 and "
                         "--solver auto, --noise laplace asks for Laplace noisy gradients instead of "
                         "objective perturbation)")
    ap.add_argument("--calibration", choices=list(_linear.CALIBRATIONS), default=None,
                    help="Laplace calibration (default: l2)")
    ap.add_argument("--test-size", type=float, default=0.3,
                    help="share of the rows held out for the test accuracy in each random split "
                         "(default: %(default)s)")
    ap.add_argument("--png", metavar="PATH", help="write the privacy-utility curve to PATH (checked before "
                                                  "the run: its folder must exist)")
    ap.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                    help="progress bar on stderr (default: when stderr is a terminal)")
    args = ap.parse_args(argv)

    if args.seeds < 1:
        ap.error("--seeds must be >= 1")
    if not 0.0 <= args.delta < 1.0:
        ap.error("--delta must be in [0, 1)")
    if not 0.0 < args.test_size < 1.0:
        ap.error("--test-size must be in (0, 1)")
    # the library's rule (objpert for δ = 0 under auto), unless a noise was asked for: the fit plans
    # of the table's rows, made on the public sizes of a split (fasterm.linear_model._plan)
    X_all, _ = load_breast_cancer(scaled=True)
    n_test = min(max(int(round(args.test_size * X_all.shape[0])), 1), X_all.shape[0] - 1)  # train_test_split's rule
    shape = (X_all.shape[0] - n_test, X_all.shape[1])

    def plan(noise, calibration):
        return make_plan(_MODELS[args.model], n=shape[0], d=shape[1],
                         **dict(_linear.DEFAULTS, epsilon=max(args.epsilons), delta=args.delta,
                                radius=_linear.DEFAULT_RADIUS[_MODELS[args.model]], solver=args.solver, noise=noise,
                                calibration=calibration))

    try:
        first = plan(args.noise[0] if args.noise else None, args.calibration)
        noises = args.noise or (["laplace"] if args.delta == 0 else ["gaussian", "laplace"])
        plans = ([plan(noise, args.calibration if noise == "laplace" else None) for noise in noises]
                 if first.optimiser is not None else [first])
    except (TypeError, ValueError) as exc:  # the plan's message, in the options' names
        ap.error(re.sub(r"\b(solver|noise|calibration|delta)=(?:'([^']*)'|([\w.+-]+))",
                        lambda m: f"--{m[1]} {m[2] or m[3]}", str(exc)))
    if args.calibration and "laplace" not in noises:
        ap.error("--calibration applies to Laplace noise only (--noise laplace)")
    if args.png:
        problem = _png_path_error(args.png)
        if problem:
            ap.error(problem)
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            ap.error("--png needs matplotlib: pip install matplotlib (or 'fasterm[plot]')")
    if (args.delta > 0.0 and any(p.noise == "gaussian" for p in plans)
            and max(args.epsilons) > fe.accounting.GAUSSIAN_EPSILON_CAP):
        # before the run (fe.accounting.check_gaussian_epsilon would stop it at the first such fit)
        ap.error(f"--epsilons {max(args.epsilons):g}: above {fe.accounting.GAUSSIAN_EPSILON_CAP:g}, the largest "
                 "epsilon the Gaussian calibrations (--delta > 0) accept; give smaller epsilons, or --noise laplace")
    for message in _split_warnings(args.test_size, args.delta):
        print(f"{ap.prog}: warning: {message}", file=sys.stderr)

    progress = sys.stderr.isatty() if args.progress is None else args.progress
    with _warnings.delta_checked_outside():  # --delta is checked above, once
        out = run(args.epsilons, args.seeds, args.delta, model=args.model,
                  solver=args.solver if first.optimiser is not None else first.method,
                  noises=noises if first.optimiser is not None else (), calibration=args.calibration,
                  test_size=args.test_size, progress=progress)
    print(format_table(out))
    if args.png:
        write_png(out, args.png)
        print(f"\nprivacy-utility curve written to {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
