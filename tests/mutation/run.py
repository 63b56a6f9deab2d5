"""Mutation harness: plant each privacy bug of the catalogue in a copy of fasterm and
check that the tests catch it.

Usage (from the repository root)::

    python tests/mutation/run.py                 # every mutant, one at a time
    python tests/mutation/run.py -j 2            # two mutants in parallel
    python tests/mutation/run.py --only expmech-rate-x1.1 --list

What it does:

1. Copies the package folder ``fasterm/`` of this repository to a temporary
   directory, together with its compiled modules — those beside the sources
   (an in-place build, or the prebuilt modules copied there), or else those
   of the installed fasterm (``--compiled DIR`` to choose).
2. Runs every test named in the catalogue on the unmutated copy: they must
   pass (otherwise a "kill" would mean nothing).
3. For each mutant of ``tests/mutation/catalogue.py``: a fresh copy, each
   ``old`` snippet replaced by ``new`` (a snippet found 0 times is STALE,
   more than once AMBIGUOUS: the catalogue must be updated), then
   ``python -P -m pytest -x <its tests>`` with ``PYTHONPATH`` = the copy
   (``-P``: the repository root is not put on ``sys.path``, so the copy is
   what the tests import).  Killed = the tests fail (pytest exit code 1).

Prints one line per mutant (status, the first failing test, seconds) and a
summary; exits 0 only if every mutant is killed and none is stale.  The
compiled C++ loop cannot be mutated this way; mutants act where Python hands
it the clip, the scale and the noise.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from catalogue import MUTANTS  # noqa: E402

EXT = (".so", ".pyd")


def _compiled_dir(explicit: str | None) -> Path:
    if explicit:
        return Path(explicit)
    src = ROOT / "fasterm"
    if any(p.name.startswith("_losses") and p.suffix in EXT for p in (src / "erm").iterdir()):
        return src
    out = subprocess.run([sys.executable, "-P", "-c",
                          "import os, fasterm as m; print(os.path.dirname(m.__file__))"],
                         capture_output=True, text=True, cwd=tempfile.gettempdir())
    if out.returncode != 0:
        sys.exit("no compiled fasterm modules found: build in place, copy the prebuilt modules into "
                 "fasterm/, install fasterm, or pass --compiled DIR\n" + out.stderr[-2000:])
    return Path(out.stdout.strip())


def _make_base(tmp: Path, compiled: Path) -> Path:
    base = tmp / "base"
    shutil.copytree(ROOT / "fasterm", base / "fasterm",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    # The compiled modules live in the wings (fasterm/erm/_losses...), _config.py at the top.
    for p in [compiled / "_config.py", *compiled.glob("*/*")]:
        if p.exists() and (p.suffix in EXT or p.name == "_config.py"):
            dest = base / "fasterm" / p.relative_to(compiled)
            if not dest.exists():
                shutil.copy2(p, dest)
    return base


def _apply(mutant, src: Path) -> str | None:
    """Apply the edits to ``src`` (a package folder); None, or why the mutant is stale."""
    path = src / mutant.file
    text = path.read_text(encoding="utf-8")
    for old, new in mutant.edits:
        count = text.count(old)
        if count != 1:
            kind = "STALE" if count == 0 else "AMBIGUOUS"
            return f"{kind}: snippet found {count} times in {mutant.file}: {old[:60]!r}"
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return None


def _pytest(pkg_parent: Path, tests, timeout):
    env = dict(os.environ, PYTHONPATH=str(pkg_parent), PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-P", "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-rf", *tests]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", time.perf_counter() - t0
    return proc.returncode, proc.stdout + proc.stderr, time.perf_counter() - t0


def _first_failure(output: str) -> str:
    m = re.search(r"^FAILED (\S+)", output, re.M)
    return m.group(1).replace("tests/", "") if m else "?"


def _run_mutant(mutant, base: Path, tmp: Path, timeout):
    work = tmp / f"m-{mutant.name}"
    shutil.copytree(base, work)
    stale = _apply(mutant, work / "fasterm")
    if stale:
        return mutant, "STALE", stale, 0.0
    rc, out, secs = _pytest(work, mutant.tests, timeout)
    shutil.rmtree(work, ignore_errors=True)
    if rc is None:
        return mutant, "ERROR", f"timeout after {timeout} s", secs
    if rc == 1:
        return mutant, "KILLED", _first_failure(out), secs
    if rc == 0:
        return mutant, "SURVIVED", "", secs
    return mutant, "ERROR", f"pytest exit code {rc}: {out.strip().splitlines()[-1] if out.strip() else ''}", secs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="run only these mutants (names)")
    ap.add_argument("--list", action="store_true", help="list the catalogue and exit")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="mutants run in parallel (default 1)")
    ap.add_argument("--compiled", help="folder holding the compiled fasterm modules to copy")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant (default 600)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the run on the unmutated copy")
    args = ap.parse_args(argv)

    mutants = [m for m in MUTANTS if not args.only or m.name in args.only]
    if args.only and len(mutants) != len(set(args.only)):
        known = {m.name for m in MUTANTS}
        return print(f"unknown mutants: {sorted(set(args.only) - known)}") or 2
    if args.list:
        for m in mutants:
            print(f"{m.name:40s} {m.file:14s} {m.description}\n{'':40s} tests: {', '.join(m.tests)}")
        return 0

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fasterm-mutants-") as tmpname:
        tmp = Path(tmpname)
        base = _make_base(tmp, _compiled_dir(args.compiled))
        check = subprocess.run([sys.executable, "-P", "-c", "import fasterm; print(fasterm.__file__)"],
                               env=dict(os.environ, PYTHONPATH=str(base)), capture_output=True, text=True,
                               cwd=ROOT)
        if not check.stdout.strip().startswith(str(base)):
            print(f"the copy is not what Python imports: {check.stdout.strip()} {check.stderr[-500:]}")
            return 2
        if not args.no_baseline:
            tests = sorted({t for m in mutants for t in m.tests})
            rc, out, secs = _pytest(base, tests, args.timeout * 2)
            print(f"baseline (unmutated copy, {len(tests)} test selections): "
                  f"{'passed' if rc == 0 else 'FAILED'} in {secs:.1f} s", flush=True)
            if rc != 0:
                print(out[-4000:])
                return 2
        print(f"{'mutant':40s} {'status':9s} {'seconds':>7s}  killed by / reason", flush=True)
        results = []
        with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(_run_mutant, m, base, tmp, args.timeout) for m in mutants]
            for fut in futures:  # in catalogue order
                m, status, detail, secs = fut.result()
                results.append(status)
                print(f"{m.name:40s} {status:9s} {secs:7.1f}  {detail}", flush=True)
    total = time.perf_counter() - start
    killed = results.count("KILLED")
    bad = len(results) - killed
    print(f"\n{len(results)} mutants: {killed} killed, {results.count('SURVIVED')} survived, "
          f"{results.count('STALE')} stale, {results.count('ERROR')} errors; {total:.0f} s in total")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
