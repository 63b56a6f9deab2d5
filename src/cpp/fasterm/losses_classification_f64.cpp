// The _losses module's compiled kernels for float64 data, logistic and hinge
// losses, and the float64 row norms: one of the translation units
// (losses_*.cpp) the build compiles in parallel; the code is losses.hpp's.
#include "fasterm/losses.hpp"

namespace fasterm {
namespace losses {
FASTERM_LOSSES_DEFINE_ENTRY_POINTS(Logistic, double)
FASTERM_LOSSES_DEFINE_ENTRY_POINTS(Hinge, double)
FASTERM_LOSSES_DEFINE_NORMS_ENTRY(double)
}  // namespace losses
}  // namespace fasterm
