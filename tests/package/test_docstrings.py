"""Public docstrings: short enough to read, in numpydoc form (issue #36 item 5, "code says what").

The *what* stays in the docstring; the *why* (how a default was chosen, the
measurements, the history) lives in ``docs/`` and ``CHANGELOG.md``.  Two rules,
over every public name: each name in ``fasterm.__all__`` and in the ``__all__``
of each public subpackage or module of ``fasterm``:

* a class's docstring is at most :data:`MAX_CLASS_LINES` lines;
* a class or function that takes parameters has a numpydoc ``Parameters``
  section — except the names in :data:`NO_PARAMETERS_SECTION_YET`, written
  before the rule.  That list only shrinks: a listed name that gains the
  section fails :func:`test_the_list_of_names_without_a_parameters_section_is_current`
  until it is taken off the list, and a new public name must have the section.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import fasterm

pytest.importorskip("sklearn")  # the estimators, PrivateSearch and BoundedScaler need it

MAX_CLASS_LINES = 80

#: Public names whose docstrings predate the numpydoc rule (prose, not a Parameters section).
NO_PARAMETERS_SECTION_YET = frozenset("""
fasterm.Box fasterm.L1Ball fasterm.L2Ball fasterm.OptimizeResult fasterm.Simplex fasterm.mean
fasterm.median fasterm.noisy_gd fasterm.noisy_sgd fasterm.pgd fasterm.quantile fasterm.secure_mode
fasterm.set_secure fasterm.accounting.BudgetAccountant fasterm.accounting.advanced_composition
fasterm.accounting.basic_composition fasterm.accounting.calibrate_gaussian
fasterm.accounting.calibrate_laplace_coordinate fasterm.accounting.calibrate_laplace_l2
fasterm.accounting.calibrate_laplace_pure fasterm.accounting.calibrate_sgd_sigma
fasterm.accounting.calibrate_objpert fasterm.accounting.calibrate_private_search
fasterm.accounting.calibrate_steps fasterm.accounting.compose_pure fasterm.accounting.gaussian_delta
fasterm.accounting.gaussian_epsilon fasterm.accounting.gaussian_mu
fasterm.accounting.heterogeneous_composition fasterm.accounting.laplace_l2_epsilon
fasterm.accounting.norm_laplace_scale fasterm.accounting.objpert_epsilon
fasterm.accounting.objpert_regularization fasterm.accounting.private_search_epsilon
fasterm.accounting.pure_share fasterm.accounting.rdp_epsilon fasterm.accounting.rdp_subsampled_gaussian
fasterm.accounting.sgd_epsilon fasterm.accounting.zcdp_delta fasterm.accounting.zcdp_rho
fasterm.audit.AuditResult fasterm.audit.clopper_pearson fasterm.audit.epsilon_lower_bound
fasterm.audit.project fasterm.datasets.load_breast_cancer fasterm.datasets.scale_to_unit_ball
fasterm.datasets.train_test_split fasterm.learning.pac_learner_bound fasterm.learning.private_pac_learner
fasterm.learning.private_pac_learner_from_callables fasterm.losses.Absolute fasterm.losses.Hinge
fasterm.losses.Linear fasterm.losses.Logistic fasterm.losses.Squared fasterm.losses.row_norms
fasterm.mechanisms.exponential fasterm.mechanisms.gaussian fasterm.mechanisms.laplace
fasterm.mechanisms.laplace_l2 fasterm.online.LinearLearnerResult fasterm.online.PrivateRWMRun
fasterm.online.RWMCalibration fasterm.online.RWMRun fasterm.online.calibrate_eta
fasterm.online.linear_learner fasterm.online.regret_bound fasterm.online.run_rwm
""".split())


def _public_names():
    """(dotted name, object) of each class and function exported by an ``__all__``, first name wins."""
    modules = ["fasterm"] + sorted(f"fasterm.{m.name}" for m in pkgutil.iter_modules(fasterm.__path__)
                                   if not m.name.startswith("_"))
    seen, out = set(), []
    for name in modules:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and id(obj) not in seen:
                seen.add(id(obj))
                out.append((f"{name}.{attr}", obj))
    return out


PUBLIC = _public_names()
CLASSES = [(n, o) for n, o in PUBLIC if inspect.isclass(o)]


def _takes_parameters(obj) -> bool:
    if inspect.isclass(obj) and issubclass(obj, Warning):
        return False  # a warning category takes Warning's message only
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return False
    return any(p.name != "self" for p in sig.parameters.values())


def _has_parameters_section(obj) -> bool:
    return "\nParameters\n----------\n" in "\n" + (inspect.getdoc(obj) or "") + "\n"


def test_the_public_names_are_found():
    names = {n for n, _ in PUBLIC}
    assert {"fasterm.DPLogisticRegression", "fasterm.PrivateSearch",
            "fasterm.preprocessing.BoundedScaler", "fasterm.noisy_pgd"} <= names
    assert len(CLASSES) >= 20


@pytest.mark.parametrize("name, cls", CLASSES, ids=[n for n, _ in CLASSES])
def test_class_docstring_is_at_most_80_lines(name, cls):
    doc = inspect.getdoc(cls)
    assert doc, f"{name} has no docstring"
    lines = len(doc.splitlines())
    assert lines <= MAX_CLASS_LINES, (
        f"{name}'s docstring is {lines} lines (at most {MAX_CLASS_LINES}): move the why (how a default "
        f"was chosen, measurements, history) to docs/ and keep a pointer")


@pytest.mark.parametrize("name, obj", PUBLIC, ids=[n for n, _ in PUBLIC])
def test_public_callable_with_parameters_has_a_parameters_section(name, obj):
    if name in NO_PARAMETERS_SECTION_YET or not _takes_parameters(obj):
        return
    assert _has_parameters_section(obj), f"{name} takes parameters: its docstring needs a numpydoc Parameters section"


def test_the_list_of_names_without_a_parameters_section_is_current():
    public = dict(PUBLIC)
    gone = sorted(NO_PARAMETERS_SECTION_YET - public.keys())
    done = sorted(n for n in NO_PARAMETERS_SECTION_YET & public.keys() if _has_parameters_section(public[n]))
    assert not gone, f"no longer public names: take them off NO_PARAMETERS_SECTION_YET: {gone}"
    assert not done, f"these now have a Parameters section: take them off NO_PARAMETERS_SECTION_YET: {done}"


def test_the_length_rule_catches_a_long_docstring():
    class Long:
        pass

    Long.__doc__ = "Summary.\n\n" + "line\n" * MAX_CLASS_LINES
    assert len(inspect.getdoc(Long).splitlines()) > MAX_CLASS_LINES
    with pytest.raises(AssertionError, match="at most 80"):
        test_class_docstring_is_at_most_80_lines("Long", Long)
