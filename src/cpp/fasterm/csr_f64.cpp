// The CSR loss kernels (csr.hpp) for double data, 32- and 64-bit indices: one
// of the _sparse module's translation units (CMakeLists.txt).
#include "fasterm/csr.hpp"

namespace fasterm {
namespace losses {
FASTERM_CSR_INSTANTIATE(, double)
}  // namespace losses
}  // namespace fasterm
