"""Every page of docs/ and README.md runs top to bottom as a reader would paste it.

Each page's Python blocks are executed in order, in one namespace per page (a
fresh dict), in a temporary working directory.  Which blocks are Python:

* in a ``.rst`` page, every literal block -- after a paragraph ending in
  ``::``, or ``.. code-block:: python`` -- is Python; a block that is not (a
  shell command, printed output, a sketch) says so in the page by its
  language, ``.. code-block:: bash`` or ``.. code-block:: text``, and Sphinx
  shows it without Python highlighting;
* in ``README.md`` every fenced block names its language, and the ``python``
  ones are Python;
* an interactive session -- an rst paragraph of ``>>>`` lines, ``.. code-block::
  pycon``, a ``pycon`` fence -- runs as a doctest in the page's namespace: its
  printed output must match.

A block in a language that is neither Python nor one of the declared others
fails the test instead of being passed over, and the blocks found in a page
are compared with docutils' own reading of it.  A page is skipped only when
an optional dependency it needs is not installed (one it imports, or
scikit-learn for the estimators).  A fasterm.DataWarning is an error unless
the block that emits it names ``DataWarning`` (the reader is told to expect it).
"""

from __future__ import annotations

import ast
import doctest
import importlib.util
import pathlib
import re
import warnings
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.rst")) + [p for p in [ROOT / "README.md"] if p.exists()]
needs_source_tree = pytest.mark.skipif(not DOCS.is_dir(), reason="needs the source tree (docs/)")

PYTHON = {"python", "python3", "py"}
SESSION = {"pycon", "doctest"}  # >>> prompts and their output
# shown, not run: shell commands, printed output, sketches, other languages
OTHER = {"text", "none", "bash", "console", "shell", "sh", "cython", "c++", "cpp", "toml", "ini"}
# optional dependencies: a page that needs one is skipped when it is absent
OPTIONAL = ("sklearn", "pandas", "scipy", "dask", "distributed", "matplotlib", "statsmodels")
# fasterm names that need scikit-learn (the estimators and what builds on them)
_NEEDS_SKLEARN = re.compile(r"\b(DPLogisticRegression|DPLinearSVC|DPLinearRegression|PrivateSearch|BoundedScaler)\b")


@dataclass
class Block:
    page: str
    line: int  # 1-based line of the block's first line of code
    language: str  # "default" for an rst literal block after "::"
    code: str


def _indent(line):
    return len(line) - len(line.lstrip(" "))


def _body(lines, start, parent):
    """The block indented past ``parent`` from lines[start] on: (first line, dedented text, end)."""
    i = start
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i == len(lines) or _indent(lines[i]) <= parent:
        return i, "", i
    first, ind, j = i, _indent(lines[i]), i
    while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) >= ind):
        j += 1
    while j > first and not lines[j - 1].strip():
        j -= 1
    return first, "\n".join(line[ind:] for line in lines[first:j]) + "\n", j


_DIRECTIVE = re.compile(r"^(\s*)\.\.\s+([\w:-]+)::\s*(.*?)\s*$")
_COMMENT = re.compile(r"^(\s*)\.\.(\s|$)")
_LIST_MARKER = re.compile(r"^(\s*)([-*+]|\d+[.)]|#\.)\s+")
_CODE_DIRECTIVES = {"code-block", "code", "sourcecode"}
# directives whose content is not reStructuredText (no literal blocks inside)
_RAW_DIRECTIVES = {"math", "raw", "csv-table", "literalinclude", "toctree"}


def rst_blocks(path):
    """The literal blocks of a reStructuredText page, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        line = lines[i]
        m = _DIRECTIVE.match(line)
        if m:
            indent, name, arg = len(m.group(1)), m.group(2), m.group(3)
            if name in _CODE_DIRECTIVES:
                j = i + 1  # options (:caption: ...) first, then a blank line and the code
                while j < len(lines) and lines[j].strip().startswith(":") and _indent(lines[j]) > indent:
                    j += 1
                first, code, end = _body(lines, j, indent)
                blocks.append(Block(path.name, first + 1, arg.split()[0].lower() if arg else "default", code))
                i = end
            elif name in _RAW_DIRECTIVES:
                i = _body(lines, i + 1, indent)[2]
            else:
                i += 1  # admonitions, tables, autodoc: their content is read as text
            continue
        if line.lstrip().startswith(">>>") and (i == 0 or not lines[i - 1].strip()):
            # a doctest block: a paragraph of >>> lines and their output, up to a blank line
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            ind = _indent(line)
            blocks.append(Block(path.name, i + 1, "doctest", "\n".join(x[ind:] for x in lines[i:j]) + "\n"))
            i = j
            continue
        if _COMMENT.match(line):  # a comment: its indented body is not shown
            i = _body(lines, i + 1, _indent(line))[2]
            continue
        stripped = line.rstrip()
        if stripped.endswith("::") and not stripped.endswith("\\::") and not re.fullmatch(r"\s*:{3,}", stripped):
            # a paragraph ending in "::" (or a lone "::"): the block indented past it is literal
            # (a list item's text starts after its marker)
            marker = _LIST_MARKER.match(line)
            first, code, end = _body(lines, i + 1, marker.end() if marker else _indent(line))
            if code:
                blocks.append(Block(path.name, first + 1, "default", code))
            i = end
            continue
        i += 1
    return blocks


_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([^`\s]*)")


def markdown_blocks(path):
    """The fenced blocks of a Markdown page, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, language = m.group(1), m.group(2).lower() or "(none)"
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        blocks.append(Block(path.name, i + 2, language, "\n".join(lines[i + 1:j]) + "\n"))
        i = j + 1
    return blocks


