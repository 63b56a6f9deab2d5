"""Noisy PGD over row-chunked ``dask.array`` data (``pip install "fasterm[dask]"``).

:func:`fasterm.noisy_pgd` (and the estimators' ``fit``) hand a dask array to
this module; parameter checks, the calibration of T, η and the noise, and the
result stay in :mod:`fasterm.erm.optimize`, the same for in-memory and chunked
data.  Nothing here imports dask until a dask collection has been passed, so
``import fasterm`` does not need dask.  Costs, measurements and when to use
it: docs/dask.rst.

The map-reduce.  The averaged gradient is a sum over rows,

    ∇L(w) = (1/n) Σ_k Σ_{i ∈ chunk k} ψ'_i(⟨w, x_i⟩) x_i + l2·w,

so each row chunk k is a map task: the compiled, clipped gradient sum of the
chunk (``fasterm.erm._losses.grad_sum``, the same data norm, clip and label bound
as in memory) on the worker that holds it.  The client adds the partial sums
in chunk order (fixed, whatever worker finishes first) and hands them to
:func:`fasterm.erm._engine.descend`, which divides by n, adds the regularizer and
**the noise, once**, through the fit's backend (:mod:`fasterm.erm._backends`).
Each step releases the in-memory noisy averaged gradient — only the order of
a floating-point sum differs — so the accounting of :func:`fasterm.noisy_pgd`
applies unchanged, and the noise stream is the in-memory one (same seed, same
ŵ up to summation order; in secure mode the chunks are summed in float64 and
the grid release happens at the client, so ŵ is the in-memory secure fit's).

X and its row norms are prepared once and stay in worker memory for the run
(futures spread over the workers by :func:`balance`, or persisted arrays on
the local scheduler), released when the run returns.  Validation reads the
array's metadata; the finiteness check of X and y (the in-memory path's only
data-dependent check, same message) runs on the workers, one boolean per chunk.
"""

from __future__ import annotations

import copy
import math
import sys

import numpy as np

import fasterm.erm._engine as _engine
import fasterm.erm._float_margin as _float_margin
import fasterm.erm._losses as _losses  # compiled (src/fasterm/erm/_losses.pyx)
from .._validation import FLOAT_DTYPES, all_finite, check_array, labels_as

__all__ = ["SampledRows", "check_client", "check_X_y", "check_y", "is_dask_collection", "run", "sgd_block_steps",
           "unique"]


def is_dask_collection(x) -> bool:
    """True if ``x`` is a dask collection; never imports dask."""
    if "dask" not in sys.modules:
        return False
    import dask

    return bool(dask.is_dask_collection(x))


def _client_type():
    dist = sys.modules.get("distributed")
    return None if dist is None else dist.Client


def check_client(client):
    """``client``: None, a ``dask.distributed.Client`` or a scheduler address (str)."""
    if client is None or isinstance(client, str):
        if isinstance(client, str) and not client:
            raise ValueError("client must be a non-empty scheduler address, e.g. 'tcp://host:8786'")
        return client
    Client = _client_type()
    if Client is not None and isinstance(client, Client):
        return client
    raise TypeError("client must be None, a dask.distributed.Client or a scheduler address "
                    f"(str), got {type(client).__name__}")


def _check_chunked(a, name, ndim):
    """A dask array of numpy chunks with known chunk sizes, real dtype (ints → float64)."""
    import dask.array as da

    if not isinstance(a, da.Array):
        raise TypeError(f"{name} must be a dask.array.Array (or a numpy array), got "
                        f"{type(a).__name__}; convert a dask DataFrame with "
                        ".to_dask_array(lengths=True)")
    if a.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got {a.ndim}")
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    meta = getattr(a, "_meta", None)
    if meta is not None and type(meta) is not np.ndarray:
        raise TypeError(f"{name} must be a dask array of numpy chunks, got chunks of type "
                        f"{type(meta).__name__}")
    if any(math.isnan(s) for s in a.shape):
        raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() "
                         "first (n is needed to calibrate the noise)")
    return a


