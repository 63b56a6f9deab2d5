"""Fit-hash list: SHA-256 of every released output over a grid of configurations.

Usage (from the repository root, with the build to check on ``PYTHONPATH``)::

    python tests/hashes/make.py --out /tmp/before.json     # write the list
    python tests/hashes/make.py --check /tmp/before.json   # compare; exit 1 on any difference
    python tests/hashes/make.py --list                     # the configuration ids
    python tests/hashes/make.py --only 'noisy_sgd' --out x.json   # ids matching a regex
    python tests/hashes/make.py --fields --out f.json      # one hash per released attribute

Each configuration of :func:`configs.grid` (``tests/hashes/configs.py``) is one
fit on small fixed synthetic data with a fixed seed.  Its entry is the SHA-256
of everything the fit released: for an estimator every fitted attribute —
``coef_``, ``intercept_``, ``classes_``, ``epsilon_``, ``delta_``,
``n_iter_``, ``bounds_`` and every field of ``result_`` with its ``info``
(the calibrated noise scale, steps, step size, sensitivity, …), not the
constructor's parameters —; for a solver's result every field; for the
main job its printed table (fit times set to 0).  Arrays are hashed with
their dtype and shape, scalars with their type (``float.hex`` for floats), and
the warnings the fit emitted (category and message) are part of the entry.  A
configuration that raises is recorded as ``"raises <ExceptionType>"``.  The
JSON maps each readable id to its entry, keys sorted; ``"_env"`` holds the
versions the list was made with (not compared, only shown when they differ).

The list is for a *before/after* comparison on one machine and one build
environment: floating-point results may legitimately differ with the BLAS,
the compiler, the CPU's instruction set or the number of CPUs the process may
use (the compiled kernels split rows by thread), so a list made elsewhere is
no reference.  BLAS pools are limited to one thread while it runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import fractions
import hashlib
import importlib.util
import json
import os
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent


def _load_configs():
    """``configs.py`` beside this file, as the module ``fit_hash_configs`` (once per process)."""
    name = "fit_hash_configs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / "configs.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


configs = _load_configs()

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _leaf(value) -> str:
    """A bit-exact text of a value (its type included)."""
    t = type(value).__name__
    if isinstance(value, (bool, int, str, bytes)) or value is None:
        return f"{t}:{value!r}"
    if isinstance(value, float):  # python and numpy floats
        return f"{t}:{float(value).hex()}"
    if isinstance(value, np.generic):
        return f"{t}:{value.tobytes().hex()}"
    if isinstance(value, (fractions.Fraction, complex)):
        return f"{t}:{value}"
    return f"{t}:{_ADDRESS.sub('', repr(value))}"


def _hash_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fingerprint(obj, path: str = "", out: dict | None = None, seen: set | None = None,
                skip_params: bool = True) -> dict[str, str]:
    """Flatten ``obj`` into ``{path: exact text}`` leaves (arrays as SHA-256 of their bytes).

    Fitted estimators (top level): every ``vars()`` entry but the constructor's
    parameters (the caller's input, ``skip_params``); nested estimators (a
    search's ``best_estimator_``) with their parameters.  Dataclasses: every
    field and any other ``__dict__`` entry.  Dicts by key, sequences by index.
    """
    out = {} if out is None else out
    seen = set() if seen is None else seen
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            out[path] = f"ndarray[object]{obj.shape}:{_leaf(tuple(obj.ravel().tolist()))}"
        else:
            body = np.ascontiguousarray(obj).tobytes()
            out[path] = f"ndarray[{obj.dtype.str}]{obj.shape}:{_hash_bytes(body)}"
        return out
    if sp.issparse(obj):
        csr = obj.tocsr()
        for part in ("data", "indices", "indptr"):
            fingerprint(getattr(csr, part), f"{path}<{type(obj).__name__}>.{part}", out, seen)
        return out
    if isinstance(obj, np.random.Generator):
        out[path] = f"Generator:{obj.bit_generator.state!r}"
        return out
    if isinstance(obj, dict):
        if not obj:
            out[path] = "dict:{}"
        for k in sorted(obj, key=repr):
            fingerprint(obj[k], f"{path}[{k!r}]", out, seen)
        return out
    if isinstance(obj, (list, tuple)):
        out[f"{path}#"] = f"{type(obj).__name__}:len={len(obj)}"
        for i, v in enumerate(obj):
            fingerprint(v, f"{path}[{i}]", out, seen)
        return out
    if isinstance(obj, (set, frozenset)):
        out[path] = f"{type(obj).__name__}:{sorted(_leaf(v) for v in obj)}"
        return out
    attrs = None
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        attrs = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
        attrs.update(vars(obj))
    elif hasattr(obj, "get_params") and hasattr(obj, "__dict__"):  # scikit-learn estimator
        attrs = dict(vars(obj))
        if skip_params:
            for p in obj.get_params(deep=False):
                attrs.pop(p, None)
    if attrs is None:
        out[path] = _leaf(obj)
        return out
    if id(obj) in seen:
        out[path] = f"<cycle {type(obj).__name__}>"
        return out
    seen.add(id(obj))
    out[f"{path}<type>"] = type(obj).__name__
    for k in sorted(attrs):
        fingerprint(attrs[k], f"{path}.{k}" if path else k, out, seen, skip_params=False)
    return out


def digest(leaves: dict[str, str]) -> str:
    """SHA-256 of the sorted leaves."""
    return _hash_bytes("\n".join(f"{k}={v}" for k, v in sorted(leaves.items())).encode())


def run_config(config, fields: bool = False):
    """The entry of one configuration: its hash (``fields``: ``{leaf path: hash}``) or "raises X"."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            released = config.run()
        except Exception as exc:  # noqa: BLE001 - the exception type is the entry
            return f"raises {type(exc).__name__}"
    if isinstance(released, str):
        leaves = {"output": f"str:{_hash_bytes(released.encode())}"}
    else:
        leaves = fingerprint(released)
    leaves["warnings"] = _leaf(tuple(f"{w.category.__name__}: {w.message}" for w in caught))
    if fields:
        return {k: _hash_bytes(v.encode()) for k, v in sorted(leaves.items())}
    return digest(leaves)


def environment() -> dict[str, str]:
    """Versions and the CPU count the list depends on (shown, never compared)."""
    env = {"python": sys.version.split()[0], "numpy": np.__version__,
           "cpus": str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())}
    for mod in ("scipy", "sklearn", "dask"):
        try:
            env[mod] = __import__(mod).__version__
        except ImportError:
            env[mod] = "absent"
    return env


