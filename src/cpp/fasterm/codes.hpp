// The integer codes that cross the boundary between Python, Cython and C++:
// one definition of each.  src/fasterm/_codes.pxd declares these enums to
// Cython, and the Python constants of fasterm.erm._losses and fasterm.erm._hitrun are
// their values (fasterm/erm/losses.py and fasterm/erm/constraints.py read them there).
#pragma once

namespace fasterm {

// The loss of a linear model, l(<w, x>, y) (fasterm/erm/losses.py: Loss._kind).
enum LossKind : int { kLogistic = 0, kHinge = 1, kSquared = 2, kAbsolute = 3, kLinear = 4 };

// A feasible set (fasterm/erm/constraints.py): the projection of the fused PGD loop
// (all four) and the chords of hit-and-run (the first three).
enum SetKind : int { kL2Ball = 0, kBox = 1, kSimplex = 2, kL1Ball = 3 };

// The noise drawn inside the fused PGD loop (fasterm/erm/_backends.py).
enum NoiseKind : int { kNoiseNone = 0, kNoiseLaplace = 1, kNoiseGaussian = 2 };

// Hit-and-run line samplers and chain directions (fasterm/erm/expmech.py).
// kDirect: hinge/absolute with l2 = 0 by sorted kinks, logistic by rejection
// from curvature bounds; kArs: adaptive rejection sampling.
enum LineMethod : int { kAuto = 0, kDirect = 1, kArs = 2 };
enum Directions : int { kSphere = 0, kMixed = 1 };

}  // namespace fasterm