def check_X_y(X, y, *, y_required=False):
    """The dask counterpart of ``_validation.check_X_y``, from metadata only.

    X: a 2-d dask array chunked along rows only (each chunk holds whole rows;
    a column-chunked X is refused rather than silently reshuffled across the
    cluster — ``X.rechunk({1: -1})`` does that explicitly).  float32/float64
    are kept, other real dtypes become float64 (lazily, chunk by chunk), as in
    memory.  y: a 1-d dask or numpy array of n entries, converted to X's
    dtype; a dask y is rechunked to X's row chunks (y is d times smaller than
    X), a numpy y is checked in memory and split into X's row chunks.
    """
    X = _check_chunked(X, "X", 2)
    n, d = X.shape
    if n == 0 or d == 0:
        raise ValueError(f"X must not be empty (shape {X.shape})")
    if len(X.chunks[1]) != 1:
        raise ValueError(
            f"X must be chunked along rows only (every chunk holding all {d} columns), got "
            f"{len(X.chunks[1])} column chunks; rechunk it with X.rechunk({{1: -1}})")
    if X.dtype not in FLOAT_DTYPES:
        X = X.astype(np.float64)
    if y is None:
        if y_required:
            raise ValueError("y is required for this loss")
        return X, None
    y = check_y(y, X)
    # labels_as chunk by chunk: a huge finite label is clipped, not cast to inf
    return X, (y if y.dtype == X.dtype else y.map_blocks(labels_as, X.dtype, dtype=X.dtype))


def check_y(y, X):
    """y as a 1-d dask array in X's row chunks (dtype unchanged; numpy y checked in memory)."""
    import dask.array as da

    n = X.shape[0]
    if is_dask_collection(y):
        y = _check_chunked(y, "y", 1)
    else:
        y = check_array(y, "y", ndim=1, dtype=None)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n} rows")
    if isinstance(y, np.ndarray):
        return da.from_array(y, chunks=(X.chunks[0],))
    return y if y.chunks[0] == X.chunks[0] else y.rechunk((X.chunks[0],))


def unique(y):
    """The sorted distinct values of a dask y: only the label set reaches the client."""
    import dask.array as da

    return np.asarray(da.unique(y).compute())


# -- tasks run on the workers ----------------------------------------------------------


def _prepare_chunk(xb, yb, dtype, with_norms):
    """(X_k, y_k, row norms of X_k) as the kernel wants them; no copy of a clean chunk."""
    Xk = np.ascontiguousarray(xb, dtype=dtype)
    yk = None if yb is None else np.ascontiguousarray(yb, dtype=dtype)
    norms = None
    if with_norms:
        norms = np.empty(Xk.shape[0], dtype=np.float64)
        _losses.row_norms(Xk, norms, 1)
    return Xk, yk, norms


def _chunk_finite(part):
    Xk, yk, _ = part
    return all_finite(Xk), yk is None or all_finite(yk)


def _chunk_grad(part, kind, w, dn, c, ybound):
    """The clipped per-example gradient sum of one chunk (d numbers, X's dtype)."""
    Xk, yk, norms = part
    out = np.empty(Xk.shape[1], dtype=Xk.dtype)
    # One thread per task: dask runs tasks in parallel (threads_per_worker);
    # the kernel's result does not depend on its thread count.
    _losses.grad_sum(kind, Xk, yk, w, norms, dn, c, ybound, out, 1)
    return out


def _nbytes(part):
    return sum(a.nbytes for a in part if a is not None)


def _identity(part):
    return part


# -- schedulers ----------------------------------------------------------------------------


class _Distributed:
    """Chunks held as futures on a dask.distributed cluster; one map per step."""

    def __init__(self, client, owned=False):
        self.client = client
        self.owned = owned

    def persist(self, tasks, rows):
        parts = self.client.compute(tasks)
        self.client.gather(self.client.map(_nbytes, parts, pure=False))  # wait for the parts
        return balance(self.client, parts, rows)

    def map(self, fn, parts, **kwargs):
        return self.client.gather(self.client.map(fn, parts, pure=False, **kwargs))

    def submit(self, fn, items, **kwargs):
        """One task per ``(part, *args)`` in ``items``, started now; :meth:`result` waits for them."""
        return [self.client.submit(fn, *item, pure=False, **kwargs) for item in items]

    def result(self, handle):
        return self.client.gather(handle)

    def cancel(self, handle):
        if handle:
            self.client.cancel(handle)

    def close(self):
        if self.owned:
            self.client.close()


