"""The catalogue of privacy mutants run by ``tests/mutation/run.py``.

Each mutant is a small, deliberate privacy bug: in one file of the package,
each ``old`` snippet (which must occur exactly once) is replaced by ``new``.
``tests`` are the pytest node ids (files, or ``file::test`` for every
parametrisation of one test) that must FAIL on the mutated copy.

Keeping it current: the snippets are exact text of today's code.  When a
refactor moves or rewrites one of them, the harness reports the mutant as
STALE (and fails); update the snippet to the new code that has the same
role — the bug to plant and the tests that must catch it do not change.
"""

from __future__ import annotations

from dataclasses import dataclass

B = "tests/erm/test_privacy_behaviour.py"
E = "tests/package/test_edges.py"
C = "tests/accounting/test_calibration_refs.py"
A = "tests/audit/test_audit_sharp.py"
S = "tests/erm/test_solvers.py"
O = "tests/erm/test_objpert.py"
M = "tests/linear_model/test_multiclass.py"
P = "tests/package/test_model_selection.py"
RS = "tests/package/test_release_surface.py"
W = "tests/linear_model/test_sample_weight.py"
K = "tests/erm/test_memo_keys.py"
R = "tests/linear_model/test_release_attacks_objpert.py"
RA = "tests/linear_model/test_release_attacks_sgd.py"
SP = "tests/erm/test_sparse.py"
RG = "tests/linear_model/test_regression.py"
L = "tests/accounting/test_pld.py"
LS = "tests/accounting/test_pld_small_delta.py"
F = "tests/erm/test_float_edge.py"
OS = "tests/erm/test_float_margin_onesided.py"
BL = "tests/accounting/test_budget_limits.py"
SS = "tests/erm/test_float_margin_ssp.py"
OM = "tests/erm/test_objpert_multi.py"
AM = "tests/erm/test_amp.py"


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str                          # relative to the package folder (fasterm/)
    edits: tuple[tuple[str, str], ...]  # (old, new): each old must occur exactly once
    description: str
    tests: tuple[str, ...]


