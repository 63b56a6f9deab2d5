"""Long fits: Ctrl-C stops the compiled loops, fits far beyond a normal one warn or refuse before
they start, and ``verbose`` shows the steps done.

The compiled loops (``_losses.pgd_loop`` / ``sgd_loop``, ``_mclosses.sgd_loop`` / ``gd_loop`` and
the multiclass kernel inside a step, ``_hitrun.run_chain``) poll an interruption check about every
100 ms (src/fasterm/_interrupt.pxd): Python's signal handlers run there, and the progress callback
is told the step.  A SIGINT sent to a child process in the middle of a long fit must come back as
KeyboardInterrupt, raised from inside the loop, within a second; the check must change no bit of
a run.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

import fasterm as fe
from fasterm import _warnings
from fasterm.erm import _hitrun, _losses, _mclosses
from fasterm.linear_model import _checks

# The children import the fasterm this process imported (the installed package in CI, a build in
# a checkout during development), from a folder that is not the repository root: ``python -c``
# puts its working directory first on sys.path, and the root's fasterm/ has no compiled modules.
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(fe.__file__)))

# The tests' synthetic rows and labels are not scaled into the declared bounds: the clipping
# DataWarnings that says so are not what these tests check (other kinds still fail them).
pytestmark = [pytest.mark.filterwarnings("ignore:.*have a norm above data_norm:fasterm.DataWarning"),
              pytest.mark.filterwarnings("ignore:.*labels .* have \\|y\\| > label_bound:fasterm.DataWarning")]


# --- the compiled loops: a check changes no bit, an exception raised at a check stops the loop ---

def _binary(n, d, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / math.sqrt(d)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    return X, y


def _pgd(steps, progress, n=40_000, d=40):
    X, y = _binary(n, d)
    w = np.zeros(d)
    acc = np.zeros(d)
    _losses.pgd_loop(_losses.LOGISTIC, X, y, None, 1.0, 1.0, 1.0, w, steps, 0.5, 1e-3, _losses.NOISE_GAUSSIAN,
                     0.01, np.random.default_rng(1).bit_generator, _losses.SET_L2_BALL, 5.0, None, None, acc,
                     progress=progress)
    return w, acc


def _sgd(steps, progress, n=40_000, d=40):
    X, y = _binary(n, d)
    w = np.zeros(d)
    acc = np.zeros(d)
    q = 0.02
    _losses.sgd_loop(_losses.LOGISTIC, X, y, None, 1.0, 1.0, 1.0, w, steps, q, 1.0 / (q * n),
                     0.5, 1e-3, 0.01, np.random.default_rng(1).bit_generator, _losses.SET_L2_BALL, 5.0, None, None,
                     acc, progress=progress)
    return w, acc


def _mc(n, d, K, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) / math.sqrt(d), rng.integers(0, K, n).astype(np.int64)


def _mc_sgd(steps, progress, n=20_000, d=20, K=10):
    X, y = _mc(n, d, K)
    w = np.zeros((d + 1) * K)
    tail = np.zeros(w.shape[0])
    q = 0.05
    _mclosses.sgd_loop(_mclosses.LOGISTIC, w, K, X, None, None, None, d, y, None, 1.0, 0.5, 1.0,
                       steps, steps // 2, q, 1.0 / (q * n), 0.5, 1e-3, 0.01, np.random.default_rng(1).bit_generator,
                       5.0, tail, progress=progress)
    return w, tail


def _mc_gd(steps, progress, n=20_000, d=20, K=10):
    X, y = _mc(n, d, K)
    w = np.zeros((d + 1) * K)
    avg = np.zeros(w.shape[0])
    betas = np.full(steps, 0.5)
    _mclosses.gd_loop(_mclosses.LOGISTIC, w, K, X, None, None, None, d, y, None, 1.0, 0.5, 1.0, steps, 0.5, 1e-3,
                      _mclosses.NOISE_GAUSSIAN, 0.01, np.random.default_rng(1).bit_generator, 5.0, betas, avg,
                      progress=progress)
    return w, avg


def _chain(steps, progress, n=20_000, d=10):
    X, y = _binary(n, d)
    w = np.zeros(d)
    z = np.empty(n)
    _hitrun.run_chain(np.random.default_rng(1).bit_generator, _hitrun.LOGISTIC, X, y, None, None, 1.0, 0.0, 0,
                      _hitrun.BALL, np.zeros(d), 2.0, None, None, 0.0, _hitrun.SPHERE, math.inf, w, z, steps,
                      progress=progress)
    return w, z


# steps for a run of about a second (this machine, shared) and for one of many seconds
LOOPS = {"pgd_loop": (_pgd, 150, 100_000), "sgd_loop": (_sgd, 8_000, 10_000_000),
         "mc_sgd_loop": (_mc_sgd, 1_500, 10_000_000), "mc_gd_loop": (_mc_gd, 100, 100_000),
         "run_chain": (_chain, 1_000, 10_000_000)}


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_progress_is_told_the_steps_and_changes_no_bit(name):
    run, steps, _ = LOOPS[name]
    seen = []
    t0 = time.perf_counter()
    watched = run(steps, seen.append)
    elapsed = time.perf_counter() - t0
    plain = run(steps, None)
    for a, b in zip(watched, plain):
        np.testing.assert_array_equal(a, b)  # bit for bit: the check reads and writes nothing of the run
    assert seen == sorted(seen) and all(0 <= t <= steps for t in seen)
    if elapsed > 0.3:  # checks every 100 ms: a run of 0.3 s has been checked
        assert seen, f"{name} ran {elapsed:.2f} s without a check"


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_an_exception_raised_at_a_check_stops_the_loop(name):
    run, _, long = LOOPS[name]
    seen = []

    def stop(t):
        seen.append(t)
        raise RuntimeError("stopped by the test")

    t0 = time.perf_counter()
    with pytest.raises(RuntimeError, match="stopped by the test"):
        run(long, stop)  # many seconds (minutes) of work if not stopped
    assert len(seen) == 1 and time.perf_counter() - t0 < 10.0


def test_the_multiclass_kernel_is_checked_within_a_step():
    # One gradient step of n·p·K = 5·10⁸ multiply-adds (a few tenths of a second): only the
    # kernel's own checks, between blocks of rows, can stop it.
    seen = []

    def stop(t):
        seen.append(t)
        raise RuntimeError("stopped in the kernel")

    t0 = time.perf_counter()
    with pytest.raises(RuntimeError, match="stopped in the kernel"):
        _mc_gd(1, stop, n=100_000, d=50, K=100)
    assert seen == [0] and time.perf_counter() - t0 < 5.0


# --- Ctrl-C: SIGINT to a child process in the middle of a long fit -------------------------------

CHILD = """
import importlib, sys, time, warnings
import numpy as np
import fasterm as fe
warnings.simplefilter("ignore")
{setup}
module = importlib.import_module("{module}")
loop = getattr(module, "{func}")

