"""Issue #37, δ > 0: candidates for small multiclass tables against today's defaults (docs/multiclass.rst).

Declared before any comparison was run (the commit that adds this docstring is the declaration).

Development sets (never the shipped breast-cancer set).  Every private fit sees rows scaled by
data-independent constants (published ranges, pixel ranges, or a fixed constant of the generator),
so ‖x‖ ≤ 1 = the default ``data_norm``; nothing about the private side is estimated from the data.

    multiclass, "small" (n ≤ 500, K ≤ 5):
        iris       150 × 4,  K = 3  (published maxima, as experiments/multiclass_rules.py)
        wine       178 × 13, K = 3  (published ranges, as bench/compare_multiclass.py)
        sep3       300 × 6,  K = 3  make_classification, class_sep = 2.5, seed 21 (table A's shape)
        sep5       450 × 8,  K = 5  make_classification, class_sep = 2.0, seed 22
        blobs4     400 × 5,  K = 4  make_blobs, cluster_std = 3, seed 23
    multiclass, larger:
        weak4     2000 × 10, K = 4  make_classification, class_sep = 0.6, seed 24 (table B's shape)
        digits    1797 × 64, K = 10 (pixels / 128)
        wide10    3000 × 200, K = 10 make_classification, 40 informative, class_sep = 1.5, seed 25
                  (table C's shape)
    regression (n ≥ 400·d marked *):
        diabetes   442 × 10 (scikit-learn's bundled, already centred and scaled by the loader)
        reg4k*    4000 × 10 make_regression, noise 30, seed 26 (table D's shape)
        reg2k*    2000 × 5  make_regression, noise 20, seed 27
    Synthetic features are divided by spread·√d (spread = 3, as bench/compare_multiclass.py);
    regression targets by a fixed constant of the generator, the label bound given as declared.

Protocol.  5 random 70/30 splits (random_state = split), private seed 1000 + split,
δ = 1e-5, ε ∈ {0.3, 1, 3}, every other parameter at its default.  Reference: scikit-learn's
LogisticRegression / LinearRegression (non-private, the same scaled rows).  Fit time: the
median wall time of the private fits of a cell, today's default timed in the same run.

Candidates.
    today      fasterm's current default (solver "auto": noisy GD for n < 5,000, K > 2)
    amp-a      approximate-minima objective perturbation for the multinomial loss with Gaussian
               noise (fasterm/erm/amp.py), regularisation Λ = max(alpha, a·X_aug²/(ε·n), the Jacobian
               floor), a ∈ {1, 4, 16}.

Selection rule (δ > 0, K > 2).
    1. Among the amp-a, the candidate is the one with the highest mean accuracy at ε = 1 over all
       eight multiclass sets.
    2. It replaces today's default for K > 2, δ > 0, n < N, where N is the largest threshold in
       {500, 2,000, 5,000} such that, over the multiclass sets with n < N:
         (a) its mean accuracy at ε = 1 is at least today's + 1 point,
         (b) its mean accuracy at ε = 0.3 and at ε = 3 is not below today's by more than 0.5 point,
         (c) no single set at ε ∈ {0.3, 1, 3} loses more than 3 points against today, and
         (d) its median fit time is at most 2 s on every such set.
       If no threshold qualifies, today's default stays (and the table is reported).
    3. Binary and regression defaults are not changed by this script (binary: the must-show bar
       "no binary set loses more than 0.5 point" is kept by not touching the binary path).

    nice -n 5 python experiments/small_tables.py [--splits 5] [--sets iris,wine] [--eps 0.3,1,3]
"""
