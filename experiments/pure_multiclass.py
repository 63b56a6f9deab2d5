"""δ = 0 with K > 2 classes: candidates against today's noisy class sums (issue #37, docs/pure.rst).

    nice -n 5 python experiments/pure_multiclass.py [--splits 5] [CANDIDATE ...]

Not a pytest benchmark: a script that prints mean test accuracy (± sd) and the
median fit time of every candidate on every development set at
ε ∈ {0.3, 1, 3}, δ = 0, over 5 random 70/30 splits (seeds 0–4, the fit's seed
its split's).  The rule below was written (and committed) before this script
was run on any data.

**Development sets** (never the shipped breast-cancer set).  Rows scaled
data-independently into the unit ball (``data_norm=1``):

* ``iris`` (shape A: 150 rows, 4 features, K = 3): scikit-learn's bundled
  iris, every feature in the public range [0, 8] cm,
  :func:`fasterm.datasets.scale_to_unit_ball` with low 0 and high 8;
* ``wine`` (A: 178 rows, 13 features, K = 3): scikit-learn's wine, the
  published feature ranges of its DESCR (``bench/compare_multiclass.py``);
* ``synA`` (A: 400 rows, 6 features, K = 3): three well-separated Gaussian
  blobs, rows divided by a constant of the generator and clipped to the ball;
* ``synB`` (B: 2,000 rows, 10 features, K = 4, weak signal): make_classification
  with class_sep 0.5 and label noise, rows divided by a generator constant;
* ``digits`` (C-like: 1,797 rows, 64 features, K = 10): x/128 (pixels in the
  public range [0, 16], so ‖x‖ ≤ 1), as ``bench/compare_multiclass_pure.py``;
* ``synC`` (C: 3,000 rows, 256 features, K = 10, image-like): non-negative
  "pixel" rows — a class prototype (a random smooth blob on a 16×16 grid)
  times a random brightness plus noise, clipped to [0, 1] and divided by 16
  (= √256, so ‖x‖ ≤ 1).

**Candidates** (all (ε, 0)-DP, replace-one neighbours):

* ``sums`` — today's default: ``DPLogisticRegression(delta=0)`` (noisy class sums);
* ``op(τ, m, a)`` — multinomial objective perturbation
  (:mod:`fasterm.erm.objpert_multi`) on the loss
  τ·log Σ_k exp((z_k − z_y + m[k ≠ y])/τ), μ = max(a·X²/(εn), the floor
  whose Jacobian term is ε/2), the intercept column s = 0.125 (the binary
  objpert's): members op(1, 0, 2), op(1, 0, 8) (multinomial logistic) and
  op(0.25, 1, 8) (smoothed Crammer–Singer, the binary default's τ and margin);
* ``rp(k)`` — a data-independent Gaussian random projection to k dimensions
  (entries N(0, 1/k), a fixed public seed), applied only when d > k, then
  op(1, 0, 8) on the projected rows (clipped to the ball again); members k ∈ {32, 64};
* ``lapgd(T)`` — pure-ε noisy GD with Laplace noise in (d + 1)·K coordinates
  (``solver="noisy_gd", noise="laplace", calibration="pure"``), T = 2 steps
  (the binary round's best T) — a reference from the existing estimator.

**Rule.**  Score of a candidate: its mean accuracy over the 18 cells (6 sets
× 3 values of ε).  Candidates are ranked by score; the first in that order
that meets all of

  (i)   score ≥ score(sums) + 0.10 (the issue's "at least 10 points better on average"),
  (ii)  in no cell below sums by more than 0.03,
  (iii) median fit time ≤ 10 s on every set (2 shared cores),

becomes the δ = 0 multiclass default (ties within 0.005 of score: the faster
one).  If none meets them, the default stays the class sums and the table is
reported.  A winning ``rp(k)`` makes the default "project to k when d > k".
"""
