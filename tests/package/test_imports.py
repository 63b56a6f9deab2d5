"""The layout of fasterm: wings by concern whose imports point down, no cycles, small modules.

The graph is read from the source with ``ast`` — module-level *and*
function-local imports (a function-local import is still a dependency; hiding
a cycle inside a function does not remove it).  Imports of third-party
packages are not edges.  A module is named by its path under ``fasterm/``
(``erm.solvers``, ``accounting.gaussian``, ``_validation``; a package by its
folder, for its ``__init__``); compiled modules are named by their ``.pyi``
stubs (``erm._losses``).

Each module belongs to a *wing*: the subpackage it lives in (``accounting``,
``mechanisms``, ``erm``, ``learning``, ``linear_model``) or, at the top
level, itself.  :data:`WINGS` ranks the wings, lowest first; a module may
import modules of its own wing or of a strictly lower rank, so ``erm`` and
``learning`` (one rank) never import each other, and a responsibility in the
wrong place shows up as an upward edge.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "fasterm"
if not (PACKAGE / "__init__.py").is_file():
    # tests/ copied alone (CI's run against the installed debug wheel): read the installed
    # package, which holds the same modules (its compiled ones beside their stubs)
    import fasterm

    PACKAGE = Path(fasterm.__file__).resolve().parent

#: Wing -> rank (lowest first).  README.md's "Where things live" shows the same order.
WINGS = {
    "_config": 0,  # the build record CMake writes
    "_validation": 1, "_warnings": 1, "_release": 1, "_buildinfo": 1,  # checks; DataWarning; release surface
    "accounting": 2,  # composition and every calibration: pure functions of public numbers
    "mechanisms": 3,  # Laplace/Gaussian/exponential releases, exact samplers, secure mode
    "erm": 4, "learning": 4,  # private ERM solvers | online experts, finite classes, SQ (side by side)
    "linear_model": 5,  # the scikit-learn estimators and their public default rules
    "audit": 6, "datasets": 6, "losses": 6, "online": 6, "preprocessing": 6,  # tools; the kept public paths
    "model_selection": 7,  # private hyperparameter search over the estimators (and pipelines)
    "__init__": 8,  # the public namespace
    "__main__": 9,  # the command-line job
}
SUBPACKAGES = ("accounting", "mechanisms", "erm", "learning", "linear_model")


def _module_files(root: Path = PACKAGE) -> dict[str, Path]:
    """Dotted name under fasterm -> source file (.py, or the .pyi stub of a compiled module)."""
    out = {}
    for p in sorted(root.rglob("*.py*")):
        if p.suffix not in (".py", ".pyi") or "__pycache__" in p.parts or "data" in p.parts:
            continue
        rel = p.relative_to(root).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1] or ["__init__"]
        name = ".".join(parts)
        if p.suffix == ".py" or name not in out:
            out[name] = p
    # written by CMake at build time (cmake/_config.py.in): absent from a fresh clone
    out.setdefault("_config", root / "_config.py.generated")
    return out


def wing(module: str) -> str:
    return module.split(".")[0]


def _imports(module: str, files: dict[str, Path]) -> set[str]:
    """The fasterm modules that ``module`` imports anywhere in its source."""
    path = files[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.stem == "__init__"
    package = module if is_pkg else module.rpartition(".")[0]
    if module == "__init__":
        package = ""
    out = set()

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                parts = (node.module or "").split(".")
                if parts[0] != "fasterm":
                    continue
                target = ".".join(parts[1:])
            else:
                base = package.split(".") if package else []
                base = base[:len(base) - (node.level - 1)]
                target = ".".join([*base, *(node.module.split(".") if node.module else [])])
            if target == "" or target in SUBPACKAGES:
                # from a package: its submodules, or names of its __init__
                for a in node.names:
                    sub = f"{target}.{a.name}" if target else a.name
                    out.add(sub if sub in files else (target or "__init__"))
            else:
                out.add(target)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "fasterm":
                    out.add(".".join(parts[1:]) or "__init__")
    out.discard(module)
    return out


def _graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    files = _module_files(root)
    return {m: _imports(m, files) for m in files if files[m].suffix == ".py"}


def _cycles(graph):
    state, stack, found = {}, [], []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                found.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(graph):
        if u not in state:
            visit(u)
    return found


def test_every_module_has_a_wing():
    files = _module_files()
    assert {wing(m) for m in files} - set(WINGS) == set(), "place the new module's wing in WINGS"
    for imported in _graph().values():
        assert imported <= set(files), imported - set(files)


def test_import_graph_is_acyclic():
    assert _cycles(_graph()) == []


def test_imports_point_down_the_wings():
    upward = [f"{m} ({wing(m)}, rank {WINGS[wing(m)]}) imports {v} ({wing(v)}, rank {WINGS[wing(v)]})"
              for m, imported in _graph().items() for v in sorted(imported)
              if wing(v) != wing(m) and WINGS[wing(v)] >= WINGS[wing(m)]]
    assert upward == []


def test_the_layout_is_small_at_the_top_and_no_module_is_long():
    top = sorted(p.name for p in PACKAGE.iterdir() if p.suffix in (".py", ".so", ".pyd"))
    assert len(top) <= 14, top
    subpackages = [p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()]
    assert sorted(subpackages) == sorted(SUBPACKAGES)
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 700}
    assert long == {}


def test_the_checks_see_function_local_and_relative_imports(tmp_path):
    # The parser must see imports hidden inside functions and resolve one- and
    # two-dot relative imports from a wing; the cycle check must report a cycle.
    (tmp_path / "erm").mkdir()
    (tmp_path / "accounting").mkdir()
    (tmp_path / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "_validation.py").write_text("", encoding="utf-8")
    (tmp_path / "accounting" / "__init__.py").write_text("from .gaussian import x\n", encoding="utf-8")
    (tmp_path / "accounting" / "gaussian.py").write_text("", encoding="utf-8")
    (tmp_path / "erm" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "erm" / "_losses.pyi").write_text("", encoding="utf-8")
    (tmp_path / "erm" / "solvers.py").write_text(
        "def f():\n    from . import _losses\n    from .. import accounting\n    from .._validation import c\n"
        "    import fasterm\n", encoding="utf-8")
    graph = _graph(tmp_path)
    assert graph["erm.solvers"] == {"erm._losses", "accounting", "_validation", "__init__"}
    assert graph["accounting"] == {"accounting.gaussian"}
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_public_paths_kept_from_the_flat_layout():
    # Paths people used before the wings (README's tour, the docs): they still import.
    import importlib

    import fasterm as fe

    for path, names in {"fasterm.accounting": ["advanced_composition", "BudgetAccountant", "calibrate_sgd_sigma"],
                        "fasterm.mechanisms": ["laplace", "laplace_l2", "gaussian", "exponential"],
                        "fasterm.losses": ["Logistic", "Hinge", "Squared", "Absolute", "Linear", "row_norms"],
                        "fasterm.online": ["RWM", "PrivateRWM", "run_rwm", "linear_learner"],
                        "fasterm.learning": ["private_pac_learner", "SQOracle"],
                        "fasterm.datasets": ["load_breast_cancer", "train_test_split", "FEATURE_BOUNDS"],
                        "fasterm.preprocessing": ["BoundedScaler"]}.items():
        module = importlib.import_module(path)
        for name in names:
            assert getattr(module, name) is not None, (path, name)
    for name in ("noise", "secure", "objpert", "ssp"):  # attributes of the namespace, as before
        assert getattr(fe, name).__name__.startswith("fasterm.")
    assert fe.losses.Logistic is importlib.import_module("fasterm.erm.losses").Logistic


def test_submodules_are_attributes_after_import_fasterm(tmp_path):
    # issue 35: README writes fasterm.preprocessing.BoundedScaler after `import fasterm`; the
    # modules `import fasterm` does not load load on first attribute access (PEP 562), as
    # scikit-learn's do, and `import fasterm` itself still imports neither them nor scikit-learn.
    # A fresh interpreter (run outside the checkout) for each: an import elsewhere would set them.
    for expr in ("fe.preprocessing.BoundedScaler", "fe.model_selection.PrivateSearch",
                 "fe.linear_model.DPLogisticRegression", "fe.audit.epsilon_lower_bound", "fe.erm.ssp.adassp",
                 "fe.accounting.gaussian_mu", "fe.mechanisms.laplace", "fe.learning.SQOracle"):
        code = ("import sys\nimport fasterm as fe\n"
                "assert not {'sklearn', 'fasterm.preprocessing', 'fasterm.model_selection', 'fasterm.audit'} & "
                "set(sys.modules), sorted(sys.modules)\n"
                f"assert {expr} is not None\n"
                f"assert '{expr.split('.')[1]}' in dir(fe)\n")
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
        assert r.returncode == 0, (expr, r.stderr)
    code = "import fasterm as fe\ntry:\n    fe.no_such_module\nexcept AttributeError as e:\n    print(e)\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert r.stdout.strip() == "module 'fasterm' has no attribute 'no_such_module'"


def test_module_docstrings_say_what_and_which_theorem_briefly():
    # The why of each rule lives in docs/ (solvers.rst and its siblings), linked from the code.
    long = {}
    for p in PACKAGE.rglob("*.py"):
        doc = ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")), clean=False) or ""
        if len(doc.splitlines()) > 60:
            long[str(p.relative_to(PACKAGE))] = len(doc.splitlines())
    assert long == {}
