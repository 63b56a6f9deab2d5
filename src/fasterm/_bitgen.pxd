# The caller's numpy bit generator, for every compiled sampler of fasterm.
#
# Each module draws from the Generator the user passed (its ``bitgen_t``,
# reached through the bit generator's capsule), under the bit generator's
# lock: one seed reproduces a run, and no private RNG is ever seeded from it.
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from numpy.random cimport bitgen_t


cdef inline bitgen_t* _bitgen(object bit_generator) except NULL:
    capsule = bit_generator.capsule
    if not PyCapsule_IsValid(capsule, "BitGenerator"):
        raise ValueError("random_state: invalid bit generator capsule")
    return <bitgen_t*> PyCapsule_GetPointer(capsule, "BitGenerator")
