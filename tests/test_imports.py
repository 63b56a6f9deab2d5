"""The import graph of fasterm's modules: acyclic, and every import points down the layers.

The graph is read from the source with ``ast`` — module-level *and*
function-local imports (a function-local import is still a dependency; hiding
a cycle inside a function does not remove it).  Imports of third-party
packages are not edges.  Each module sits in one layer of :data:`LAYERS`
(lowest first) and may import only modules of strictly lower layers, so a new
module must be placed here, and a responsibility in the wrong place shows up as
an upward edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "fasterm"

LAYERS = [
    # compiled kernels (src/fasterm/*.pyx) and the build record CMake writes
    {"_discrete", "_expmech", "_hitrun", "_losses", "_mclosses", "_noise", "_online", "_projections", "_sparse", "_config"},
    {"_validation", "_buildinfo", "_warnings", "_release", "_float_margin"},  # parameter checks; build report; DataWarning; release declaration; the floating-point margin
    {"_exact"},  # exact integer samplers, the randomness sources
    {"accounting"},  # composition theorems and every noise calibration
    {"secure"},  # the exact grid: rounding, grid calibrations, secure-mode setting
    {"noise", "losses", "constraints", "datasets", "audit"},  # samplers, losses, feasible sets
    {"_engine", "_backends"},  # the gradient loop; its noise backends
    {"_dask"},  # the loop over row-chunked dask arrays
    {"_design", "optimize", "expmech", "mechanisms", "univariate", "online"},  # solvers and mechanisms
    {"learning", "objpert", "ssp", "_bounds"},  # built on mechanisms (objpert: its private threshold; AdaSSP; _bounds: private ranges)
    {"solvers"},  # noisy_gd / noisy_sgd: step rules on the engine, built on optimize's checks
    {"_linear"},  # the linear-model fit (numpy only)
    {"_multiclass"},  # the K-class fit on one budget, on the binary fit's rules
    {"linear_model", "preprocessing"},  # scikit-learn estimators; BoundedScaler
    {"model_selection"},  # private hyperparameter search over the estimators
    {"__init__"},  # the public namespace
    {"__main__"},  # the command-line job
]
LAYER = {m: i for i, layer in enumerate(LAYERS) for m in layer}


def _imports(module: str) -> set[str]:
    """The fasterm modules that ``module`` imports anywhere in its source."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            parts = (node.module or "").split(".")
            if node.level == 0:
                if parts[0] != "fasterm":
                    continue
                parts = parts[1:]
            elif node.level != 1:
                continue
            if parts and parts[0]:
                out.add(parts[0])
            else:  # from . import a, b / from fasterm import a: modules, or names of the package
                out |= {a.name if a.name in LAYER else "__init__" for a in node.names}
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "fasterm":
                    out.add(parts[1] if len(parts) > 1 else "__init__")
    out.discard(module)
    return out


def _graph() -> dict[str, set[str]]:
    return {p.stem: _imports(p.stem) for p in sorted(PACKAGE.glob("*.py"))}


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


def test_every_module_has_a_layer():
    modules = {p.stem for p in PACKAGE.glob("*.py")} | {p.stem for p in PACKAGE.glob("*.pyi")}
    assert modules - set(LAYER) == set(), "place the new module in LAYERS"
    for imported in _graph().values():
        assert imported <= set(LAYER), imported - set(LAYER)


def test_import_graph_is_acyclic():
    assert _cycles(_graph()) == []


def test_imports_point_down_the_layers():
    upward = [f"{m} (layer {LAYER[m]}) imports {v} (layer {LAYER[v]})"
              for m, imported in _graph().items() for v in sorted(imported) if LAYER[v] >= LAYER[m]]
    assert upward == []


def test_the_checks_see_function_local_imports(tmp_path):
    # The parser must see an import hidden inside a function, and the cycle check must
    # report a cycle: a tiny graph with one, read the same way.
    src = "def f():\n    from . import optimize\n    from .accounting import x\n    import fasterm\n"
    tree = ast.parse(src)
    assert any(isinstance(n, ast.ImportFrom) for n in ast.walk(tree.body[0]))
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    original = PACKAGE
    try:
        globals()["PACKAGE"] = tmp_path
        (tmp_path / "secure.py").write_text(src, encoding="utf-8")
        assert _imports("secure") == {"optimize", "accounting", "__init__"}
    finally:
        globals()["PACKAGE"] = original
