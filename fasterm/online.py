"""``fasterm.online``: private online learning, defined in :mod:`fasterm.learning.online` (this path is kept for users)."""

from .learning.online import (LinearLearnerResult, PrivateRWM, PrivateRWMRun, RWM, RWMCalibration, RWMRun, calibrate_eta, linear_learner, regret_bound, run_rwm)

__all__ = ["LinearLearnerResult", "PrivateRWM", "PrivateRWMRun", "RWM", "RWMCalibration", "RWMRun", "calibrate_eta", "linear_learner", "regret_bound", "run_rwm"]
