#!/bin/sh
# Build the f32n A/B driver: the float32 logistic gradient sum compiled twice,
# "base" from the sources under $BASE (default: this tree's src/cpp; point it
# at another checkout's src/cpp to compare), "nv" from this tree's, with extra
# flags $BEXTRA / $EXTRA (e.g. -D... switches of an experiment).
set -e
cd "$(dirname "$0")"
BASE=${BASE:-../../../src/cpp}
F="-std=c++17 -O3 -DNDEBUG -fno-math-errno -Wno-psabi -fPIC -DFASTERM_LOSSES_DISPATCH"
T='__attribute__((target("arch=x86-64-v3")))'
g++ $F $BEXTRA -I"$BASE" -DFASTERM_LOSSES_ISA=base "-DFASTERM_ISA_TARGET_base=$T" -c unit.cpp -o /tmp/f32n_base.o &
g++ $F $EXTRA -I../../../src/cpp -DFASTERM_LOSSES_ISA=nv "-DFASTERM_ISA_TARGET_nv=$T" -c unit.cpp -o /tmp/f32n_nv.o &
g++ $F -O2 -I../../../src/cpp -c driver.cpp -o /tmp/f32n_driver.o &
wait
g++ -o /tmp/f32n_driver /tmp/f32n_driver.o /tmp/f32n_base.o /tmp/f32n_nv.o -lpthread
