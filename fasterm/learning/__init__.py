"""Private learning beyond ERM: finite classes, statistical queries, online learning from experts.

* :mod:`.finite` — the private PAC learner for a finite class (the exponential
  mechanism on empirical errors, Kasiviswanathan et al. 2011; Dwork & Roth
  11.1) and the statistical-query oracle (``SQOracle``, Laplace noise per
  query under composition);
* :mod:`.online` — randomized weighted majority, its private version
  (Dwork & Roth 11.2, Thm 11.11) and the private linear learner (Alg. 17).

Beside :mod:`fasterm.erm`, on top of :mod:`fasterm.mechanisms` and
:mod:`fasterm.accounting`.
"""

from . import online
from .finite import SQOracle, pac_learner_bound, private_pac_learner, private_pac_learner_from_callables

__all__ = ["SQOracle", "online", "pac_learner_bound", "private_pac_learner", "private_pac_learner_from_callables"]
