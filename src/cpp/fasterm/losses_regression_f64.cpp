// The _losses module's compiled kernels for float64 data, squared, absolute
// and linear losses: one of the translation units (losses_*.cpp) the build
// compiles in parallel; the code is losses.hpp's.
#include "fasterm/losses.hpp"

namespace fasterm {
namespace losses {
FASTERM_LOSSES_DEFINE_ENTRY_POINTS(Squared, double)
FASTERM_LOSSES_DEFINE_ENTRY_POINTS(Absolute, double)
FASTERM_LOSSES_DEFINE_ENTRY_POINTS(Linear, double)
}  // namespace losses
}  // namespace fasterm
