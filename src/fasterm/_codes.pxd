# The integer codes shared with the C++ headers: declared once, in
# src/cpp/fasterm/codes.hpp (the values come from there, never from here).

cdef extern from "fasterm/codes.hpp" namespace "fasterm" nogil:
    cdef enum LossKind:
        kLogistic
        kHinge
        kSquared
        kAbsolute
        kLinear

    cdef enum SetKind:
        kL2Ball
        kBox
        kSimplex
        kL1Ball

    cdef enum NoiseKind:
        kNoiseNone
        kNoiseLaplace
        kNoiseGaussian

    cdef enum LineMethod:
        kAuto
        kDirect
        kArs

    cdef enum Directions:
        kSphere
        kMixed