def all_blocks(path):
    return markdown_blocks(path) if path.suffix == ".md" else rst_blocks(path)


def python_blocks(path):
    """The Python blocks of a page, in order; a block in an undeclared language is an error."""
    blocks = all_blocks(path)
    default = set() if path.suffix == ".md" else {"default"}
    unknown = [(b.page, b.line, b.language) for b in blocks if b.language not in PYTHON | SESSION | OTHER | default]
    assert not unknown, f"blocks without a declared language (python, pycon, or one of {sorted(OTHER)}): {unknown}"
    return [b for b in blocks if b.language in PYTHON | SESSION | default]


def _imported(code):
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _session(block):
    return doctest.DocTestParser().get_doctest(block.code, {}, block.page, block.page, block.line - 1)


def _source(block):
    """The code of a block (of a session: its >>> statements)."""
    if block.language not in SESSION:
        return block.code
    return "".join(example.source for example in _session(block).examples)


def _run(block, path, namespace):
    if block.language in SESSION:
        test = doctest.DocTestParser().get_doctest(block.code, namespace, path.name, str(path), block.line - 1)
        report = []
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        result = runner.run(test, out=report.append, clear_globs=False)
        namespace.update(test.globs)  # the DocTest ran in a copy of the namespace
        assert result.failed == 0, "".join(report)
    else:
        # compiled at the page's line numbers, so that a traceback points into the page
        exec(compile("\n" * (block.line - 1) + block.code, str(path), "exec"), namespace)


def _close_clients(namespace):
    """A page that failed half-way must not leave a default dask Client to the next tests."""
    for value in namespace.values():
        if type(value).__module__.startswith("distributed") and hasattr(value, "close"):
            value.close()


@needs_source_tree
@pytest.mark.parametrize("path", PAGES, ids=[p.name for p in PAGES])
def test_page_runs_in_order(path, tmp_path, monkeypatch):
    blocks = python_blocks(path)
    for block in blocks:  # every Python block parses, whatever is installed
        compile(_source(block), f"{block.page}:{block.line}", "exec")
    needed = set().union(*(_imported(_source(b)) for b in blocks))
    if any(_NEEDS_SKLEARN.search(b.code) for b in blocks):
        needed.add("sklearn")
    for name in OPTIONAL:
        if name in needed:
            pytest.importorskip(name)
    import fasterm

    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}
    try:
        for block in blocks:
            with warnings.catch_warnings():
                said = "DataWarning" in block.code
                warnings.simplefilter("ignore" if said else "error", fasterm.DataWarning)
                _run(block, path, namespace)
    finally:
        _close_clients(namespace)


# -- the reader of the pages, checked -------------------------------------------------------------


def _docutils_literal_blocks(path):
    """(language, text) of every literal block docutils shows on an rst page (Sphinx's
    directives and roles stubbed: they hold no literal blocks on these pages)."""
    pytest.importorskip("docutils")
    from docutils import nodes
    from docutils.core import publish_doctree
    from docutils.parsers.rst import Directive, directives
    from docutils.parsers.rst.directives.body import CodeBlock

    class _AnyOptions(dict):
        def __missing__(self, key):
            return directives.unchanged

        def __contains__(self, key):
            return True

    class _Stub(Directive):  # an autodoc / toctree directive: nothing shown from the page's text
        optional_arguments, final_argument_whitespace, has_content = 1, True, True
        option_spec = _AnyOptions(name=directives.unchanged)  # non-empty: options allowed

        def run(self):
            return []

    class _CodeBlock(CodeBlock):  # Sphinx's code-block: also :caption:, :emphasize-lines:, ...
        option_spec = _AnyOptions(CodeBlock.option_spec)

    for name in ("code-block", "sourcecode"):
        directives.register_directive(name, _CodeBlock)
    for name in ("toctree", "autoclass", "autofunction", "automodule", "autodata", "automethod",
                 "autoattribute", "currentmodule", "module"):
        directives.register_directive(name, _Stub)
    settings = {"report_level": 5, "halt_level": 5, "syntax_highlight": "none", "file_insertion_enabled": False}
    tree = publish_doctree(path.read_text(encoding="utf-8"), source_path=str(path), settings_overrides=settings)
    out = []
    for node in tree.findall(lambda n: isinstance(n, (nodes.literal_block, nodes.doctest_block))):
        parent, in_error = node.parent, False
        while parent is not None:
            in_error |= isinstance(parent, nodes.system_message)
            parent = parent.parent
        if isinstance(node, nodes.doctest_block):
            out.append(("doctest", node.astext()))
        elif not in_error:
            classes = [c for c in node["classes"] if c != "code"]
            out.append((classes[0] if "code" in node["classes"] and classes else "default", node.astext()))
    return out


