// The _mclosses module's compiled kernels for float data (dense and CSR, both
// index widths): one of its translation units, compiled for x86-64-v3 and the
// baseline (CMakeLists.txt); the code is multiclass.hpp's.
#include "fasterm/multiclass.hpp"

namespace fasterm {
namespace multiclass {
FASTERM_MC_DEFINE_ENTRY_POINTS(float)
}  // namespace multiclass
}  // namespace fasterm