def announced(*args, **kwargs):  # the loop itself, unchanged, once the child has said so
    print("ready", flush=True)
    return loop(*args, **kwargs)

setattr(module, "{func}", announced)
rng = np.random.default_rng(0)
X = (rng.normal(size=({n}, {d})) / np.sqrt({d})).astype(np.float32)
y = rng.integers(0, {K}, {n})
try:
    {fit}
except KeyboardInterrupt:
    print("interrupted", time.monotonic(), flush=True)
    raise
print("finished", flush=True)
"""

_SGD = ("fe.noisy_sgd(fe.losses.Logistic(), X, np.where(y > 0, 1.0, -1.0).astype(X.dtype), fe.L2Ball(5.0, {d}), "
        "1.0, 1e-5, steps=20_000, sample_rate=0.5, data_norm=1.0, random_state=0)")
# Each fit runs for well over 20 s uninterrupted (minutes for most).  The child says "ready" as its
# step loop starts (module.func: the compiled loop, or the Python one), and the KeyboardInterrupt
# must come from inside that loop (`where`, in the traceback), not after it returned.
FITS = {
    "binary noisy_sgd (compiled)": dict(n=50_000, d=50, K=2, fit=_SGD.format(d=50), setup="",
                                        module="fasterm.erm._losses", func="sgd_loop",
                                        where="fasterm.erm._losses.sgd_loop"),
    "binary noisy_pgd (compiled)": dict(n=50_000, d=50, K=2, setup="", module="fasterm.erm._losses",
                                        fit="fe.DPLogisticRegression(solver='noisy_pgd', steps=30_000).fit(X, y)",
                                        func="pgd_loop", where="fasterm.erm._losses.pgd_loop"),
    "multiclass noisy_sgd (compiled)": dict(n=50_000, d=50, K=100, setup="", module="fasterm.erm._mclosses",
                                            fit="fe.DPLogisticRegression(solver='noisy_sgd', steps=20_000).fit(X, y)",
                                            func="sgd_loop", where="fasterm.erm._mclosses.sgd_loop"),
    "multiclass noisy_gd (compiled)": dict(n=20_000, d=30, K=10, setup="", module="fasterm.erm._mclosses",
                                           fit="fe.DPLogisticRegression(solver='noisy_gd', steps=20_000).fit(X, y)",
                                           func="gd_loop", where="fasterm.erm._mclosses.gd_loop"),
    "binary noisy_sgd (Python loop)": dict(n=50_000, d=50, K=2, fit=_SGD.format(d=50),
                                           setup="import fasterm.erm._sgdrun as r; r.COMPILED = False",
                                           module="fasterm.erm._engine", func="descend", where="in descend"),
}


def _interrupt(proc):
    """Wait for the child's loop to start, SIGINT it 0.5 s later; (SIGINT's time, stdout, stderr)."""
    line = proc.stdout.readline().strip()
    if line != "ready":
        return None, line + proc.stdout.read(), proc.stderr.read()
    time.sleep(0.5)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=20)  # minutes if not interrupted
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return sent, out, err


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process is POSIX")
def test_ctrl_c_stops_a_long_fit_within_a_second(tmp_path):
    # The fits run side by side (each child interrupted 0.5 s after its own loop has started)
    # and must raise KeyboardInterrupt from inside the loop within a second.
    from concurrent.futures import ThreadPoolExecutor

    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (PACKAGE_PARENT, os.environ.get("PYTHONPATH")) if p))
    procs = {}
    try:
        for name, spec in FITS.items():
            procs[name] = subprocess.Popen([sys.executable, "-c", CHILD.format(**spec)], stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
        with ThreadPoolExecutor(len(procs)) as pool:
            results = dict(zip(procs, pool.map(_interrupt, procs.values())))
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    failures = []
    for name, (sent, out, err) in results.items():
        caught = [line for line in out.splitlines() if line.startswith("interrupted")]
        if sent is None or "finished" in out or not caught:
            failures.append(f"{name}: not interrupted: {out!r} {err[-2000:]}")
            continue
        latency = float(caught[0].split()[1]) - sent
        print(f"{name}: KeyboardInterrupt {1000 * latency:.0f} ms after SIGINT")
        if not latency < 1.0:
            failures.append(f"{name}: KeyboardInterrupt {latency:.2f} s after SIGINT")
        if procs[name].returncode == 0 or "KeyboardInterrupt" not in err:
            failures.append(f"{name}: exit {procs[name].returncode}, {err[-2000:]}")
        if FITS[name]["where"] not in err:  # raised from inside the loop, not after it returned
            failures.append(f"{name}: not raised in {FITS[name]['where']}: {err[-2000:]}")
    assert failures == []


# --- fits far beyond a normal one: refused or warned before they start ----------------------------

LABELS_CHILD = """
import time, warnings
import numpy as np
import fasterm as fe
n = 100_000
rng = np.random.default_rng(0)
X = rng.normal(size=(n, 5)) / 3.0
y = np.arange(n)
fe.DPLogisticRegression(random_state=0, steps=1).fit(X[:50], np.arange(50) % 2)  # imports on first use
t0 = time.perf_counter()
try:
    fe.DPLogisticRegression(random_state=0).fit(X, y)
