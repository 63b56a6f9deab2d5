"""Warnings that fasterm gives the person who calls ``fit``.

:class:`DataWarning` says something about the data as it met the declared
bounds: rows clipped to ``data_norm``, labels clipped to ``label_bound``,
labels outside a declared ``classes``, a fit that ended on the boundary of
the parameter ball.  It is computed from the data, so it is *not* part of the
private release: it goes to the caller only (who holds the data), nothing of
it is stored on the fitted object or its result, and it is never sent
anywhere else (docs/guarantees.rst, "What is released").  Silence it with
``warnings.simplefilter("ignore", fasterm.DataWarning)``.
"""

from __future__ import annotations

__all__ = ["DataWarning"]


class DataWarning(UserWarning):
    """The data broke or met a declared bound: a message for the caller only, not a release."""
