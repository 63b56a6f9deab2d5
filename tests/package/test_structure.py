"""The package's structure (issue #36): one place decides how a fit is made, and one door into the core.

Both checks parse the source (``ast``) of ``fasterm/**/*.py``; neither imports it.

* **Solver names.**  A comparison (``==``, ``!=``, ``in``, ``not in``, a
  ``match`` case) against a solver or algorithm name (:data:`SOLVER_NAMES`) is
  a decision about how a fit is made.  Those decisions live in the rules and
  the plan (:mod:`fasterm.linear_model._rules`, :mod:`fasterm.linear_model._plan`):
  at most :data:`MAX_SOLVER_MODULES` modules may hold such comparisons.
* **Wings.**  The subpackages ``accounting``, ``erm``, ``learning``,
  ``linear_model`` and ``mechanisms`` are wings, and so is each top-level
  module (``model_selection``, ``__main__``, ...).  A private name (one
  underscore, not a dunder) defined in a module of one wing is never used from
  another wing — neither imported (``from fasterm.erm.solvers import _x``) nor
  read as an attribute (``solvers._x``, ``fasterm.erm.solvers._x``).  The
  estimators reach the solver core through :mod:`fasterm.erm.core`.
  Private *modules* (``erm/_dask.py``, ``erm/_float_margin.py``, ...) are
  counted separately (:func:`private_module_imports`) and not limited here.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "fasterm"

#: The public ``solver`` values, the algorithms they run and the gradient optimisers.
SOLVER_NAMES = frozenset({
    "noisy_gd", "noisy_sgd", "noisy_pgd", "objpert", "objpert_threshold", "expmech", "adassp", "class_sums",
    "gradient", "gd", "sgd", "pgd",
})
MAX_SOLVER_MODULES = 2
WINGS = ("accounting", "erm", "learning", "linear_model", "mechanisms")


def _modules(root=PACKAGE):
    """{dotted module name: path} of every .py file under ``root`` (the package folder)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _wing(module):
    parts = module.split(".")
    if len(parts) == 1:
        return parts[0]  # the package's own __init__
    if parts[1] in WINGS:
        return parts[1]
    return parts[1]  # a top-level module is its own wing


def _is_private(name):
    return name.startswith("_") and not name.startswith("__")


def _strings(node):
    """The string constants of a literal (a str, or a tuple/list/set/dict of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _strings(e)]
    if isinstance(node, ast.Dict):
        return [s for k in node.keys if k is not None for s in _strings(k)]
    return []


def solver_comparisons(root=PACKAGE) -> Counter:
    """{module: number of comparisons against a solver name} (module docstring)."""
    counts = Counter()
    for module, path in _modules(root).items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(
                    isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops):
                if any(s in SOLVER_NAMES for operand in [node.left, *node.comparators] for s in _strings(operand)):
                    counts[module] += 1
            elif isinstance(node, ast.match_case):
                pattern = node.pattern
                values = [p for p in ast.walk(pattern) if isinstance(p, ast.MatchValue)]
                if any(s in SOLVER_NAMES for p in values for s in _strings(p.value)):
                    counts[module] += 1
    return counts


def _resolve_from(module, is_package, node):
    """The absolute module name of ``from <node.module> import ...`` in ``module``."""
    if node.level == 0:
        return node.module
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _private_uses(root=PACKAGE):
    """[(module, target module, name, private module?)] of every use of a private name of another wing."""
    modules = _modules(root)
    found = []
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {}  # local name -> module it stands for
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in modules:
                        if any(map(_is_private, a.name.split("."))) and _wing(a.name) != _wing(module):
                            found.append((module, a.name, a.name.rsplit(".", 1)[-1], True))
                        if a.asname:
                            aliases[a.asname] = a.name
                        else:
                            aliases[a.name.split(".")[0]] = a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                source = _resolve_from(module, is_package, node)
                if source is None or not source.startswith("fasterm"):
                    continue
                for a in node.names:
                    full = f"{source}.{a.name}"
                    if full in modules:  # a submodule
                        aliases[a.asname or a.name] = full
                        if _is_private(a.name) and _wing(full) != _wing(module):
                            found.append((module, full, a.name, True))
                    elif _is_private(a.name) and source in modules and _wing(source) != _wing(module):
                        found.append((module, source, a.name, False))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or not _is_private(node.attr):
                continue
            chain, value = [], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if not isinstance(value, ast.Name) or value.id not in aliases:
                continue
            target = ".".join([aliases[value.id], *reversed(chain)])
            if target in modules and _wing(target) != _wing(module):
                full = f"{target}.{node.attr}"
                found.append((module, target, node.attr, full in modules))
    return found


def cross_wing_private_uses(root=PACKAGE):
    """The uses of a private name (not a module) of another wing: [(module, target, name)]."""
    return [(m, t, n) for m, t, n, is_module in _private_uses(root) if not is_module]


def private_module_imports(root=PACKAGE):
    """The uses of a private module of another wing (reported, not limited): [(module, target, name)]."""
    return [(m, t, n) for m, t, n, is_module in _private_uses(root) if is_module]


def test_solver_names_are_compared_in_at_most_two_modules():
    counts = solver_comparisons()
    assert len(counts) <= MAX_SOLVER_MODULES, dict(counts)


def test_no_private_name_is_used_across_wings():
    uses = cross_wing_private_uses()
    assert not uses, uses


def test_the_counters_see_what_they_count(tmp_path):
    # a planted comparison and a planted cross-wing use are found (the checks are not blind)
    pkg = tmp_path / "fasterm"
    (pkg / "erm").mkdir(parents=True)
    (pkg / "linear_model").mkdir()
    for p in (pkg, pkg / "erm", pkg / "linear_model"):
        (p / "__init__.py").write_text("")
    (pkg / "erm" / "solvers.py").write_text("def _x():\n    pass\n")
    (pkg / "erm" / "_dask.py").write_text("")
    (pkg / "linear_model" / "a.py").write_text(
        "from ..erm.solvers import _x\n"
        "import fasterm.erm.solvers as s\n"
        "from ..erm import solvers\n"
        "from fasterm.erm import _dask\n"
        "def f(solver):\n"
        "    s._x(); solvers._x(); _x()\n"
        "    if solver == 'noisy_gd' or solver in ('gd', 'pgd'):\n"
        "        return 1\n"
        "    match solver:\n"
        "        case 'objpert':\n"
        "            return 2\n")
    (pkg / "erm" / "b.py").write_text("from .solvers import _x\nif 'x' == 'y':\n    pass\n")
    assert solver_comparisons(pkg) == Counter({"fasterm.linear_model.a": 3})
    assert sorted(cross_wing_private_uses(pkg)) == [("fasterm.linear_model.a", "fasterm.erm.solvers", "_x")] * 3
    assert private_module_imports(pkg) == [("fasterm.linear_model.a", "fasterm.erm._dask", "_dask")]


if __name__ == "__main__":  # the counts, for a report
    import sys

    root = Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE
    counts = solver_comparisons(root)
    print(f"solver-name comparisons: {sum(counts.values())} in {len(counts)} modules")
    for m, c in sorted(counts.items()):
        print(f"  {m}: {c}")
    uses = cross_wing_private_uses(root)
    print(f"cross-wing private names: {len(uses)}")
    for u in sorted(uses):
        print("  ", *u)
    print(f"cross-wing private modules: {len(private_module_imports(root))}")