class _Local:
    """Dask's local scheduler (threads unless configured otherwise): chunks persisted in process."""

    def persist(self, tasks, rows):
        import dask

        return list(dask.persist(*tasks))

    def map(self, fn, parts, **kwargs):
        import dask

        return dask.compute(*[dask.delayed(fn, pure=False)(p, **kwargs) for p in parts])

    def submit(self, fn, items, **kwargs):
        import dask

        return [dask.delayed(fn, pure=False)(*item, **kwargs) for item in items]

    def result(self, handle):
        import dask

        return dask.compute(*handle)

    def cancel(self, handle):
        pass

    def close(self):
        pass


def balance(client, parts, rows, slack=1.1):
    """Spread the prepared chunks over the workers in proportion to their threads.

    Every step waits for the busiest worker, and a step's tasks run where
    their chunk lives, so chunks piled on a few workers (as a rechunk or a
    persist can leave them) would serialise the step.  Chunks stay where they
    are as long as their worker's share of rows stays within ``slack`` of
    its fair share; the others (largest first) move, once, to the worker
    with the least rows per thread.  Returns the futures to use.
    """
    nthreads = client.nthreads()
    if len(nthreads) < 2:
        return parts
    holder = {k: ws[0] for k, ws in client.who_has(parts).items() if ws}
    total_threads = sum(nthreads.values())
    fair = {w: slack * sum(rows) * t / total_threads for w, t in nthreads.items()}
    load = dict.fromkeys(nthreads, 0)
    out = list(parts)
    for i in sorted(range(len(parts)), key=lambda i: -rows[i]):
        here = holder.get(parts[i].key)
        if here in load and load[here] + rows[i] <= fair[here]:
            load[here] += rows[i]
            continue
        target = min(load, key=lambda w: (load[w] + rows[i]) / nthreads[w])
        load[target] += rows[i]
        if target != here:
            out[i] = client.submit(_identity, parts[i], workers=[target], allow_other_workers=False,
                                   pure=False)
    moved = [f for f, p in zip(out, parts) if f is not p]
    if moved:
        client.gather(client.map(_nbytes, moved, pure=False))
    return out


def _check_address(address):
    """A malformed scheduler address is the caller's ``client`` parameter: say so, and
    before a Client is built (a half-started Client blocks for a minute when collected)."""
    from distributed.comm.addressing import parse_address
    from distributed.comm.registry import get_backend

    try:
        scheme, loc = parse_address(address)
        try:
            get_backend(scheme).get_address_host_port(loc)
        except NotImplementedError:  # e.g. inproc://: no host and port to check
            pass
    except ValueError as exc:
        raise ValueError(f"client is not a scheduler address such as 'tcp://host:8786' "
                         f"({exc})") from None


def _scheduler(client):
    """The user's client, a client connected to an address, the default client, or local."""
    if isinstance(client, str):
        from distributed import Client

        _check_address(client)
        return _Distributed(Client(client, set_as_default=False), owned=True)
    if client is not None:
        return _Distributed(client)
    dist = sys.modules.get("distributed")
    if dist is not None:
        try:
            return _Distributed(dist.default_client())
        except ValueError:  # no client running: the local scheduler
            pass
    return _Local()


# -- the loop --------------------------------------------------------------------------------


