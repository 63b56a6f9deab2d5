#include "fasterm/losses.hpp"
namespace fasterm { namespace losses {
FASTERM_LOSSES_DEFINE_ENTRY_POINTS(Logistic, float)
FASTERM_LOSSES_DEFINE_NORMS_ENTRY(float)
}}
