"""Releasing a value privately: the Laplace, Gaussian and exponential mechanisms, and their samplers.

* :mod:`.releases` — ``laplace`` (L1 sensitivity, Dwork & Roth Thm 3.6),
  ``laplace_l2`` (L2 sensitivity, Stemmer lecture 10, Thm 3), ``gaussian``
  (exact μ-GDP, Dong, Roth & Su 2022) and ``exponential`` (McSherry & Talwar
  2007; Dwork & Roth Thm 3.10);
* :mod:`.univariate` — private median, quantiles and mean by exact
  piecewise-exponential sampling (Smith–Ullman lecture 11; Stemmer lecture 9);
* :mod:`.noise` — the noise samplers of every mechanism (numpy's
  Generator, or ``random_state="os"``);
* :mod:`.secure` — secure mode: exact discrete Laplace and Gaussian on a grid
  (Canonne, Kamath & Steinke 2020), against the floating-point attack of
  Mironov (2012).

Calibrations come from :mod:`fasterm.accounting`; nothing here knows about
losses or models (that is :mod:`fasterm.erm`).
"""

from . import noise, secure, univariate
from .releases import exponential, gaussian, laplace, laplace_l2

__all__ = ["exponential", "gaussian", "laplace", "laplace_l2", "noise", "secure", "univariate"]
