// The hit-and-run chain (hitrun.hpp) for double data, in the instruction-set
// version FASTERM_HITRUN_ISA names (CMakeLists.txt compiles the unit once per
// version): one of the _hitrun module's translation units, compiled in
// parallel.
#include "fasterm/hitrun.hpp"

namespace fasterm {
namespace hitrun {
FASTERM_HITRUN_ISA_BEGIN
template FASTERM_HITRUN_CHAIN_ARGS(double);
FASTERM_HITRUN_ISA_END
}  // namespace hitrun
}  // namespace fasterm