@needs_source_tree
@pytest.mark.parametrize("path", [p for p in PAGES if p.suffix == ".rst"], ids=lambda p: p.name)
def test_blocks_are_docutils_literal_blocks(path):
    """The reader above finds exactly the literal blocks docutils finds, with their languages."""
    ours = [(b.language, b.code.rstrip("\n")) for b in rst_blocks(path)]
    theirs = [(language, text.rstrip("\n")) for language, text in _docutils_literal_blocks(path)]
    assert ours == theirs


def test_reader_on_constructed_pages(tmp_path):
    """Each form of block, and what is not a block, on a page written for the purpose."""
    page = tmp_path / "page.rst"
    page.write_text(
        "Title\n=====\n\n"
        "A paragraph::\n\n    a = 1\n\n"
        "* an item whose text ends in::\n\n      b = a + 1\n\n  the item goes on\n\n"
        "::\n\n    c = b\n\n        # still c's block\n\n"
        ".. code-block:: python\n   :caption: x\n\n   d = c\n\n"
        ".. code-block:: bash\n\n   pip install .\n\n"
        ".. note::\n\n   In a note::\n\n       e = d\n\n"
        ".. a comment::\n\n       not = shown\n\n"
        ".. math::\n\n   x ::\n\n      y\n\n"
        "Escaped \\::\n\n    not a block\n\n"
        ">>> f = 2\n>>> print(f * 3)\n6\n",
        encoding="utf-8")
    found = [(b.language, b.code) for b in rst_blocks(page)]
    assert found == [("default", "a = 1\n"), ("default", "b = a + 1\n"),
                     ("default", "c = b\n\n    # still c's block\n"), ("python", "d = c\n"),
                     ("bash", "pip install .\n"), ("default", "e = d\n"),
                     ("doctest", ">>> f = 2\n>>> print(f * 3)\n6\n")]
    if importlib.util.find_spec("docutils"):
        assert found == [(lang, text + "\n") for lang, text in _docutils_literal_blocks(page)]
    page = tmp_path / "page.md"
    page.write_text("# T\n\n```python\nx = 1\n```\n\n```bash\nls\n```\n\n```\ntree\n```\n", encoding="utf-8")
    assert [(b.line, b.language, b.code) for b in markdown_blocks(page)] == [
        (4, "python", "x = 1\n"), (8, "bash", "ls\n"), (12, "(none)", "tree\n")]
    with pytest.raises(AssertionError, match="without a declared language"):
        python_blocks(page)


def test_sessions_check_their_output(tmp_path):
    """A >>> session runs in the page's namespace, and output that differs from the page fails."""
    namespace = {"a": 2}
    _run(Block("p.rst", 1, "doctest", ">>> b = a * 3\n>>> b\n6\n"), tmp_path / "p.rst", namespace)
    assert namespace["b"] == 6
    assert _source(Block("p.rst", 1, "doctest", ">>> b = a * 3\n>>> b\n6\n")) == "b = a * 3\nb\n"
    with pytest.raises(AssertionError, match="Expected"):
        _run(Block("p.rst", 1, "pycon", ">>> b + 1\n8\n"), tmp_path / "p.rst", namespace)


# -- getting_started.rst: its table is the example script's ------------------------------------


@needs_source_tree
def test_getting_started_table_is_the_example_scripts():
    """The page's first block makes the table that docs/examples/getting_started.py measures,
    so the page's figures (measured by the script) are about the data the reader makes."""
    pytest.importorskip("sklearn")
    pd = pytest.importorskip("pandas")
    example = DOCS / "examples" / "getting_started.py"
    spec = importlib.util.spec_from_file_location("getting_started_example", example)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    first = python_blocks(DOCS / "getting_started.rst")[0]
    namespace = {}
    exec(first.code, namespace)
    df, y = module.make_table(6000)
    pd.testing.assert_frame_equal(namespace["df"], df)
    assert (namespace["y"] == y).all()
    assert list(module.BOUNDS) == list(df.columns[:4]) and list(module.CATEGORIES) == list(df.columns[4:])
