// The hit-and-run chain (hitrun.hpp) for double data, both instruction-set
// versions: one of the _hitrun module's translation units, compiled in
// parallel (CMakeLists.txt).
#include "fasterm/hitrun.hpp"

namespace fasterm {
namespace hitrun {
template FASTERM_HITRUN_CHAIN_ARGS(double);
}  // namespace hitrun
}  // namespace fasterm
