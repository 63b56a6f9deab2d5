#!/bin/sh
# Build the f32n A/B driver: main's losses.hpp as "base", this branch's as "nv".
set -e
cd "$(dirname "$0")"
F="-std=c++17 -O3 -DNDEBUG -fno-math-errno -Wno-psabi -fPIC -DFASTERM_LOSSES_DISPATCH"
g++ $F $BEXTRA -I/work/main/src/cpp -DFASTERM_LOSSES_ISA=base '-DFASTERM_ISA_TARGET_base=__attribute__((target("arch=x86-64-v3")))' -c unit.cpp -o /tmp/f32n_base.o &
g++ $F $EXTRA -I../../src/cpp -DFASTERM_LOSSES_ISA=nv '-DFASTERM_ISA_TARGET_nv=__attribute__((target("arch=x86-64-v3")))' -c unit.cpp -o /tmp/f32n_nv.o &
g++ $F -O2 -I../../src/cpp -c driver.cpp -o /tmp/f32n_driver.o &
wait
g++ -o /tmp/f32n_driver /tmp/f32n_driver.o /tmp/f32n_base.o /tmp/f32n_nv.o -lpthread
