#!/bin/bash
cd "$(dirname "$0")/.."
s=$SECONDS
cmake --preset release >/dev/null && cmake --build --preset release > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
echo "built in $((SECONDS-s)) s"
cd build/release
ctest -R "gpu.15" --output-on-failure > $OUT/ctest15.log 2>&1; tail -3 $OUT/ctest15.log
echo "ctest done $((SECONDS-s)) s"
for seed in 7 8; do GEMM_FUZZ_GROUPED=100 GEMM_TEST_SEED=$seed ./bin/test_gpu --gtest_filter=Chapter15.GroupedFuzz > $OUT/fuzz$seed.log 2>&1; grep -E "OK|FAILED|Failure" $OUT/fuzz$seed.log | head -3; done
echo "fuzz done $((SECONDS-s)) s"
for a in "--m 1 --n 136 --k 384" "--m 20 --n 264 --k 256 --groups 32" "--m 40 --n 1168 --k 640 --groups 5" "--m 300 --n 520 --k 1024 --groups 7"; do
  for box in "" 32 64; do CH15_BOX_ROWS=$box ./bin/15_grouped_gemm $a --no-timing | grep -E "FAIL|all checks|cannot" | head -3; done
done
cd ../..
timeout 200 ./run_all.sh --no-bench --sanitizers --chapters "15" > $OUT/san.log 2>&1; echo "san rc $?"; grep -E "clean|exit|total" $OUT/san.log | tail -30
echo "all $((SECONDS-s)) s"
