"""The per-batch-size clips of minibatch SGD (``_float_margin.clip_table``,
``_engine.BatchClips``) against the one-size-at-a-time reference
``effective_clip(c, margin("any", ...))`` in exact rationals: the same doubles, bit for bit,
across the kernels' chunk plans, both dtypes, with and without the regulariser's term."""

import numpy as np
import pytest

import fasterm as fe
from fasterm.erm import _engine, _float_margin as fm


def _reference(c, dtype, m, d, **kw):
    try:
        return fm.effective_clip(c, fm.margin("any", dtype, m, d, **kw))
    except fm.MarginTooLarge:
        return None


def _ranges(d, itemsize):
    # around the plan's changes: one chunk (r = m) -> two chunks, and the chunk growing with m
    block, chunk, _ = fm.plan(1, d, itemsize)
    first = fm.plan(10 ** 9, d, itemsize)  # chunk size once it grows with m
    one_chunk = max(-(-(1 << 20) // max(d * itemsize, 1)), 4)
    grow = 64 * one_chunk
    out = [(1, 40), (max(1, one_chunk - 12), one_chunk + 12), (max(1, grow - 150), grow + 150)]
    assert block >= 4 and chunk >= 1 and first[1] >= one_chunk
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("d", [1, 7, 101, 650])
def test_clip_table_is_effective_clip_of_margin(dtype, d):
    itemsize = np.dtype(dtype).itemsize
    cases = [dict(scale=1 / 512, bound=1.0), dict(scale=1 / 3300.5, bound=1.4, reg=1e-3, radius=10.0),
             dict(scale=1e-5, bound=0.3, reg=0.5, radius=2.0, momentum=True)]
    for c, kw in zip((1.0, 0.7, 0.3), cases):
        for lo, hi in _ranges(d, itemsize):
            try:
                table = fm.clip_table(c, dtype, lo, hi, d, **kw)
            except fm.MarginTooLarge:
                table = None
            for m in range(lo, hi + 1, 1 if hi - lo < 60 else 3):
                want = _reference(c, dtype, m, d, **kw)
                got = None if table is None else table[m - lo]
                assert got == want, (m, got, want)
                if want is not None:
                    assert 0.0 < got < c


def test_clip_table_raises_where_margin_does():
    # float32 with a regulariser whose rounding is of the order of the sensitivity
    kw = dict(scale=1e-9, bound=1e-3, reg=1.0, radius=100.0)
    with pytest.raises(fm.MarginTooLarge):
        fm.margin("any", np.float32, 10, 5, **kw)
    with pytest.raises(fm.MarginTooLarge):
        fm.clip_table(1e-3, np.float32, 10, 20, 5, **kw)
    with pytest.raises(fm.MarginTooLarge):  # ρ > 0 on an unbounded set
        fm.clip_table(1.0, np.float64, 10, 20, 5, scale=0.1, bound=1.0, reg=1e-3, radius=np.inf)
    with pytest.raises(ValueError, match="lo"):
        fm.clip_table(1.0, np.float64, 0, 20, 5, scale=0.1, bound=1.0)
    assert np.array_equal(fm.clip_table(0.0, np.float64, 3, 5, 5, scale=0.1, bound=0.0), np.zeros(3))


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_batch_clips_are_release_clip_and_grow(dtype):
    loss = fe.losses.Logistic(l2=1e-3)
    C = fe.L2Ball(3.0, 11)
    clips = _engine.BatchClips(loss, C, 0.8, dtype, 11, 500, 520, scale=1 / 510.0, weight_bound=2.0)
    for m in (500, 507, 520, 1, 3, 499, 521, 700, 2000):
        want = _engine.release_clip(loss, C, 0.8, dtype, m, 11, scale=1 / 510.0, weight_bound=2.0)
        assert clips(m) == want, m
    assert clips.lo == 1 and clips.table.shape[0] == 2000
    # the table is contiguous: entry k is the clip of lo + k rows
    for m in (2, 250, 1999):
        assert clips.table[m - clips.lo] == _engine.release_clip(loss, C, 0.8, dtype, m, 11, scale=1 / 510.0,
                                                                 weight_bound=2.0)
