#!/usr/bin/env bash
# Session 52: tools/gpu-test.sh's embedding tests (the embedding API and a program compiled ahead
# of time, on the GPU), staged apart from ndp (libndp.so is 76 MB). Returns nothing.
export LD_LIBRARY_PATH=$PWD/build-gpu/lib:/usr/local/cuda/lib64 NDP_CACHE_DIR=/tmp/c1
B=build-gpu
$B/tests/unit_embedding 2>&1 | tail -3
tests/embed/run_example.sh $B/tests/jit_example cuda tests/embed/jit_example.expected && tests/embed/run_example.sh $B/tests/aot_example default tests/embed/aot_example.expected && echo "embedding examples on cuda: OK"
