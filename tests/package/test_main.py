"""The main job, ``python -m fasterm`` / ``fasterm``, end to end on a small configuration."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fasterm as fe
from fasterm import __main__ as job

SMALL = ["--epsilons", "0.3", "3", "--seeds", "4", "--no-progress"]
# epsilon, method, accuracy ± sd, eps spent, delta spent, T, fit ms
ROW = re.compile(r"^\s*([\d.]+)\s+(\S+)\s+([\d.]+) ± ([\d.]+)\s+([\d.e+-]+)\s+([\d.e+-]+)"
                 r"\s+(\d+|-)\s+([\d.]+)$")  # T: "-" for objective perturbation (no step count)


def _rows(text):
    return [ROW.match(line).groups() for line in text.splitlines() if ROW.match(line)]


def test_main_prints_the_table(capsys):
    assert job.main(SMALL) == 0
    out = capsys.readouterr().out
    assert "breast-cancer data" in out and "n_train=398, n_test=171, d=30" in out
    assert "accuracy" in out and "eps spent" in out and "delta spent" in out and "fit ms" in out
    rows = _rows(out)
    # n = 398: the default rule picks noisy_gd (docs/solvers.rst)
    assert [(r[0], r[1]) for r in rows] == [
        ("0.3", "noisy_gd/gaussian"), ("0.3", "noisy_gd/laplace-l2"),
        ("3", "noisy_gd/gaussian"), ("3", "noisy_gd/laplace-l2")]
    for eps, _, acc, sd, eps_spent, delta_spent, steps, ms in rows:
        assert float(eps_spent) == pytest.approx(float(eps), rel=1e-3)
        assert float(delta_spent) <= 1e-5
        assert 0.3 < float(acc) <= 1.0 and int(steps) >= 1 and float(ms) > 0
    gauss = {r[0]: float(r[2]) for r in rows if r[1].endswith("gaussian")}
    assert gauss["3"] > gauss["0.3"]
    ref = re.search(r"non-private pgd\s+([\d.]+) ±", out)
    assert ref and float(ref.group(1)) > 0.9


def test_run_matches_the_estimator_defaults():
    sk = pytest.importorskip("sklearn")  # noqa: F841 - the estimators need scikit-learn
    from fasterm.datasets import load_breast_cancer, train_test_split

    out = job.run([1.0], seeds=2, delta=1e-5, noises=("gaussian",))
    X, y = load_breast_cancer(scaled=True)
    acc = []
    for s in range(2):
        split_rng, (noise_rng,) = job.streams(s, 1)
        Xtr, Xte, ytr, yte = train_test_split(X, y, 0.3, random_state=split_rng)
        acc.append(fe.DPLogisticRegression(random_state=noise_rng).fit(Xtr, ytr).score(Xte, yte))
    np.testing.assert_allclose(out["rows"][0]["acc"], acc)


def test_pure_dp_and_svm(capsys):
    assert job.main(["--delta", "0", "--model", "svm", "--epsilons", "1", "--seeds", "2",
                     "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "linear SVM" in out
    rows = _rows(out)
    assert [r[1] for r in rows] == ["objpert"]  # the estimators' δ = 0 default
    assert float(rows[0][5]) == 0.0  # pure ε-DP: no δ spent
    assert job.main(["--delta", "0", "--model", "svm", "--epsilons", "1", "--seeds", "2",
                     "--noise", "laplace", "--no-progress"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert [r[1] for r in rows] == ["noisy_pgd/laplace-l2"]
    assert float(rows[0][5]) == 0.0


def test_pure_dp_default_is_the_estimators_default(capsys):
    """``--delta 0`` runs what ``DPLogisticRegression(delta=0)`` runs, fit for fit."""
    pytest.importorskip("sklearn")
    from fasterm.datasets import load_breast_cancer, train_test_split

    out = job.run([1.0], 2, 0.0, solver="objpert", noises=())
    X, y = load_breast_cancer(scaled=True)
    acc = []
    for s in range(2):
        split_rng, (noise_rng,) = job.streams(s, 1)
        Xtr, Xte, ytr, yte = train_test_split(X, y, 0.3, random_state=split_rng)
        acc.append(fe.DPLogisticRegression(delta=0.0, random_state=noise_rng).fit(Xtr, ytr).score(Xte, yte))
    np.testing.assert_allclose(out["rows"][0]["acc"], acc)
    assert job.main(["--delta", "0", "--epsilons", "1", "--seeds", "2", "--no-progress"]) == 0
    assert [r[1] for r in _rows(capsys.readouterr().out)] == ["objpert"]


def test_solver_option(capsys):
    assert job.main(["--solver", "noisy_pgd", "--epsilons", "1", "--seeds", "2", "--noise", "gaussian",
                     "--no-progress"]) == 0
    assert [r[1] for r in _rows(capsys.readouterr().out)] == ["noisy_pgd/gaussian"]
    with pytest.raises(SystemExit):
        job.main(["--solver", "noisy_gd", "--model", "svm"])
    with pytest.raises(SystemExit):
        job.main(["--solver", "noisy_sgd", "--noise", "laplace"])
    with pytest.raises(SystemExit):  # objective perturbation has its own noise
        job.main(["--solver", "objpert", "--noise", "laplace"])
    with pytest.raises(SystemExit):  # the old spelling is gone (CHANGELOG.md)
        job.main(["--method", "noisy_pgd"])


def test_help_explains_model_solver_and_test_size(capsys):
    # issue 28: a newcomer met --model, --method (now --solver) and --test-size without a word of help
    with pytest.raises(SystemExit) as exc:
        job.main(["--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "--model {logistic,svm}" in text and "logistic: DPLogisticRegression; svm: DPLinearSVC" in text
    assert "the private algorithm, as the estimators' solver=" in text
    for name in ("noisy_gd", "noisy_sgd", "noisy_pgd", "objpert", "expmech"):
        assert name in text
    assert "share of the rows held out for the test accuracy" in text and "(default: 0.3)" in text
    assert "--method" not in text  # the old spelling is gone (CHANGELOG.md), and refused below


def test_help_states_each_default_once(capsys):
    # issue 35: ArgumentDefaultsHelpFormatter added "(default: ...)" to help strings that give theirs
    with pytest.raises(SystemExit):
        job.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    options = re.split(r" (?=--[a-z-]+[ ,])", text.partition("options:")[2])
    for option in options:
        assert option.count("(default") <= 1, option
    assert "(default: None)" not in text
    for default in ("(default: 0.1 0.3 1 3 10)", "(default: 1e-05)", "(default: 20)", "(default: logistic)",
                    "(default: auto)", "(default: l2)", "(default: 0.3)", "(default: when stderr is a terminal)"):
        assert default in text, default


def test_png_to_a_missing_folder_fails_before_the_run(tmp_path, capsys, monkeypatch):
    # issue 35: it crashed in savefig after the whole run; now an argparse error before any fit
    monkeypatch.setattr(job, "run", lambda *a, **k: pytest.fail("ran before checking --png"))
    for path, message in [(tmp_path / "missing" / "x.png", f"the folder {tmp_path / 'missing'} does not exist"),
                          (tmp_path, "is a folder; give a file name")]:
        with pytest.raises(SystemExit) as exc:
            job.main(SMALL + ["--png", str(path)])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert f"--png {path}: " in err and message in err


def test_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    path = tmp_path / "curve.png"
    assert job.main(SMALL + ["--png", str(path)]) == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(path) in capsys.readouterr().out


def test_png_without_matplotlib_is_a_clear_error(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(SystemExit) as exc:
        job.main(SMALL + ["--png", str(tmp_path / "x.png")])
    assert exc.value.code == 2
    assert "needs matplotlib" in capsys.readouterr().err


def test_text_progress_bar_without_tqdm(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    assert job.main(["--epsilons", "1", "--seeds", "2", "--noise", "gaussian", "--progress"]) == 0
    err = capsys.readouterr().err
    assert "fasterm fits [" in err and "4/4" in err


@pytest.mark.parametrize("argv,message", [
    (["--delta", "0", "--noise", "gaussian"], "needs --noise laplace"),
    (["--noise", "gaussian", "--calibration", "pure"], "Laplace noise only"),
    (["--solver", "objpert", "--calibration", "pure"], "noisy gradient solvers"),
    (["--seeds", "0"], "--seeds"),
    (["--epsilons", "-1"], "epsilons"),
    # issue 35: not "invalid _positive_float value" (the name of a function inside fasterm)
    (["--epsilons", "abc"], "argument --epsilons: must be a finite number > 0, got 'abc'"),
    (["--epsilons", "1", "inf"], "argument --epsilons: must be a finite number > 0, got 'inf'"),
    (["--delta", "1.5"], "--delta"),
    (["--test-size", "0"], "--test-size must be in (0, 1)"),
    (["--test-size", "1"], "--test-size must be in (0, 1)"),
])
def test_bad_arguments(capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        job.main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("test_size,rows,warned", [
    (0.001, "holds out 1 of the 569 rows: each split's test accuracy is measured on 1 row", True),
    (0.05, "holds out 28 of the 569 rows", True),
    (0.95, "leaves 28 of the 569 rows for training", True),
    (0.1, "", False),
])
def test_a_test_size_with_few_rows_warns(capsys, test_size, rows, warned):
    # issue 35: --test-size 0.001 reported 1.000 ± 0.000 from one test row without a word
    assert job.main(["--test-size", str(test_size), "--epsilons", "1", "--seeds", "1", "--noise", "gaussian",
                     "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert ("fasterm: warning: --test-size" in captured.err) == warned, captured.err
    assert rows in captured.err
    n_test = int(re.search(r"n_test=(\d+)", captured.out).group(1))
    assert n_test == round(test_size * 569)  # the rows the warning names are those of the run


def test_a_delta_of_at_least_one_over_n_warns_once(capsys, recwarn):
    # issue 35: δ ≥ 1/n for the n = 398 training rows; one line on stderr, no warning from each fit
    assert job.main(["--delta", "0.01", "--epsilons", "1", "3", "--seeds", "2", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: --delta 0.01 is at least 1/n for the n = 398 training rows") == 1, err
    assert not [w for w in recwarn if issubclass(w.category, fe.DataWarning) and "1/n" in str(w.message)]
    assert job.main(["--delta", "0.002", "--epsilons", "1", "--seeds", "1", "--no-progress"]) == 0
    assert "--delta" not in capsys.readouterr().err


def test_an_epsilon_above_the_gaussian_maximum_is_refused_before_the_run(capsys, monkeypatch):
    monkeypatch.setattr(job, "run", lambda *a, **k: pytest.fail("ran before checking --epsilons"))
    with pytest.raises(SystemExit) as exc:
        job.main(["--epsilons", "1", "5e4"])
    assert exc.value.code == 2
    assert "--epsilons 50000: above 10000, the largest epsilon the Gaussian calibrations" in capsys.readouterr().err
    monkeypatch.undo()
    assert job.main(["--epsilons", "5e4", "--noise", "laplace", "--seeds", "1", "--no-progress"]) == 0  # honoured
    assert float(_rows(capsys.readouterr().out)[0][4]) == 5e4


def test_python_dash_m_and_console_script(tmp_path):
    # run outside the repository, so that the installed fasterm is imported
    out = subprocess.run([sys.executable, "-m", "fasterm", "--epsilons", "1", "--seeds", "2"],
                         check=True, capture_output=True, text=True, cwd=tmp_path)
    assert len(_rows(out.stdout)) == 2 and "non-private" in out.stdout
    script = shutil.which("fasterm", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the fasterm console script is not installed next to this interpreter")
    out = subprocess.run([script, "--help"], check=True, capture_output=True, text=True, cwd=tmp_path)
    assert "--epsilons" in out.stdout and "--png" in out.stdout