except ValueError as e:
    print("refused", time.perf_counter() - t0, "|", e, flush=True)
warnings.simplefilter("error", fe.CostWarning)
t0 = time.perf_counter()
try:
    fe.DPLogisticRegression(random_state=0, classes=np.arange(n)).fit(X, y)
except fe.CostWarning as e:
    print("warned", time.perf_counter() - t0, "|", e, flush=True)
"""


def test_a_fit_on_1e5_distinct_labels_is_refused_or_warned_within_a_second(tmp_path):
    # In a child with a timeout: the fits, if they started, would run for ten minutes and more.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (PACKAGE_PARENT, os.environ.get("PYTHONPATH")) if p))
    out = subprocess.run([sys.executable, "-c", LABELS_CHILD], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120).stdout
    lines = {line.split()[0]: line for line in out.splitlines()}
    assert "refused" in lines and "did you pass a continuous target?" in lines["refused"], out
    assert "100000 distinct values for 100000 rows" in lines["refused"]
    assert float(lines["refused"].split()[1]) < 1.0, out
    # declared classes are the caller's word: not refused, but warned of before the run
    assert "warned" in lines and "K=100000 classes" in lines["warned"], out
    assert float(lines["warned"].split()[1]) < 1.0, out


@pytest.mark.filterwarnings("ignore:.*is on the boundary of the parameter ball:fasterm.DataWarning")  # 300 classes, 2 steps
def test_many_labels_from_y_are_refused_and_few_are_not():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)) / 2.0
    with pytest.raises(ValueError, match="y has 300 distinct values for 300 rows: did you pass a continuous target"):
        fe.DPLogisticRegression(random_state=0).fit(X, np.arange(300))
    with pytest.raises(ValueError, match="continuous target"):
        fe.DPLinearSVC(random_state=0).fit(X, np.arange(300) * 2.0 - 7.0)  # integral floats
    # the bounds of the rule: K ≤ MANY_CLASSES, or n ≥ 2K, fit as before
    _checks._check_class_count(_checks.MANY_CLASSES, 10)
    _checks._check_class_count(150, 300)
    with pytest.raises(ValueError):
        _checks._check_class_count(151, 300)
    fe.DPLogisticRegression(random_state=0, steps=2).fit(X, np.arange(300) % 30)
    # declared classes are not refused by this rule
    fe.DPLogisticRegression(random_state=0, steps=2, classes=np.arange(300)).fit(X, np.arange(300))


def test_the_cost_warning_threshold():
    with warnings.catch_warnings():
        warnings.simplefilter("error", fe.CostWarning)
        _warnings.warn_cost(100, 1e6, 1000, classes=1)  # 1e11: at the threshold, no warning
        with pytest.raises(fe.CostWarning, match=r"1\.0e\+12 multiply-adds \(T=1000 steps of 1e\+06 rows x 100 "
                                                  r"columns x K=10 classes\)"):
            _warnings.warn_cost(1000, 1e6, 100, classes=10)


@pytest.mark.parametrize("call", ["noisy_pgd", "noisy_gd", "noisy_sgd", "expmech_erm"])
def test_the_binary_runs_warn_of_their_cost_before_they_start(call):
    X, y = _binary(20_000, 100)  # one pass: 2·10⁶ multiply-adds; SGD at q = 1/2, 10⁶
    loss = fe.losses.Logistic()
    ball = fe.L2Ball(5.0, 100)
    steps = 200_000  # 2-4·10¹¹ multiply-adds
    kw = dict(epsilon=1.0, delta=1e-5, steps=steps, data_norm=1.0, random_state=0)
    if call == "noisy_sgd":
        kw.update(sample_rate=0.5)
    if call == "noisy_pgd":
        kw.update(noise="gaussian", max_steps=steps)
    if call == "expmech_erm":
        kw = dict(epsilon=1.0, steps=steps, data_norm=1.0, random_state=0)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error", fe.CostWarning)
        with pytest.raises(fe.CostWarning, match="multiply-adds"):
            getattr(fe, call)(loss, X, y, ball, **kw)
    assert time.perf_counter() - t0 < 10.0


# --- declared label sets of many classes: matched through y's distinct values ---------------------

def _labels(kind, rng):
    if kind == "integers":  # int64 classes, int32 labels
        return np.arange(100), rng.integers(0, 100, 2_000).astype(np.int32), 100
    if kind == "strings":
        classes = np.array([f"c{k}" for k in range(100)])
        return classes, rng.choice(classes, 2_000), "zz"
    if kind == "floats":  # float labels compare in their precision in numpy: the loop runs
        return np.arange(100), rng.integers(0, 100, 2_000).astype(np.float32), 100.5
    classes = np.array([*range(99), "a"], dtype=object)  # mixed objects: the loop runs
    return classes, rng.choice(classes, 2_000), "zz"


@pytest.mark.parametrize("kind", ["integers", "strings", "floats", "mixed"])
def test_many_declared_classes_map_as_the_loop_does(kind, monkeypatch):
    classes, y, outside = _labels(kind, np.random.default_rng(0))
    assert (_checks._class_lookup(y, classes) is None) == (kind in ("floats", "mixed"))
    fast = _checks._declared_index(y, classes)
    _checks._check_declared_labels(y, classes, False)
    bad = y.copy()
    if bad.dtype.kind == "U":
        bad = bad.astype(object)
    bad[:5] = outside
    with pytest.raises(ValueError, match="5 of 2000 labels") as lookup_err:
        _checks._check_declared_labels(bad, classes, False)
    assert "(100 classes)" in str(lookup_err.value)
    monkeypatch.setattr(_checks, "LOOKUP_CLASSES", 10**9)  # the loop of one y == c per class
    np.testing.assert_array_equal(fast, _checks._declared_index(y, classes))
    with pytest.raises(ValueError, match="5 of 2000 labels") as loop_err:
        _checks._check_declared_labels(bad, classes, False)
    assert str(loop_err.value) == str(lookup_err.value)


# --- verbose: the steps done, on stderr; the same fit -----------------------------------------------

@pytest.mark.parametrize("make, K, n", [
    (lambda v: fe.DPLogisticRegression(random_state=3, verbose=v), 2, 6_000),   # noisy_sgd, compiled
    (lambda v: fe.DPLogisticRegression(random_state=3, verbose=v), 2, 600),     # noisy_gd, compiled
    (lambda v: fe.DPLinearSVC(random_state=3, verbose=v), 2, 600),              # noisy_pgd, compiled
    (lambda v: fe.DPLogisticRegression(random_state=3, verbose=v), 4, 6_000),   # multiclass noisy_sgd
    (lambda v: fe.DPLogisticRegression(random_state=3, verbose=v), 4, 600),     # multiclass noisy_gd
    (lambda v: fe.DPLinearRegression(random_state=3, verbose=v), 0, 6_000),     # regression noisy_gd
    (lambda v: fe.DPLogisticRegression(random_state=3, verbose=v, solver="noisy_pgd", secure=True),
     2, 600),                                                                   # not fused: the Python loop
])
def test_verbose_shows_the_steps_done_and_changes_no_bit(make, K, n, capfd):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 5)) / 3.0
    y = rng.normal(size=n) / 2.0 if K == 0 else rng.integers(0, K, n)
    quiet = make(0).fit(X, y)
    assert capfd.readouterr().err == ""
    loud = make(1).fit(X, y)
    err = capfd.readouterr().err
    assert f"{loud.n_iter_}/{loud.n_iter_}" in err and type(loud).__name__ in err
    np.testing.assert_array_equal(quiet.coef_, loud.coef_)
    np.testing.assert_array_equal(quiet.intercept_, loud.intercept_)
    assert loud.get_params()["verbose"] == 1 and "verbose" in type(loud)().get_params()


def test_verbose_is_checked_like_the_other_parameters():
    X, y = _binary(200, 3)
    with pytest.raises(ValueError, match="verbose"):
        fe.DPLogisticRegression(verbose=-1).fit(X, y)
    with pytest.raises(ValueError, match="verbose"):
        fe.DPLinearRegression(verbose="yes").fit(X, y)
    fe.DPLinearRegression(verbose=True, random_state=0, steps=3).fit(X, y)


def test_the_text_bar_without_tqdm(monkeypatch, capfd):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    with _warnings.verbose(1, "Est"):
        with _warnings.progress(40, "steps") as report:
            for t in range(1, 41):
                report(t)
    err = capfd.readouterr().err
    assert "Est: steps: 40/40 steps" in err
    with _warnings.progress(40, "steps") as report:  # outside verbose: nothing
        assert report is None
