// The _losses module's compiled kernels for float32 data, logistic and hinge
// losses, and the float32 row norms: one of the translation units
// (losses_*.cpp) the build compiles in parallel; the code is losses.hpp's.
#include "fasterm/losses.hpp"

namespace fasterm {
namespace losses {
FASTERM_LOSSES_DEFINE_ENTRY_POINTS(Logistic, float)
FASTERM_LOSSES_DEFINE_ENTRY_POINTS(Hinge, float)
FASTERM_LOSSES_DEFINE_NORMS_ENTRY(float)
}  // namespace losses
}  // namespace fasterm
