#!/bin/bash
cd "$(dirname "$0")/.."
s=$SECONDS
cmake --preset release >/dev/null && cmake --build --preset release > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built in $((SECONDS-s)) s"
grep -B1 "spill" $OUT/build.log | grep -A1 "15_grouped\|ch15" | grep "spill" | sort | uniq -c | head
cd build/release
ctest -R "gpu.15" --output-on-failure > $OUT/ctest15.log 2>&1; tail -5 $OUT/ctest15.log
echo "ctest done $((SECONDS-s)) s"
GEMM_FUZZ_GROUPED=120 GEMM_TEST_SEED=7 ./bin/test_gpu --gtest_filter=Chapter15.GroupedFuzz > $OUT/fuzz.log 2>&1; tail -4 $OUT/fuzz.log
echo "fuzz done $((SECONDS-s)) s"
cd ../..
timeout 240 ./run_all.sh --no-bench --sanitizers --chapters "15" --tools "memcheck synccheck" > $OUT/san.log 2>&1; echo "san rc $?"; tail -15 $OUT/san.log
echo "all $((SECONDS-s)) s"
