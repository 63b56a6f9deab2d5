"""``fasterm.DataWarning``: messages to the person calling ``fit``, about their data or the fit.

A warning is not a release.  It goes to the caller of ``fit`` — who holds the
data — through Python's :mod:`warnings` machinery, and nothing of it is stored
on the fitted object; the privacy guarantee covers the fitted model and its
attributes only (docs/guarantees.rst).  A warning computed from the released
output alone (e.g. "the coefficients lie on the ``radius`` boundary") is a
post-processing of the release and reveals nothing more.  Silence them with
``warnings.simplefilter("ignore", fasterm.DataWarning)``.
"""

from __future__ import annotations

__all__ = ["DataWarning"]


class DataWarning(UserWarning):
    """A fit ran, but the data or its declared bounds make the model less useful than it could be
    (e.g. the fit ended on the parameter ball's boundary); the message says what to do."""
