"""``fasterm.losses``: the loss classes, defined in :mod:`fasterm.erm.losses` (this path is kept for users)."""

from .erm.losses import Absolute, Hinge, Linear, Logistic, Squared, row_norms

__all__ = ["Absolute", "Hinge", "Linear", "Logistic", "Squared", "row_norms"]