MUTANTS = [
    # --- the four survivors of the audit in issue #18 -------------------------
    Mutant(
        "gaussian-noise-x0.95", "erm/_backends.py",
        (("        self.scale = self.cal.noise_scale\n",
          "        self.scale = self.cal.noise_scale * (0.95 if self.noise == 'gaussian' else 1.0)\n"),),
        "noisy_pgd hands the loop 0.95 σ for Gaussian noise, and reports σ",
        (f"{B}::test_noisy_pgd_applied_noise_matches_reported_scale",
         f"{B}::test_estimator_applied_noise_matches_reported_scale",
         f"{A}::test_gaussian_mu_estimate_matches_claim")),
    Mutant(
        "laplace-l2-factor-2-dropped", "accounting/laplace.py",
        (("adv = math.sqrt(2.0 * steps * -math.log(delta)) * s", "adv = math.sqrt(steps * -math.log(delta)) * s"),
         ("root = math.sqrt(2.0 * steps * -math.log(delta))", "root = math.sqrt(steps * -math.log(delta))")),
        "√(2T ln 1/δ) → √(T ln 1/δ) in both laplace_l2_epsilon and calibrate_laplace_l2",
        (f"{C}::test_laplace_l2",)),
    Mutant(
        "loop-clips-at-1.1x", "erm/optimize.py",
        (("run(loss, X, y, constraint, steps, lr, average, data_norm=data_norm, clip=G_clip,",
          "run(loss, X, y, constraint, steps, lr, average, data_norm=data_norm, clip=1.1 * G_clip,"),),
        "the loop clips per-example gradients at 1.1 × the clip used for Δ₂",
        (f"{B}::test_noisy_pgd_one_step_difference_is_eta_times_sensitivity",)),
    Mutant(
        "loop-ignores-user-clip", "erm/optimize.py",
        (("run(loss, X, y, constraint, steps, lr, average, data_norm=data_norm, clip=G_clip,",
          "run(loss, X, y, constraint, steps, lr, average, data_norm=data_norm, clip=G_loss,"),),
        "the loop clips at the loss's Lipschitz constant, not the user's clip",
        (f"{B}::test_noisy_pgd_one_step_difference_is_eta_times_sensitivity",
         f"{B}::test_estimator_neighbouring_fits_differ_by_lr_times_sensitivity")),
    # --- clip / sensitivity hand-offs -----------------------------------------
    Mutant(
        "secure-loop-ignores-user-clip", "erm/optimize.py",
        (("run(loss, X, y, constraint, steps, lr, average, data_norm=data_norm, clip=G_clip,",
          "run(loss, X, y, constraint, steps, lr, average, data_norm=data_norm, "
          "clip=G_loss if backend.secure_calibration is not None else G_clip,"),),
        "secure mode's loop clips at the Lipschitz constant, not the user's clip",
        (f"{B}::test_secure_noisy_pgd_one_step_difference_within_grid_sensitivity",)),
    Mutant(
        "dask-loop-no-clip", "erm/_dask.py",
        (("c = 0.0 if clip is None or math.isinf(clip) else float(clip)", "c = 0.0"),),
        "the chunked (dask) loop does not clip per-example gradients",
        (f"{B}::test_dask_noisy_pgd_one_step_difference_is_eta_times_sensitivity",)),
    Mutant(
        "sensitivity-over-n-plus-1", "erm/optimize.py",
        (("sens = 2.0 * G_priv / n", "sens = 2.0 * G_priv / (n + 1)"),),
        "Δ₂ = 2G/(n+1) instead of 2G/n (noise for a weaker neighbouring relation)",
        (f"{B}::test_noisy_pgd_one_step_difference_is_eta_times_sensitivity",)),
    Mutant(
        "dask-sgd-rows-by-norm", "erm/_dask.py",
        (("    rows = Xk[idx]\n",
          "    rows = Xk[np.sort(np.argsort(np.einsum('ij,ij->i', Xk, Xk), kind='stable')[:idx.shape[0]])]\n"),),
        "the dask SGD path samples rows data-dependently (a chunk returns its shortest rows)",
        ("tests/erm/test_dask_sgd.py::test_sampling_same_rows_as_in_memory_and_independent_per_row",)),
    Mutant(
        "dask-sgd-mask-reused", "erm/_dask.py",
        (("        cuts = np.searchsorted(pos, starts)\n",
          "        pos = np.arange(pos.shape[0])\n        cuts = np.searchsorted(pos, starts)\n"),),
        "the dask SGD path serves every step of a block the block's first rows (one mask reused)",
        ("tests/erm/test_dask_sgd.py::test_sampling_same_rows_as_in_memory_and_independent_per_row",)),
    Mutant(
        "dask-noise-x0.95", "erm/_backends.py",
        (("self._fill(self.rng.bit_generator, self._row, self._row_scale)",
          "self._fill(self.rng.bit_generator, self._row, 0.95 * self._row_scale)"),),
        "the Python/dask loop adds 0.95 × the reported noise",
        (f"{B}::test_noisy_pgd_applied_noise_dask_path",)),
    # --- constants and composition counts --------------------------------------
    Mutant(
        "laplace-pure-sqrt-T", "accounting/laplace.py",
        (("b = check_derived(steps * root_d * sens / eps,", "b = check_derived(math.sqrt(steps) * root_d * sens / eps,"),
         ("lambda b: steps * (root_d * sens / b)", "lambda b: math.sqrt(steps) * (root_d * sens / b)")),
        "pure Laplace composes T steps as √T (basic composition needs T)",
        (f"{C}::test_laplace_pure",)),
    Mutant(
        "laplace-coordinate-count-T-not-Td", "accounting/laplace.py",
        (("""    k = steps * dim
    with derived_from("l2_sensitivity, dim, steps, epsilon and delta"):""",
          """    k = steps
    with derived_from("l2_sensitivity, dim, steps, epsilon and delta"):"""),),
        "the coordinate calibration composes T mechanisms instead of T·d",
        (f"{C}::test_laplace_coordinate",)),
    Mutant(
        "laplace-l2-T-dropped-from-second-term", "accounting/laplace.py",
        (("adv = math.sqrt(2.0 * steps * -math.log(delta)) * s + steps * s * math.expm1(s)",
          "adv = math.sqrt(2.0 * steps * -math.log(delta)) * s + s * math.expm1(s)"),
         ("lambda s: root * s + steps * s * math.expm1(s)", "lambda s: root * s + s * math.expm1(s)")),
        "the L2 Laplace bound's T·s(e^s − 1) term loses its factor T (both places)",
        (f"{C}::test_laplace_l2",)),
    Mutant(
        "laplace-l2-delta-reported-0", "accounting/steps.py",
        (("0.0 if basic <= eps_spent else delta", "0.0 if basic <= 2.0 * eps_spent else delta"),),
        "the L2 Laplace calibration reports δ = 0 although the advanced branch spends δ",
        (f"{C}::test_laplace_l2",)),
    Mutant(
        "advanced-composition-no-2", "accounting/composition.py",
        (("return math.sqrt(2.0 * k * -math.log(delta_prime)) * eps0", "return math.sqrt(k * -math.log(delta_prime)) * eps0"),),
        "advanced composition with √(k ln 1/δ') instead of √(2k ln 1/δ')",
        (f"{C}::test_laplace_coordinate", f"{C}::test_composition_functions_against_theorems")),
    Mutant(
        "heterogeneous-composition-no-2", "accounting/composition.py",
        (("math.sqrt(2.0 * -math.log(delta_prime) * sq)", "math.sqrt(-math.log(delta_prime) * sq)"),),
        "heterogeneous composition with √(ln 1/δ' Σε²) instead of √(2 ln 1/δ' Σε²)",
        (f"{C}::test_composition_functions_against_theorems",)),
    Mutant(
        "basic-composition-max", "accounting/composition.py",
        (("total = math.fsum(eps)", "total = max(eps)"),),
        "basic composition reports max ε_i instead of Σ ε_i",
        (f"{C}::test_composition_functions_against_theorems",)),
    Mutant(
        "budget-accountant-slack", "accounting/composition.py",
        (("fits_e = math.fsum([e, eps]) <= self.epsilon * (1.0 + 1e-12)",
          "fits_e = math.fsum([e, eps]) <= self.epsilon * (1.0 + 1e-4)"),),
        "the accountant lets ε be overspent by 0.01%",
        (f"{C}::test_budget_accountant_refuses_overspend",)),
    Mutant(
        "gaussian-no-sqrt-T", "accounting/gaussian.py",
        (("    root_t = math.sqrt(steps)\n    sigma = check_derived(", "    root_t = 1.0\n    sigma = check_derived("),),
        "σ calibrated for one Gaussian step whatever T (μ = Δ/σ instead of √T·Δ/σ)",
        (f"{C}::test_gaussian_gdp",)),
    Mutant(
        "gdp-delta-curve", "accounting/gaussian.py",
        (("mid, half = -eps / mu, mu / 2.0", "mid, half = -eps / mu, mu / 2.2"),),
        "δ(ε; μ) evaluated with μ/2.2 for μ/2 (Dong–Roth–Su Cor. 2.13 misread)",
        (f"{C}::test_gaussian_gdp", f"{C}::test_gaussian_epsilon_and_delta_curve_against_reference")),
    Mutant(
        "gaussian-mechanism-sens-x0.95", "mechanisms/releases.py",
        (("sigma = accounting.calibrate_gaussian(sens, 1, eps, delta)",
          "sigma = accounting.calibrate_gaussian(0.95 * sens, 1, eps, delta)"),),
        "mechanisms.gaussian calibrates for 0.95 × the sensitivity",
        (f"{B}::test_mechanisms_applied_noise_matches_calibration",)),
    Mutant(
        "laplace-mechanism-scale-x0.95", "mechanisms/releases.py",
        (("return _release(arr, scalar, noise.laplace, sens / eps, rng)",
          "return _release(arr, scalar, noise.laplace, sens / (1.05 * eps), rng)"),),
        "mechanisms.laplace adds Lap(Δ/(1.05 ε))",
        (f"{B}::test_mechanisms_applied_noise_matches_calibration",)),
    Mutant(
        "expmech-rate-x1.1", "mechanisms/releases.py",
        (("k = eps / sens if monotonic else (0.5 * eps) / sens", "k = eps / sens if monotonic else (0.55 * eps) / sens"),),
        "exponential mechanism with rate 0.55 ε/Δ instead of ε/(2Δ)",
        (f"{B}::test_exponential_mechanism_rate",)),
    # --- float32 casts ---------------------------------------------------------
    Mutant(
        "float32-scale-round-to-nearest", "mechanisms/noise.py",
        (("    if float(s) < scale:\n        s = np.nextafter(s, np.float32(np.inf))",
          "    if False:\n        s = np.nextafter(s, np.float32(np.inf))"),),
        "float32 noise scales rounded to nearest (half the time below the certified scale)",
        (f"{E}::test_scale_rounding_helper", f"{E}::test_float32_mechanism_scale_rounds_up")),
    Mutant(
        "float32-loop-scale-cast-to-nearest", "erm/_backends.py",
        (("return code, _noise_mod.scale_for(self.scale, dtype), self.rng.bit_generator",
          "return code, self.scale, self.rng.bit_generator"),),
        "noisy_pgd hands the float64 scale to the float32 loop, which rounds it to nearest",
        (f"{E}::test_float32_noisy_pgd_sigma_used_is_at_least_sigma_reported",)),
    # --- zCDP and the secure grid ---------------------------------------------
    Mutant(
        "grid-backend-float32-sums", "erm/_backends.py",
        (("        return np.float64\n", "        return dtype\n"),),
        "secure mode sums float32 gradients in float32 (error beyond the grid's rounding allowance)",
        ("tests/mechanisms/test_secure.py::test_secure_noisy_pgd_sums_in_float64_for_float32_data",)),
    Mutant(
        "zcdp-conversion-1-over-alpha", "accounting/gaussian.py",
        (("            - math.log(alpha - 1.0))", "            - math.log(alpha))"),),
        "CKS conversion with 1/α in place of 1/(α − 1): δ under-reported",
        (f"{C}::test_zcdp_delta_against_cks_conversion", f"{C}::test_secure_gaussian_zcdp")),
    Mutant(
        "secure-gaussian-steps-dropped", "mechanisms/secure.py",
        (("sigma2 = Fraction(sens_sq * steps) / (2 * _frac(rho))", "sigma2 = Fraction(sens_sq) / (2 * _frac(rho))"),
         ("used = Fraction(sens_sq * steps, 2 * params.sigma2)", "used = Fraction(sens_sq, 2 * params.sigma2)")),
        "secure Gaussian: ρ of one step, not T (zCDP composition count)",
        (f"{C}::test_secure_gaussian_zcdp",)),
    Mutant(
        "secure-l1-grid-no-d", "mechanisms/secure.py",
        (("return int(_frac(sensitivity) / _frac(granularity)) + int(dim)",
          "return int(_frac(sensitivity) / _frac(granularity)) + 1"),),
        "L1 grid sensitivity ⌊Δ/γ⌋ + 1 instead of ⌊Δ/γ⌋ + d (rounding of d coordinates)",
        (f"{C}::test_secure_l1_laplace_grid",)),
    Mutant(
        "secure-expmech-grid-no-plus-1", "mechanisms/secure.py",
        (("    sens = l1_grid_sensitivity(sensitivity, g, 1)\n    rate", "    sens = l1_grid_sensitivity(sensitivity, g, 0)\n    rate"),),
        "secure exponential mechanism: grid sensitivity ⌊Δ/γ⌋ without the rounding's +1",
        (f"{C}::test_secure_exponential_grid",)),
    Mutant(
        "secure-l2-grid-no-sqrt-d", "mechanisms/secure.py",
        (("r = _frac(sensitivity) / _frac(granularity) + _sqrt_up(int(dim))", "r = _frac(sensitivity) / _frac(granularity)"),),
        "L2 grid sensitivity without the rounding's √d",
        (f"{C}::test_secure_gaussian_zcdp", f"{C}::test_secure_laplace_l2_grid")),
    Mutant(
        "secure-laplace-scale-rounded-down", "mechanisms/secure.py",
        (("n = -(-(t * (1 << k)).numerator // (t * (1 << k)).denominator)",
          "n = (t * (1 << k)).numerator // (t * (1 << k)).denominator"),),
        "discrete Laplace scale rounded down to n/2^K (less noise than the budget allows)",
        (f"{C}::test_secure_l1_laplace_grid",)),
    Mutant(
        "secure-gaussian-sigma-rounded-down", "mechanisms/secure.py",
        (("return DiscreteGaussian(t, max(1, -(-q.numerator // q.denominator)))",
          "return DiscreteGaussian(t, max(1, q.numerator // q.denominator))"),),
        "discrete Gaussian σ² rounded down to t·m",
        (f"{C}::test_secure_gaussian_zcdp",)),
    # --- the smooth solvers and the SGD accountant (issue #17) -------------------
    Mutant(
        "gd-gaussian-noise-x0.95", "erm/solvers.py",
        (("backend = _backends.FloatNoise(noise, plan[\"calibration\"], rng, scale=scale)",
          "backend = _backends.FloatNoise(noise, plan[\"calibration\"], rng, scale=scale * 0.95)"),),
        "noisy_gd hands the engine 0.95 × the calibrated scale, and reports the scale",
        (f"{B}::test_noisy_gd_and_sgd_applied_noise_match_reported_scale",
         f"{B}::test_estimator_applied_noise_matches_reported_scale")),
    Mutant(
        "gd-sensitivity-halved", "erm/solvers.py",
        (("    sens = 2.0 * c / n\n", "    sens = c / n\n"),),
        "noisy_gd calibrates to c/n (add/remove) instead of 2c/n (replace-one)",
        (f"{S}::test_noisy_gd_gaussian_calibration",
         f"{B}::test_noisy_gd_one_step_difference_is_eta_times_sensitivity")),
    Mutant(
        "sgd-loop-clips-at-1.1x", "erm/solvers.py",
        (("_grad_sum_kernel(kind, Xb, yb, point, nb, dn, clips.clip, ybound, out, nt,",
          "_grad_sum_kernel(kind, Xb, yb, point, nb, dn, 1.1 * clips.clip, ybound, out, nt,"),),
        "noisy_sgd's Python reference loop clips at 1.1 × the clip the noise is calibrated to",
        (f"{B}::test_noisy_sgd_one_step_difference_is_eta_times_clipped_change",
         "tests/erm/test_sgd_compiled.py::test_compiled_run_is_the_reference_bit_for_bit")),
    Mutant(
        "sgd-compiled-clips-at-1.1x", "erm/_sgdrun.py",
        (("X, y, norms, dn, clips.clip, ybound,", "X, y, norms, dn, 1.1 * clips.clip, ybound,"),),
        "noisy_sgd's compiled run clips at 1.1 × the clip the noise is calibrated to",
        (f"{B}::test_noisy_sgd_one_step_difference_is_eta_times_clipped_change",)),
    Mutant(
        "sgd-replace-one-as-add-remove", "accounting/rdp.py",
        (("return orders, (orders - 0.5) / (orders - 1.0) * a_2a + a_2a1",
          "return orders, steps * _rdp_sampled_gaussian_int(q, sigma, orders)"),),
        "replace-one SGD reported with the add/remove RDP (no weak triangle inequality)",
        (f"{S}::test_sgd_replace_one_bound_is_sound_for_one_step",
         f"{S}::test_sgd_replace_one_is_weak_triangle_of_add_remove")),
    Mutant(
        "pld-dots-rounded-down", "accounting/pld.py",
        (("    lower_share = np.clip(np.expm1(upper_loss - loss_fn(x)) / math.expm1(h), 0.0, 1.0)\n",
          "    lower_share = np.ones_like(x)\n"),),
        "the PLD rounds every loss down to the grid point below (optimistic discretisation)",
        (f"{L}::test_one_step_epsilon_is_a_tight_upper_bound",
         f"{L}::test_one_step_discrete_pld_dominates_the_exact_profile",
         f"{L}::test_no_subsampling_matches_gaussian_dp")),
    Mutant(
        "tilted-pld-masses-one-step-low", "accounting/tilted.py",
        (("    return k0, upper, log_upper, tail * (1.0 + 1e-9), h\n",
          "    return k0 - 1, upper, log_upper, tail * (1.0 + 1e-9), h\n"),),
        "the tilted composition (small δ, many steps) puts each step's masses one grid step low: "
        "an optimistic discretisation, ε short by about T·h",
        (f"{LS}::test_no_subsampling_matches_gaussian_dp_at_small_delta",
         f"{LS}::test_one_step_at_tiny_delta_is_a_tight_upper_bound",
         f"{LS}::test_issue_point_within_5_percent_of_dp_accounting_and_never_below")),
    Mutant(
        "pld-add-remove-one-ordering", "accounting/sgd.py",
        (('kinds = ("replace",) if neighbors == "replace_one" else ("remove", "add")',
          'kinds = ("replace",) if neighbors == "replace_one" else ("add",)'),),
        "add/remove SGD accounted with the \"add\" ordering of the pair only",
        (f"{L}::test_one_step_add_remove_epsilon_is_a_tight_upper_bound",
         f"{L}::test_no_subsampling_add_remove_matches_gaussian_dp")),
    Mutant(
        "pld-calibration-returns-lo", "accounting/sgd.py",
        (("            side = -1\n    return hi\n", "            side = -1\n    return lo\n"),),
        "calibrate_sgd_sigma returns the bracket end that does not meet ε (σ up to 1e-4 too small)",
        (f"{S}::test_calibrate_sgd_sigma_is_tight",
         f"{L}::test_calibration_meets_the_budget_and_stops_within_tolerance")),
    Mutant(
        "rdp-conversion-term-doubled", "accounting/rdp.py",
        (("eps = rdp + np.log1p(-1.0 / orders) - (math.log(delta)", "eps = rdp + 2 * np.log1p(-1.0 / orders) - (math.log(delta)"),),
        "RDP → (ε, δ): the negative log((α−1)/α) term doubled (under-reports ε)",
        (f"{S}::test_rdp_conversion_formula", f"{S}::test_accountant_matches_dp_accounting")),
    # --- objective perturbation (fasterm.erm.objpert, issue #19) -------------------
    Mutant(
        "objpert-noise-x0.95", "erm/objpert.py",
        (("b, b_norm = _norm_noise(rng, d, b_scale)", "b, b_norm = _norm_noise(rng, d, 0.95 * b_scale)"),),
        "objective perturbation draws ‖b‖ at 0.95 × the reported scale",
        (f"{O}::test_applied_noise_matches_the_reported_scale",)),
    Mutant(
        "objpert-sensitivity-L", "erm/objpert.py",
        (("b_scale = accounting.norm_laplace_scale(2.0 * L, eps_b)",
          "b_scale = accounting.norm_laplace_scale(L, eps_b)"),),
        "b calibrated to L instead of the replace-one sensitivity 2L of the data gradient",
        (f"{O}::test_calibration_matches_the_theorem",)),
    Mutant(
        "objpert-jacobian-dropped", "accounting/objpert.py",
        (("total = math.fsum([eps_b, _objpert_log_det(c, n, reg), eps_out])",
          "total = math.fsum([eps_b, eps_out])"),
         ("eps_b = eps - eps_out - _objpert_log_det(c, n, reg)", "eps_b = eps - eps_out")),
        "the Jacobian term log(1 + c/(nμ)) left out of the budget",
        (f"{O}::test_calibration_matches_the_theorem",
         f"{O}::test_exact_minimiser_density_ratio_in_one_dimension")),
    Mutant(
        "objpert-uncertified-solve", "erm/objpert.py",
        (("return bound if bound <= tol else None", "return bound"),
         ("if _norm(g) > 0.5 * tol:", "if _norm(g) > 1e6 * tol:")),
        "the solver stops at a gradient norm far above the tolerance the output noise covers",
        (f"{O}::test_certified_solve_is_within_tolerance_of_the_exact_minimiser",)),
    Mutant(
        "threshold-without-factor-2", "erm/objpert.py",
        (("k = mechanisms.exponential(errors, 1.0, eps, random_state=random_state)",
          "k = mechanisms.exponential(errors, 0.5, eps, random_state=random_state)"),),
        "the private threshold's exponential mechanism at half its sensitivity",
        (f"{O}::test_private_threshold_samples_the_exponential_mechanism",)),
    # --- the release boundary of objective perturbation (issue #26) -----------
    Mutant(
        "objpert-true-count-released", "erm/objpert.py",
        (("tolerance=tol, output_scale=out_scale, steps=MAX_STEPS,",
          "tolerance=tol, output_scale=out_scale, steps=steps,"),),
        "the result (and the estimators' n_iter_) reports the Newton iterations run, not the public cap",
        (f"{R}::test_count_attack_on_the_default_result_is_within_epsilon",
         f"{R}::test_estimator_releases_are_identical_across_neighbours_and_seeds",
         f"{R}::test_estimator_count_attack_is_within_epsilon")),
    # --- multinomial objective perturbation (fasterm.erm.objpert_multi, issue #37) ---
    Mutant(
        "objpert-multi-rank-dropped", "accounting/objpert.py",
        (("v = r * math.log1p(T / (r * n * reg))", "v = math.log1p(T / (n * reg))"),),
        "the Jacobian term of K-class objective perturbation charged as rank one: log(1 + T/(nμ))",
        (f"{OM}::test_determinant_bound_is_attained_so_the_rank_factor_is_needed",)),
    Mutant(
        "objpert-multi-sensitivity-L", "erm/objpert_multi.py",
        (("b_scale = accounting.norm_laplace_scale(2.0 * L, eps_b)",
          "b_scale = accounting.norm_laplace_scale(L, eps_b)"),),
        "B calibrated to L instead of the replace-one sensitivity 2L of the data gradient",
        (f"{OM}::test_calibration_matches_the_theorem",)),
    Mutant(
        "objpert-multi-l1-noise-x0.95", "erm/objpert_multi.py",
        (("b = rng.laplace(0.0, b_scale, dim)", "b = rng.laplace(0.0, 0.95 * b_scale, dim)"),),
        "the ℓ1 noise drawn at 0.95 × the reported scale",
        (f"{OM}::test_applied_noise_matches_the_reported_scale",)),
    Mutant(
        "objpert-multi-uncertified-solve", "erm/objpert_multi.py",
        (("return bound if bound <= tol else None", "return bound"),
         ("if _norm(g) > 0.5 * tol:", "if _norm(g) > 1e6 * tol:")),
        "the K-class solver stops at a gradient norm far above the tolerance the output noise covers",
        (f"{OM}::test_certified_solve_is_within_tolerance_of_the_exact_minimiser",)),
    Mutant(
        "objpert-noise-norm-released", "erm/objpert.py",
        (('info={"n": n, "d": d, "loss": repr(sloss)},',
          'info={"n": n, "d": d, "loss": repr(sloss), "noise_norm": b_norm},'),),
        "the norm of the secret perturbation b stored on the default result",
        (f"{R}::test_noise_norm_attack_on_the_default_result_is_within_epsilon",
         f"{R}::test_default_result_fields_are_identical_across_neighbours_and_seeds",
         f"{R}::test_estimator_releases_are_identical_across_neighbours_and_seeds")),
    Mutant(
        "objpert-diagnostics-by-default", "erm/objpert.py",
        (("    if nonprivate_diagnostics:\n        diagnostics = {",
          "    if True:\n        diagnostics = {"),),
        "the non-private diagnostics (‖b‖, residual, true count) attached without the opt-in",
        (f"{R}::test_nonprivate_diagnostics_are_off_by_default_and_checked",
         f"{R}::test_nonprivate_diagnostics_hold_the_true_values",
         f"{R}::test_estimator_releases_are_identical_across_neighbours_and_seeds")),
    Mutant(
        "expmech-pass-count-released", "erm/expmech.py",
        (("w, _, _, _ = _sample(prob, rng, steps, directions=_DIRECTIONS[directions])",
          "w, _, _, evals = _sample(prob, rng, steps, directions=_DIRECTIONS[directions])"),
         ('info={"n": n, "d": d, "affine_dim": m, "directions": directions},',
          'info={"n": n, "d": d, "affine_dim": m, "line_passes": evals, "directions": directions},')),
        "the hit-and-run line samplers' pass count (data- and draw-dependent) in the result's info",
        ("tests/erm/test_expmech_erm.py::test_result_info_is_the_same_across_neighbours_and_seeds",)),
    Mutant(
        "expmech-chain-claims-pure", "erm/expmech.py",
        (("delta=0.0 if exact else None, delta_tv", "delta=0.0, delta_tv"),),
        "a finite hit-and-run chain reports delta = 0 (issue #15 item 2)",
        ("tests/erm/test_expmech_erm.py::test_result_fields_and_privacy_statement",)),
    Mutant(
        "estimator-expmech-delta0-accepted", "linear_model/_plan.py",
        (("if method == \"expmech\" and delta == 0.0 and d is not None and d + bool(fit_intercept) > 1:",
          "if method == \"expmech\" and delta == 0.0 and d is not None and d + bool(fit_intercept) > 10**9:"),),
        "solver='expmech' accepts delta=0 for an inexact chain",
        ("tests/linear_model/test_linear_model.py::test_expmech_refuses_delta_0_for_a_chain_and_stays_pure_when_exact",)),
    # --- multiclass (one (d + 1) × K gradient per step) ------------------------
    Mutant(
        "multiclass-loop-clips-at-1.1x", "linear_model/_multiclass.py",
        (("        c_eff = release_clip(n, 1.0 / n)\n", "        c_eff = 1.1 * release_clip(n, 1.0 / n)\n"),),
        "the multiclass loop clips the per-example gradient matrices at 1.1 × the clip used for Δ₂",
        (f"{M}::test_mirrored_row_attains_the_reported_sensitivity",
         f"{M}::test_label_change_moves_one_step_by_the_clipped_gradient_change")),
    Mutant(
        "multiclass-sgd-clips-at-1.1x", "linear_model/_mcrun.py",
        (("*data, y, norms, data_norm, s_col, float(inner(clips.clip)), steps,",
          "*data, y, norms, data_norm, s_col, float(inner(1.1 * clips.clip)), steps,"),),
        "multiclass SGD clips the per-example gradient matrices at 1.1 × the clip its noise is calibrated for",
        (f"{M}::test_mirrored_row_attains_the_reported_sensitivity",
         f"{M}::test_sgd_clips_each_batch_at_the_float_margin")),
    Mutant(
        "multiclass-clip-table-margin-dropped", "linear_model/_multiclass.py",
        (("        clips = _sgdrun.RunClip(_float_margin.run_clip(c_clip, work, cap, dim,",
          "        clips = _sgdrun.RunClip(c_clip or _float_margin.run_clip(c_clip, work, cap, dim,"),),
        "multiclass SGD's one clip per run is c itself (Θ = 0): the rounding of a batch sum moves "
        "the release beyond the sensitivity",
        (f"{M}::test_sgd_clips_each_batch_at_the_float_margin",
         "tests/linear_model/test_multiclass_loop.py::test_sgd_matches_the_numpy_reference")),
    Mutant(
        "multiclass-class-sums-half-sensitivity", "linear_model/_multiclass.py",
        (("    exact = Fraction(2) * Fraction(wb) * Fraction(c1)\n",
          "    exact = Fraction(wb) * Fraction(c1)\n"),),
        "δ = 0 class sums: Δ₁ = B·c₁ (one row's change counted, not the removal and the addition)",
        (f"{M}::test_delta0_class_sums_against_reference",)),
    Mutant(
        "class-sums-margin-dropped", "linear_model/_multiclass.py",
        (("    c_eff = _float_margin.effective_clip(c1, _float_margin.class_sums_theta(n, d))\n",
          "    c_eff = c1\n"),),
        "δ = 0 class sums: rows clipped in L1 at c₁ itself, so the computed sums of neighbours can "
        "differ by more than Δ₁ = 2B·c₁",
        (f"{F}::test_class_sums_fit_clips_at_the_margin",)),
    Mutant(
        "class-sums-theta-no-sum-term", "erm/_float_margin.py",
        (("    return rho * (1 + n * gamma(n, U)) * (1 + U) - 1\n",
          "    return rho * (1 + U) - 1\n"),),
        "Θ of the class sums without the n·γ_n of the BLAS product: the sums' rounding uncovered",
        (f"{F}::test_class_sums_difference_within_reported_sensitivity",)),
    Mutant(
        "float-margin-dropped", "erm/_float_margin.py",
        (("    if c == 0.0 or theta == 0:\n        return float(c)\n",
          "    if True:\n        return float(c)\n"),),
        "the kernels clip at c itself (Θ = 0): float rounding moves the release beyond 2c·s",
        (f"{F}::test_released_difference_within_reported_sensitivity",)),
    Mutant(
        "sgd-clip-table-margin-dropped", "erm/_float_margin.py",
        (("    exact = Fraction(c) * (1 - 2 * tau) / (1 + 2 * t1)\n", "    exact = Fraction(c)\n"),),
        "minibatch SGD's one clip per run is c itself (Θ = 0): the rounding of a batch sum moves "
        "the release beyond the sensitivity",
        (f"{F}::test_released_difference_within_reported_sensitivity",
         f"{OS}::test_run_clip_is_the_one_sided_formula",
         f"{OS}::test_one_sided_bound_holds_on_adversarial_batches")),
    Mutant(
        "sgd-one-sided-factor-2-dropped", "erm/_float_margin.py",
        (("    exact = Fraction(c) * (1 - 2 * tau) / (1 + 2 * t1)\n",
          "    exact = Fraction(c) * (1 - tau) / (1 + t1)\n"),),
        "the run's clip covers the two-sided margin c(1 − τ)/(1 + Θ₁), not the one-sided "
        "c(1 − 2τ)/(1 + 2Θ₁) the Poisson accountant needs (a batch and the same batch plus one row)",
        (f"{OS}::test_run_clip_is_the_one_sided_formula",
         "tests/linear_model/test_multiclass_loop.py::test_run_clip_with_the_multiclass_theta",
         f"{M}::test_sgd_clips_each_batch_at_the_float_margin")),
    Mutant(
        "sgd-eta-not-taken-out-of-delta", "erm/solvers.py",
        (("        sigma = accounting.calibrate_sgd_sigma(q, steps, eps, delta_fit, neighbors)\n",
          "        sigma = accounting.calibrate_sgd_sigma(q, steps, eps, delta, neighbors)\n"),),
        "noisy_sgd calibrates σ for the whole δ: the share η_max paying for a batch above the cap M "
        "is spent twice",
        (f"{OS}::test_fit_reports_the_requested_delta_and_calibrates_for_delta_fit",)),
    Mutant(
        "multiclass-lipschitz-no-sqrt2", "linear_model/_multiclass.py",
        (("    return math.sqrt(2.0) * data_norm\n", "    return data_norm\n"),),
        "G = X for the matrix gradient (‖p − e_y‖ ≤ 1 assumed; it reaches √2): clip=None under-noised",
        (f"{M}::test_per_example_gradient_norm_bound_and_start_curvature",)),
    Mutant(
        "multiclass-sensitivity-per-class", "linear_model/_multiclass.py",
        (("    sens = 2.0 * c / n\n", "    sens = 2.0 * c / (n * math.sqrt(K))\n"),),
        "Δ₂ divided by √K (as if each class's column were a separate release)",
        (f"{M}::test_gaussian_calibration_against_gdp_reference",
         f"{M}::test_mirrored_row_attains_the_reported_sensitivity")),

    # --- private hyperparameter search (random stopping) -----------------------
    Mutant(
        "search-inner-term-without-1-plus-eta", "accounting/search.py",
        (("rdp = 0.5 * mu * mu * lam + (1.0 + eta) * inner + math.log(",
          "rdp = 0.5 * mu * mu * lam + inner + math.log("),),
        "the search's RDP drops the factor 1 + η of Papernot–Steinke's second and third terms",
        (f"{P}::test_private_search_epsilon_against_reference",)),
    Mutant(
        "search-no-log-expected-runs", "accounting/search.py",
        (("math.log(_tnb_expected_runs(eta, gamma)) / (lam - 1.0)", "0.0 / (lam - 1.0)"),),
        "the search's RDP leaves out log E[K]/(λ − 1)",
        (f"{P}::test_private_search_epsilon_against_reference",)),
    Mutant(
        "search-score-noise-uses-whole-mu", "model_selection.py",
        (("noisy = value + float(child.normal(0.0, sens / mu_score))",
          "noisy = value + float(child.normal(0.0, sens / mu))"),),
        "the score's noise is calibrated to the whole run's μ, not its share",
        (f"{P}::test_score_noise_has_the_planned_scale",)),
    Mutant(
        "search-score-target-sensitivity-from-label-bound", "model_selection.py",
        (("    return -float(np.dot(r, r)), (high - low) ** 2\n",
          "    return -float(np.dot(r, r)), 4.0 * float(final.label_bound) ** 2\n"),),
        "a regression search with target_bounds clips the score to [low, high] but calibrates its noise "
        "to 4·label_bound² (the mapped range), not (high − low)²",
        (f"{P}::test_regression_score_clips_to_target_bounds_and_has_their_noise_scale",)),
    Mutant(
        "search-fit-spends-whole-mu", "model_selection.py",
        (("run_eps = accounting.gaussian_epsilon(mu_fit * (1.0 - _MU_MARGIN), run_delta)",
          "run_eps = accounting.gaussian_epsilon(mu * (1.0 - _MU_MARGIN), run_delta)"),),
        "each fit spends the whole run's μ (the score's share counted twice)",
        (f"{P}::test_search_never_reports_more_than_the_budget",)),
    Mutant(
        "search-runs-drawn-with-wrong-gamma", "model_selection.py",
        (("return int(rng.logseries(1.0 - gamma))", "return int(rng.logseries(1.0 - gamma / 2))"),),
        "K drawn with more runs than the accounting's distribution",
        (f"{P}::test_number_of_runs_follows_the_truncated_negative_binomial",)),
    Mutant(
        "search-column-selectors-unchecked", "model_selection.py",
        (("            why = _column_refusal(columns)\n", "            why = None\n"),),
        "PrivateSearch takes a ColumnTransformer's callable column selector, which chooses the columns "
        "from the data (issue #35, item 2)",
        (f"{P}::test_private_search_refuses_callable_column_selectors",
         f"{P}::test_private_search_refuses_nested_callable_selectors_before_any_fit")),
    Mutant(
        "search-hidden-runs-warn", "model_selection.py",
        (("                with warnings.catch_warnings(record=True) as caught:\n"
          "                    warnings.simplefilter(\"always\")\n",
          "                with __import__(\"contextlib\").nullcontext([]) as caught:\n"),),
        "each hidden run's warnings reach the caller (a log of them counts K; issue #35, item 5)",
        (f"{P}::test_hidden_runs_give_one_summary_warning_that_does_not_depend_on_k",
         f"{P}::test_summary_warning_is_that_of_the_released_run")),
    Mutant(
        "search-warning-summary-from-every-run", "model_selection.py",
        (("        best = None\n", "        best, every = None, []\n"),
         ("                    best = (noisy, params, est, caught)\n",
          "                    best = (noisy, params, est, caught)\n                every += caught\n"),
         ("        summary = _warning_summary(best[3])\n", "        summary = _warning_summary(every)\n")),
        "the search's one warning names the kinds seen in every run, not the released run's (it then tells "
        "which candidates the hidden runs drew, more of them the larger K; issue #35, item 5)",
        (f"{P}::test_summary_warning_is_that_of_the_released_run",)),
    # --- the release surface: nothing but the output and public constants on a released object --
    Mutant(
        "estimator-stores-data-statistic", "linear_model/_base.py",
        (("        self._record(result, plan)\n        return coef, intercept\n",
          "        self._record(result, plan)\n        self.max_abs_feature_ = float(abs(X).max())\n"
          "        return coef, intercept\n"),),
        "a fitted estimator keeps a statistic of the training data (the largest |x_ij|) beside its model",
        (f"{RS}::test_estimator_surface",)),
    Mutant(
        "estimator-stores-private-underscore-statistic", "linear_model/_base.py",
        (("        self._record(result, plan)\n        return coef, intercept\n",
          "        self._record(result, plan)\n        self._max_abs_feature = float(abs(X).max())\n"
          "        return coef, intercept\n"),),
        "a fitted estimator keeps a statistic of the training data in an underscore attribute (pickled with it)",
        (f"{RS}::test_estimator_surface",)),
    Mutant(
        "multiclass-stores-noise-norm", "linear_model/_multiclass.py",
        (("            \"lipschitz_loss\": G, \"secure\": None if sgd else backend.secure_calibration,\n",
          "            \"lipschitz_loss\": G, \"secure\": None if sgd else backend.secure_calibration,\n"
          "            \"last_noise_norm\": float(np.linalg.norm(backend._row))\n"
          "            if getattr(backend, \"_row\", None) is not None else 0.0,\n"),),
        "the multiclass result's info keeps the norm of the last noise vector drawn (by the numpy loop: the "
        "compiled one keeps none in Python)",
        (f"{RS}::test_estimator_surface", f"{RS}::test_multiclass_numpy_loop_surface")),
    Mutant(
        "search-stores-number-of-runs", "model_selection.py",
        (("        self.expected_runs_ = runs\n", "        self.expected_runs_ = runs\n        self.n_runs_ = k\n"),),
        "PrivateSearch releases the number of runs K with the best run (the theorem holds with K hidden)",
        (f"{RS}::test_private_search_surface",)),
    # --- sample weights: the declared bound B ----------------------------------
    Mutant(
        "weights-not-clipped-to-bound", "_validation.py",
        (("    out = np.clip(w, 0.0, bound)  # a new array: NaN stays NaN here\n",
          "    out = np.clip(w, 0.0, None)  # a new array: NaN stays NaN here\n"),),
        "weights above the declared weight_bound are used as given (Δ₂ no longer covers a record)",
        (f"{W}::test_one_step_difference_is_eta_times_weighted_sensitivity",
         f"{W}::test_weights_are_mapped_into_the_bound_never_refused")),
    Mutant(
        "pgd-sensitivity-ignores-weight-bound", "erm/optimize.py",
        (("    G_priv = wb * G_clip\n", "    G_priv = G_clip\n"),),
        "noisy_pgd calibrates its noise to weight 1 whatever weight_bound declares",
        (f"{W}::test_gaussian_calibration_scales_with_weight_bound",
         f"{W}::test_one_step_difference_is_eta_times_weighted_sensitivity")),
    Mutant(
        "gd-sensitivity-ignores-weight-bound", "erm/solvers.py",
        (("    c = wb * c_clip  # a weighted record's clipped gradient has norm ≤ B·c\n    sens = 2.0 * c / n\n    R = _start_distance(constraint)\n",
          "    c = c_clip\n    sens = 2.0 * c / n\n    R = _start_distance(constraint)\n"),),
        "noisy_gd takes B = 1 for its sensitivity while the weights go up to weight_bound",
        (f"{W}::test_gd_and_sgd_calibration_scale_with_weight_bound",)),
    # --- issue #26: add/remove SGD uses no private count; CSR canonical form checked for real --
    Mutant(
        "sgd-add-remove-divides-by-qn", "erm/solvers.py",
        (("        if neighbors == \"replace_one\":\n            m = q * n  #",
          "        if True:\n            m = q * n  #"),),
        "noisy_sgd(neighbors='add_remove') divides by q·n again (n is private under add/remove)",
        (f"{RA}::test_zero_row_attack_stays_within_epsilon",
         f"{RA}::test_add_remove_public_fields_identical_across_neighbours_and_seeds")),
    Mutant(
        "csr-trusts-cached-canonical-flag", "_validation.py",
        (("    canonical = _csr_is_canonical(X.indptr, X.indices)\n", "    canonical = X.has_canonical_format\n"),),
        "check_csr reads scipy's cached has_canonical_format (stale after indices are edited)",
        (f"{SP}::test_stale_canonical_flag_is_not_trusted", f"{SP}::test_canonical_check_against_reference")),
    # --- issue #35: CSR column indices in range; add/remove SGD's domain; AdaSSP's float margin --------
    Mutant(
        "csr-index-range-unchecked", "_validation.py",
        (("    if span is not None and not (span[0] >= 0 and span[1] < d):\n", "    if False:\n"),),
        "check_csr takes column indices outside [0, d): an index d shares the design's intercept column",
        (f"{SP}::test_index_d_would_share_the_intercept_column_beyond_the_sensitivity",
         f"{SP}::test_every_csr_entry_point_refuses_indices_outside_the_columns",
         f"{SP}::test_index_range_read_from_the_arrays_for_any_layout")),
    Mutant(
        "csr-index-d-taken", "_validation.py",
        (("    if span is not None and not (span[0] >= 0 and span[1] < d):\n",
          "    if span is not None and not (span[0] >= 0 and span[1] <= d):\n"),),
        "check_csr takes the column index d (off by one): it collides with the intercept column",
        (f"{SP}::test_index_d_would_share_the_intercept_column_beyond_the_sensitivity",
         f"{SP}::test_every_csr_entry_point_refuses_indices_outside_the_columns")),
    Mutant(
        "sgd-add-remove-outside-domain", "erm/solvers.py",
        (("        if n > n_max:\n", "        if False:\n"),),
        "noisy_sgd(neighbors='add_remove') fits X beyond its domain n ≤ 64·⌈m/q⌉ (batches above the clip's cap)",
        (f"{OS}::test_add_remove_refuses_data_sets_beyond_its_domain",)),
    Mutant(
        "adassp-no-float-margin", "erm/ssp.py",
        (("        A = _clip_rows_dense(np.asarray(A, dtype=np.float64), plan.clip)\n",
          "        A = _clip_rows_dense(np.asarray(A, dtype=np.float64), Xb)\n"),
         ("        A = clip_rows(A.astype(np.float64), plan.clip)\n", "        A = clip_rows(A.astype(np.float64), Xb)\n")),
        "AdaSSP clips the rows at X itself: the computed G and b of neighbours exceed their sensitivities",
        (f"{SS}::test_computed_releases_of_neighbours_within_declared_sensitivities",
         f"{SS}::test_estimator_rows_are_clipped_at_the_plan_and_lambda_is_certified")),
    Mutant(
        "adassp-lambda-uncertified", "erm/ssp.py",
        (("    lam_min = _lambda_min(G, plan)\n", "    lam_min = float(np.linalg.eigvalsh(G)[0])\n"),),
        "AdaSSP releases the eigensolver's λ_min, whose error has no proved bound",
        (f"{SS}::test_estimator_rows_are_clipped_at_the_plan_and_lambda_is_certified",)),
    Mutant(
        "adassp-margin-ignores-the-sums", "erm/_float_margin.py",
        (("    gG, gb = gamma(r + K + 1, U), gamma(r + K, U)\n", "    gG, gb = gamma(1, U), gamma(1, U)\n"),),
        "AdaSSP's margin counts one rounding per term, not the r + K + 1 of the blocked sums",
        (f"{SS}::test_plan_is_the_proved_one",)),
    Mutant(
        "adassp-bisection-trusts-the-eigensolver", "erm/ssp.py",
        (("    if (plan.lo <= lo_t and hi_t <= plan.hi and _cholesky_succeeds(G, lo_t, plan.scale)\n"
          "            and not _cholesky_succeeds(G, hi_t, plan.scale)):\n",
          "    if True:\n"),),
        "the λ_min release skips its Cholesky certificate (falls back to the bisection never)",
        (f"{SS}::test_certified_lambda_min_within_its_bound",)),
    # --- memos of public work: a key that misses a quantity hands out another plan --
    Mutant(
        "gd-plan-memo-ignores-dimension", "linear_model/_rules.py",
        (("        key = (ball.dim,) + config + tuple(map(type, config))\n",
          "        key = config + tuple(map(type, config))\n"),),
        "the estimators reuse a noisy_gd plan made for another number of features (E‖h‖², momentum)",
        (f"{K}::test_each_public_quantity_gets_its_own_plan",)),
    Mutant(
        "gd-plan-memo-ignores-epsilon", "linear_model/_rules.py",
        (("        key = (ball.dim,) + config + tuple(map(type, config))\n",
          "        key = (ball.dim,) + config[:7] + config[8:] + tuple(map(type, config))\n"),),
        "the estimators reuse a noisy_gd plan (its σ) made for another ε",
        (f"{K}::test_each_public_quantity_gets_its_own_plan",)),
    # --- regression: AdaSSP and the n-scaled rule (issue 30) ----------------------
    Mutant(
        "adassp-add-remove-gram-sensitivity", "erm/ssp.py",
        (("sens = (B * X * X, math.sqrt(2.0) * B * X * X, 2.0 * B * X * Y)",
          "sens = (B * X * X, B * X * X, 2.0 * B * X * Y)"),),
        "AdaSSP calibrates the Gram release to the add/remove sensitivity X² under replace-one",
        (f"{RG}::test_adassp_gaussian_calibration_is_the_gdp_composition",
         f"{RG}::test_adassp_sensitivity_bounds_hold_on_pairs_of_records",
         f"{RG}::test_adassp_matches_loop_reference")),
    Mutant(
        "adassp-two-releases-accounted", "erm/ssp.py",
        (("sigma = accounting.calibrate_gaussian(1.0, 3, eps, delta)",
          "sigma = accounting.calibrate_gaussian(1.0, 2, eps, delta)"),),
        "AdaSSP composes only two of its three Gaussian releases",
        (f"{RG}::test_adassp_gaussian_calibration_is_the_gdp_composition",
         f"{RG}::test_adassp_matches_loop_reference")),
    Mutant(
        "adassp-laplace-l1-gram-sensitivity", "erm/ssp.py",
        (("sens = (B * X * X, B * (p + 1) * X * X, 2.0 * B * math.sqrt(p) * X * Y)",
          "sens = (B * X * X, B * X * X, 2.0 * B * math.sqrt(p) * X * Y)"),),
        "AdaSSP's δ = 0 Gram release uses the L2 bound where the Laplace mechanism needs L1",
        (f"{RG}::test_adassp_laplace_calibration_is_basic_composition",
         f"{RG}::test_adassp_sensitivity_bounds_hold_on_pairs_of_records")),
    Mutant(
        "adassp-weights-unbounded", "erm/ssp.py",
        (("cal = adassp_scales(eps, delta, p, Xb, Yb, B if w is not None else 1.0, rho)",
          "cal = adassp_scales(eps, delta, p, Xb, Yb, 1.0, rho)"),),
        "AdaSSP ignores weight_bound: a record of weight B moves the statistics B times more than the noise covers",
        (f"{RG}::test_adassp_weights_match_reference_and_ones_match_unweighted",)),
    # --- bounds="private": the ranges' share of the budget (issue 28) ---------------
    Mutant(
        "private-ranges-cost-not-reported", "linear_model/_bounds.py",
        (("        return float(result.epsilon) + eps_r, ",
          "        return float(result.epsilon), "),),
        "bounds='private' reports the fit's ε only, not the ranges' share (basic composition)",
        ("tests/linear_model/test_bounds.py::test_private_bounds_accounting",)),
    Mutant(
        "private-ranges-fit-spends-whole-epsilon", "linear_model/_bounds.py",
        (("    return _rest(epsilon, PRIVATE_SHARE * epsilon), _rest(delta, PRIVATE_SHARE * delta)\n",
          "    return epsilon, _rest(delta, PRIVATE_SHARE * delta)\n"),),
        "bounds='private' spends ε on the ranges and the whole ε again on the fit",
        ("tests/linear_model/test_bounds.py::test_private_bounds_accounting",)),
    Mutant(
        "private-quantiles-not-composed-over-features", "linear_model/_bounds.py",
        (("    k = PRIVATE_MECHANISMS * d\n",
          "    k = PRIVATE_MECHANISMS\n"),),
        "each feature's medians get the whole range budget (d-fold composition forgotten)",
        ("tests/linear_model/test_bounds.py::test_private_bounds_accounting",)),
    Mutant(
        "private-joint-forgets-the-fit", "linear_model/_bounds.py",
        (("        joint = (accounting.zcdp_rho(epsilon, delta) - mu_fit * mu_fit / 2.0) * (1.0 - 1e-9)\n",
          "        joint = accounting.zcdp_rho(epsilon, delta) * (1.0 - 1e-9)\n"),),
        "joint zCDP accounting gives the medians the whole ρ, as if the Gaussian fit were free",
        ("tests/linear_model/test_bounds.py::test_private_bounds_accounting",)),
    Mutant(
        "private-joint-with-subsampled-fit", "linear_model/_plan.py",
        (("                and self.optimiser != \"sgd\" and not self.secure)\n",
          "                or True)\n"),),
        "joint zCDP accounting planned for a fit that is not full-batch Gaussian (SGD, Laplace, pure)",
        ("tests/linear_model/test_bounds.py::test_private_bounds_accounting",)),
    Mutant(
        "private-sgd-joint-forgets-the-fit", "linear_model/_bounds.py",
        (("    room = (float(epsilon) - (r + np.log1p(",
          "    room = (float(epsilon) - (0.5 * r + np.log1p("),),
        "joint Rényi-DP accounting with a noisy SGD fit counts half of the fit's RDP curve",
        ("tests/linear_model/test_bounds.py::test_private_bounds_accounting",
         "tests/linear_model/test_bounds.py::test_sgd_joint_rho_against_a_slow_reference")),
    Mutant(
        "private-sgd-plan-binary-epochs-for-multiclass", "linear_model/_plan.py",
        (("                       epochs=M.SGD_EPOCHS * opts[\"epochs\"], sample_rate=q, sgd_steps=T)\n",
          "                       epochs=M.SGD_EPOCHS * opts[\"epochs\"], sample_rate=q,\n"
          "                       sgd_steps=int(math.ceil(opts[\"epochs\"] / q)))\n"),),
        "bounds='private' plans a multiclass SGD fit with the binary epochs (half its steps)",
        ("tests/linear_model/test_bounds.py::test_private_bounds_accounting",)),
    Mutant(
        "private-sgd-joint-unchecked", "linear_model/_bounds.py",
        (("        if not rdp_to_epsilon(r + plan.rho_r * orders, orders, joint_delta) <= plan.epsilon:\n",
          "        if False:\n"),),
        "total() reports (ε, δ) for a joint SGD plan without checking the fit it got",
        ("tests/linear_model/test_bounds.py::test_a_joint_plan_refuses_a_fit_that_is_not_its_gaussian",)),
    # --- the budget at its limits (issue #35) -----------------------------------
    Mutant(
        "gaussian-epsilon-above-cap-silently-capped", "accounting/gaussian.py",
        (("    if not eps <= GAUSSIAN_EPSILON_CAP:\n", "    if False:\n"),
         ("(or delta=0 with Laplace noise)\")\n    return eps\n",
          "(or delta=0 with Laplace noise)\")\n    return min(eps, GAUSSIAN_EPSILON_CAP)\n")),
        "an ε above GAUSSIAN_EPSILON_CAP is calibrated as the cap, and the cap is reported as spent (the ε asked "
        "is not the ε spent)",
        (f"{BL}::test_gaussian_calibrations_refuse_epsilon_above_the_maximum",
         f"{BL}::test_every_gaussian_fit_refuses_epsilon_above_the_maximum")),
    Mutant(
        "delta-warning-from-2-over-n", "_warnings.py",
        (("0.0 < delta and delta >= 1.0 / n)", "0.0 < delta and delta >= 2.0 / n)"),),
        "δ ≥ 1/n warns only from 2/n: a δ that permits publishing a record passes silently",
        (f"{BL}::test_the_threshold_is_one_over_n", f"{BL}::test_the_warning_is_for_the_delta_spent")),
    Mutant(
        "estimator-delta-warning-for-the-fit-share", "_warnings.py",
        (("        warn_large_delta(getattr(self, \"delta_\", 0.0), X.shape[0], type(self).__name__)\n",
          "        warn_large_delta(getattr(self, \"result_\").delta or 0.0, X.shape[0], type(self).__name__)\n"),),
        "the estimator checks the fit's share of δ, not the δ it reports (bounds='private' ranges left out)",
        (f"{BL}::test_the_warning_is_for_the_delta_spent",)),
    Mutant(
        "estimator-solvers-warn-again", "_warnings.py",
        (("        with delta_checked_outside():\n            out = fit_step(self, X, *args, **kwargs)\n",
          "        out = fit_step(self, X, *args, **kwargs)\n"),),
        "an estimator's solvers warn about δ ≥ 1/n too, for their share of δ (two warnings per fit)",
        (f"{BL}::test_delta_of_at_least_one_over_n_warns_once",)),
    # --- multinomial objective perturbation, δ > 0 (fasterm.erm.amp, issue #37) ---------
    Mutant(
        "amp-sensitivity-halved", "erm/amp.py",
        (("    s = 2.0 * math.sqrt(2.0) * X / sigma\n", "    s = math.sqrt(2.0) * X / sigma\n"),),
        "δ_op computed for Δ = √2·X instead of the replace-one 2√2·X",
        (f"{AM}::test_delta_matches_monte_carlo",)),
    Mutant(
        "amp-jacobian-rank-one", "erm/amp.py",
        (("    return (K - 1) * math.log1p(X * X / (2.0 * n * lam))", "    return math.log1p(X * X / (2.0 * n * lam))"),),
        "the Jacobian term counts one eigenvalue instead of the K − 1 of the multinomial Hessian",
        (f"{AM}::test_delta_matches_monte_carlo",)),
    Mutant(
        "amp-noise-x0.95", "erm/amp.py",
        (("    B = rng.standard_normal((p, K)) * sigma\n", "    B = rng.standard_normal((p, K)) * (0.95 * sigma)\n"),),
        "the objective noise is drawn at 0.95 σ while σ is reported",
        (f"{AM}::test_release_matches_a_slow_reference_minimiser",)),
    Mutant(
        "amp-uncertified-solve", "erm/amp.py",
        (('options={"gtol": tol / 4.0, "maxiter": MAX_ITER})', 'options={"gtol": 1e6 * tol, "maxiter": MAX_ITER})'),
         ("        if bound <= tol:\n            break\n", "        if bound <= 1e6 * tol:\n            break\n"),
         ("    if not bound <= tol:\n", "    if not bound <= 1e6 * tol:\n")),
        "the solver stops far above the tolerance the output noise covers",
        (f"{AM}::test_release_matches_a_slow_reference_minimiser",
         f"{AM}::test_release_surface_and_public_constants")),
]