def run(loss, X, y, constraint, steps, lr, average, *, data_norm, clip, noise, label_bound=None,
        momentum=None, client=None):
    """:func:`fasterm.erm._engine.run` for chunked X (validated by :func:`check_X_y`): same steps, same noise.

    Each step: the chunks' gradient sums on the workers (:func:`_chunk_grad`,
    in the backend's work dtype), their sum in chunk order at the client,
    then — at the client, by :func:`fasterm.erm._engine.descend` as for in-memory
    data — division by n, the regularizer's term, the noise backend's
    release, the step and the projection.
    """
    import dask

    n, d = X.shape
    out_dtype = X.dtype
    dtype = np.dtype(noise.work_dtype(X.dtype))
    if y is None and loss._uses_labels:
        raise ValueError(f"y is required for {type(loss).__name__}")
    c = 0.0 if clip is None or math.isinf(clip) else float(clip)
    dn = 0.0 if data_norm is None or math.isinf(data_norm) else float(data_norm)
    ybound = loss._label_bound_for_kernel(label_bound)
    w = check_array(constraint.center, "w", ndim=1, dtype=dtype, shape=(d,))
    w = w.copy()  # updated in place below; the constraint's centre is not ours
    # The floating-point margin of a release (docs/guarantees.rst): the chunks' kernel sums,
    # added in float64 in chunk order and rounded to the work dtype (public: the chunk sizes).
    # (At least the in-memory solvers' θ, so that one chunk gives the in-memory clip and bits.)
    theta = max(_float_margin.dask_sum_theta(dtype, X.chunks[0], d), _float_margin.sum_theta("any", dtype, n, d))
    c = _engine.release_clip(loss, constraint, c, dtype, n, d, scale=1.0 / n, momentum=momentum is not None,
                             theta=theta)

    xblocks = X.to_delayed().ravel()
    yblocks = [None] * len(xblocks) if y is None else list(y.to_delayed().ravel())
    keep = [k for k, size in enumerate(X.chunks[0]) if size > 0]  # the kernel needs rows
    tasks = [dask.delayed(_prepare_chunk, pure=True)(xblocks[k], yblocks[k], dtype, c > 0 or dn > 0)
             for k in keep]

    sched = _scheduler(client)
    try:
        parts = sched.persist(tasks, [X.chunks[0][k] for k in keep])
        flags = sched.map(_chunk_finite, parts)
        if not all(fx for fx, _ in flags):
            raise ValueError("X must contain only finite values (found NaN or inf)")
        if not all(fy for _, fy in flags):
            raise ValueError("y must contain only finite values (found NaN or inf)")

        kind = loss._kind
        total = np.empty(d, dtype=np.float64)

        def grad_sum(w, out):
            partial = sched.map(_chunk_grad, parts, kind=kind, w=w.copy(), dn=dn, c=c,
                                ybound=ybound)
            total[:] = partial[0]  # summed in chunk order, whichever worker finished first
            for p in partial[1:]:
                np.add(total, p, out=total)
            out[:] = total

        return _engine.descend(grad_sum, w, constraint, steps, lr, scale=1.0 / n, noise=noise,
                               reg=float(loss.l2), average=average, momentum=momentum,
                               out_dtype=out_dtype)
    finally:
        sched.close()


# -- noisy SGD: Poisson-sampled rows gathered block by block -------------------------------------

#: The number of round trips a dask SGD run aims at (blocks of steps), and the most bytes of
#: sampled rows one block may bring to the client, in expectation (public: n, d, q, T, the dtype).
SGD_ROUNDS = 20
SGD_BLOCK_BYTES = 128 * 2 ** 20


