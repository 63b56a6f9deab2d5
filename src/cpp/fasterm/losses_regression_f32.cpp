// The _losses module's compiled kernels for float32 data, squared, absolute
// and linear losses: one of the translation units (losses_*.cpp) the build
// compiles in parallel; the code is losses.hpp's.
#include "fasterm/losses.hpp"

namespace fasterm {
namespace losses {
FASTERM_LOSSES_DEFINE_ENTRY_POINTS(Squared, float)
FASTERM_LOSSES_DEFINE_ENTRY_POINTS(Absolute, float)
FASTERM_LOSSES_DEFINE_ENTRY_POINTS(Linear, float)
}  // namespace losses
}  // namespace fasterm