def make(config_list, fields: bool = False, progress=None) -> dict:
    """``{id: entry}`` for ``config_list``, BLAS limited to one thread."""
    try:
        from threadpoolctl import threadpool_limits
        limits = threadpool_limits(limits=1)
    except ImportError:
        limits = None
    try:
        out = {}
        for i, c in enumerate(config_list):
            out[c.id] = run_config(c, fields)
            if progress:
                progress(i + 1, len(config_list))
        return out
    finally:
        if limits is not None:
            limits.restore_original_limits()


def compare(reference: dict, current: dict) -> list[str]:
    """One line per configuration whose entry differs, is missing or is new."""
    lines = []
    for cid in sorted(set(reference) | set(current)):
        if cid == "_env":
            continue
        old, new = reference.get(cid), current.get(cid)
        if old == new:
            continue
        if old is None:
            lines.append(f"NEW      {cid}: {_short(new)}")
        elif new is None:
            lines.append(f"MISSING  {cid} (was {_short(old)})")
        elif isinstance(old, dict) and isinstance(new, dict):
            changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            lines.append(f"CHANGED  {cid}: fields {', '.join(changed)}")
        else:
            lines.append(f"CHANGED  {cid}: {_short(old)} -> {_short(new)}")
    return lines


def _short(entry) -> str:
    if isinstance(entry, dict):
        return f"{len(entry)} fields"
    return entry if entry.startswith("raises") else entry[:16]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", metavar="FILE", help="write the list (JSON, sorted keys)")
    ap.add_argument("--check", metavar="FILE", help="compare with a list; exit 1 on any difference")
    ap.add_argument("--only", metavar="REGEX", help="the configurations whose id matches REGEX (re.search)")
    ap.add_argument("--fields", action="store_true", help="one hash per released attribute instead of one per fit")
    ap.add_argument("--list", action="store_true", help="print the configuration ids and exit")
    args = ap.parse_args(argv)
    config_list = configs.grid()
    if args.only:
        config_list = [c for c in config_list if re.search(args.only, c.id)]
    if args.list:
        print("\n".join(c.id for c in config_list))
        return 0
    if not (args.out or args.check):
        ap.error("give --out FILE, --check FILE or --list")
    reference = None
    if args.check:
        reference = json.loads(Path(args.check).read_text(encoding="utf-8"))
        if args.only:
            reference = {k: v for k, v in reference.items() if k == "_env" or re.search(args.only, k)}
    t0 = time.perf_counter()
    tty = sys.stderr.isatty()

    def progress(i, total):
        if tty and (i % 50 == 0 or i == total):
            sys.stderr.write(f"\r{i}/{total} configurations")
            sys.stderr.flush()

    result = make(config_list, args.fields, progress)
    if tty:
        sys.stderr.write("\n")
    seconds = time.perf_counter() - t0
    raising = sum(isinstance(v, str) and v.startswith("raises") for v in result.values())
    result["_env"] = environment()
    print(f"{len(config_list)} configurations ({raising} raise) in {seconds:.1f} s")
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"written to {args.out}")
    if reference is not None:
        if reference.get("_env") != result["_env"]:
            print(f"note: environment differs: {reference.get('_env')} -> {result['_env']}")
        ref_fields = any(isinstance(v, dict) for k, v in reference.items() if k != "_env")
        if ref_fields != args.fields:
            print(f"note: the reference was made {'with' if ref_fields else 'without'} --fields and this "
                  "run is not: compare in the same mode")
        lines = compare(reference, result)
        print("\n".join(lines) if lines else f"no difference from {args.check}")
        return 1 if lines else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
