"""Sphinx configuration: the API reference is read from the *installed* fasterm.

Build (CI runs this, warnings are errors):
    pip install ".[docs]" && python -m sphinx -W --keep-going -b html docs docs/_build/html
"""

import os
import re
import sys

# Document the installed package (with its compiled modules and generated
# _config.py), never the source folder next to docs/, even when sphinx is run
# from the repository root (python -m sphinx puts the working directory first
# on sys.path).
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _ROOT]

import fasterm  # noqa: E402

project = "fasterm"
author = "the fasterm developers"
copyright = "the fasterm developers, BSD-3-Clause"
release = fasterm.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]

# Docstrings are NumPy style (napoleon); signatures come from the code, the
# annotations are shown in the description, not in the (long) signature line.
napoleon_google_docstring = False
napoleon_numpy_docstring = True
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "description"
autodoc_class_signature = "separated"
add_module_names = False
# Docstrings name literals with single backquotes; read those as code.
default_role = "code"

html_theme = "alabaster"
exclude_patterns = ["_build"]


def _absolute_values(app, what, name, obj, options, lines):
    """fasterm's docstrings write |x| for absolute values and sizes (|C|) and
    never use reST substitutions: read every bar as a literal bar."""
    if name.startswith("fasterm"):
        lines[:] = [re.sub(r"(?<!\\)\|", r"\\|", line) for line in lines]


def _skip_sklearn_routing(app, what, name, obj, skip, options):
    """scikit-learn's generated set_*_request methods (metadata routing) are
    its API, documented there, not fasterm's."""
    return True if re.fullmatch(r"set_\w+_request", name) else None


def setup(app):
    app.connect("autodoc-process-docstring", _absolute_values)
    app.connect("autodoc-skip-member", _skip_sklearn_routing)