def sgd_block_steps(steps: int, n: int, q: float, d: int, itemsize: int) -> int:
    """The steps of one block: ⌈T/``SGD_ROUNDS``⌉, fewer if their expected rows (q·n per step,
    ``d`` + 2 numbers each) would exceed ``SGD_BLOCK_BYTES``; at least 1.  Public numbers only."""
    by_rounds = math.ceil(steps / SGD_ROUNDS)
    per_step = max(1.0, q * n) * (d + 2) * itemsize
    by_bytes = max(1, int(SGD_BLOCK_BYTES // per_step))
    return max(1, min(by_rounds, by_bytes))


def check_sgd(X, y, neighbors, client):
    """``(X, y, client)`` of :func:`fasterm.noisy_sgd` for a chunked X, from metadata only."""
    client = check_client(client)
    if neighbors != "replace_one":
        raise ValueError("neighbors='add_remove' needs X in memory (numpy or scipy.sparse)")
    X, y = check_X_y(X, y)
    return X, y, client


def sgd_constants(loss, constraint, X, y, clip, data_norm, label_bound):
    """``(w₀, c, data norm, label bound, threads)`` of the SGD kernels for a chunked X: the
    checks of ``loss._prepare`` on one row of zeros (the values are checked on the workers)."""
    w = constraint.center.astype(X.dtype)
    cols = X.shape[1]
    _, _, _, c, dn, ybound, _, nt = loss._prepare(w[:cols], np.zeros((1, cols), X.dtype),
                                                   None if y is None else np.zeros(1, X.dtype),
                                                   clip=clip, data_norm=data_norm, label_bound=label_bound)
    if y is None and loss._uses_labels:
        raise ValueError(f"y is required for {type(loss).__name__}")
    return w, c, dn, ybound, nt


def _chunk_rows(part, idx, intercept, with_norms, design):
    """The rows ``idx`` (sorted, local to the chunk) of one chunk as the SGD kernel reads them:
    with ``intercept = (row_bound, s)`` the design rows (``design``, i.e.
    :func:`fasterm.erm._design._design_block`: clipped, the column s appended) and their
    norms, else the raw rows and, if ``with_norms``, their norms.  A copy of these rows only."""
    Xk, yk, _ = part
    rows = Xk[idx]
    if intercept is not None:
        rows = design(rows, intercept[0], intercept[1], None)
    norms = None
    if intercept is not None or with_norms:
        norms = np.empty(rows.shape[0], dtype=np.float64)
        _losses.row_norms(rows, norms, 1)
    return rows, None if yk is None else yk[idx], norms


class SampledRows:
    """The rows of each Poisson minibatch of a noisy-SGD run over a chunked X, fetched in blocks.

    The run (:func:`fasterm.erm.solvers._noisy_sgd`, its Python loop) draws every batch
    from its Generator exactly as in memory — the size Bin(n, q), then the rows
    ``choice(n, size, replace=False)``, sorted — and then its noise.  This object keeps
    a *copy* of that Generator, taken before the first step, and replays the same
    draws ahead of the run (the batch rows, then one release's noise, discarded;
    :meth:`fasterm.erm._backends.FloatNoise.advance`), ``block`` steps at a time.  For
    each block, the union of its batches' rows is requested from the chunks that hold
    them (one task per chunk with rows, :func:`_chunk_rows`), while the client still
    runs the previous block; :meth:`gather` then serves each batch of the run from
    its block and checks that it is the batch the look-ahead drew.

    Privacy: which rows are requested is a function of the Generator only (the
    sampling is per row, independent, at the public rate q, and independent of the
    data), so the released steps are the in-memory mechanism's random variables, the
    Poisson-subsampled Gaussian mechanism that :func:`fasterm.accounting.sgd_epsilon`
    accounts for.  The row indices travel between the client and the workers that
    hold the data (inside the trust boundary, like the process memory of an
    in-memory fit) and are never part of the result.

    X is persisted once (a chunk already C-contiguous in the run's dtype is not
    copied); a block brings about ``block``·q·n rows to the client, two blocks at a
    time at most.
    """

    def __init__(self, X, y, n, q, steps, block, rng, advance, *, intercept=None, with_norms=False,
                 design=None, client=None):
        import dask

        self.n, self.q, self.steps, self.block = int(n), float(q), int(steps), int(block)
        self.lookahead = copy.deepcopy(rng)  # the run's stream, drawn ahead of it
        self.advance = advance
        self.intercept, self.with_norms, self.design = intercept, bool(with_norms), design
        self.planned = 0  # steps drawn by the look-ahead
        self.rounds = 0   # blocks requested
        self.pending = []  # (block, handle) requested, not yet served
        self.current = None
        self.used = 0
        self.sched = _scheduler(client)
        try:
            xblocks = X.to_delayed().ravel()
            yblocks = [None] * len(xblocks) if y is None else list(y.to_delayed().ravel())
            sizes = list(X.chunks[0])
            keep = [k for k, size in enumerate(sizes) if size > 0]
            tasks = [dask.delayed(_prepare_chunk, pure=True)(xblocks[k], yblocks[k], X.dtype, False)
                     for k in keep]
            rows = [sizes[k] for k in keep]
            self.parts = self.sched.persist(tasks, rows)
            self.offsets = np.concatenate([[0], np.cumsum(rows, dtype=np.int64)])
            flags = self.sched.map(_chunk_finite, self.parts)
            if not all(fx for fx, _ in flags):
                raise ValueError("X must contain only finite values (found NaN or inf)")
            if not all(fy for _, fy in flags):
                raise ValueError("y must contain only finite values (found NaN or inf)")
            self._request()  # the first block, before the first step
        except BaseException:
            self.close()
            raise

    @classmethod
    def for_run(cls, X, y, q, steps, d, rng, backend, intercept, with_norms, design, client):
        """The source of a noisy-SGD run over the chunked (n, ``d`` columns with the intercept) X:
        blocks of :func:`sgd_block_steps`, the look-ahead advanced by the backend's noise draws;
        ``plan``: the public block plan, for the result's ``info``."""
        n = X.shape[0]
        block = sgd_block_steps(steps, n, q, d, X.dtype.itemsize)

        def advance(bit_generator):
            backend.advance(bit_generator, d, X.dtype)

        source = cls(X, y, n, q, steps, block, rng, advance, intercept=intercept, with_norms=with_norms,
                     design=design, client=client)
        source.plan = {"dask_block_steps": block, "dask_rounds": math.ceil(steps / block)}
        return source

    def _request(self):
        """Draw the next block's batches on the look-ahead stream and ask the chunks for their rows."""
        la, n, q = self.lookahead, self.n, self.q
        batches = []
        for _ in range(min(self.block, self.steps - self.planned)):
            size = int(la.binomial(n, q))
            if size:
                batches.append(np.sort(la.choice(n, size=size, replace=False)) if size < n
                               else np.arange(n))
            self.advance(la.bit_generator)  # the step's noise: drawn by the run after its batch
        self.planned += min(self.block, self.steps - self.planned)
        union = np.unique(np.concatenate(batches)) if batches else np.empty(0, dtype=np.int64)
        cuts = np.searchsorted(union, self.offsets)
        items = [(self.parts[k], union[cuts[k]:cuts[k + 1]] - self.offsets[k])
                 for k in range(len(self.parts)) if cuts[k + 1] > cuts[k]]
        handle = self.sched.submit(_chunk_rows, items, intercept=self.intercept, with_norms=self.with_norms,
                                   design=self.design)
        self.rounds += 1
        self.pending.append(((union, len(batches)), handle))

    def _next_block(self):
        while True:
            if not self.pending:
                raise RuntimeError("noisy SGD over dask: the run asked for more batches than its "
                                   "look-ahead drew (the two streams diverged)")
            (union, count), handle = self.pending.pop(0)
            if self.planned < self.steps:
                self._request()  # the block after, fetched while this one runs
            got = self.sched.result(handle)  # per chunk with rows, in row order: not concatenated
            if count:
                starts = np.cumsum([0] + [g[0].shape[0] for g in got])  # each piece's first position in union
                self.current = (union, count, got, starts)
                self.used = 0
                return

    def gather(self, rows):
        """``(X rows, y rows, row norms)`` of the batch ``rows`` the run just drew (sorted)."""
        if self.current is None or self.used == self.current[1]:
            self._next_block()
        union, _, got, starts = self.current
        self.used += 1
        pos = np.searchsorted(union, rows)
        if pos.shape[0] and (pos[-1] >= union.shape[0] or not np.array_equal(union[pos], rows)):
            raise RuntimeError("noisy SGD over dask: a batch of the run is not the one its look-ahead "
                               "drew (the two streams diverged)")
        cuts = np.searchsorted(pos, starts)
        taken = [(got[k], pos[cuts[k]:cuts[k + 1]] - starts[k]) for k in range(len(got)) if cuts[k + 1] > cuts[k]]
        out = []
        for j in range(3):  # rows, labels, norms: the batch's, in row order
            if got[0][j] is None:
                out.append(None)
            else:
                pieces = [piece[j][local] for piece, local in taken]
                out.append(pieces[0] if len(pieces) == 1 else np.concatenate(pieces))
        return tuple(out)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Cancel the blocks still requested and release the persisted chunks."""
        for _, handle in self.pending:
            self.sched.cancel(handle)
        self.pending = []
        self.current = None
        self.parts = None  # the persisted chunks are released with their last reference
        self.sched.close()
