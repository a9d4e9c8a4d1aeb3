#!/usr/bin/env bash
# The main job: build every chapter, run the progression benchmark (every chapter and the cuBLASLt
# peers over DeepGEMM's 18 shapes) and print the table.
#
#   ./run_all.sh            build the benchmark, run it, write docs/progression.md (and .png with
#                           matplotlib) and the READMEs' generated blocks from it
#   ./run_all.sh --tests    also every test (ctest: host tests, then the GPU tests in one group per
#                           chapter and suite), a smoke run and a default-shape run of each chapter
#                           binary, and the timelines of chapters 09 and 10
#   ./run_all.sh --sanitizers
#                           also compute-sanitizer (memcheck, racecheck, synccheck, initcheck) on
#                           every chapter binary at small shapes
#   ./run_all.sh --full     --tests and --sanitizers together. On a GPU machine that allows 10
#                           minutes a command, send the parts instead, each with --no-bench
#                           (the benchmark is a part of its own):
#                             ./run_all.sh --no-bench --tests
#                             ./run_all.sh --no-bench --sanitizers --chapters "00 01 02 03 04 05"
#                             ./run_all.sh --no-bench --sanitizers --chapters "06 07 08"
#                             ./run_all.sh --no-bench --sanitizers --chapters "09 10 11 12 13"
#                             ./run_all.sh
#   ./run_all.sh --chapters "NN ..."
#                           the chapter binaries that --tests and --sanitizers run (default: all)
#   ./run_all.sh --tools "memcheck ..."
#                           the compute-sanitizer tools that --sanitizers runs (default: all four)
#   ./run_all.sh --ncu      also profile with Nsight Compute: chapters 02-05 (shared memory), and
#                           08-10 at 4096x7168x16384 (L2 hit rate, DRAM bytes; 09 and 10 in their
#                           own tile order and in row-major, CH09_GROUP=1)
#   ./run_all.sh --no-bench skip the progression benchmark (with --tests: tests only)
#   ./run_all.sh --iters N  timed runs per kernel and shape (default 30; the ablations 10, or
#                           --ablation-iters N, passed to the benchmark)
#
# Logs and the benchmark JSON go to build/results; when $OUT is set (the GPU machine) the JSON, the
# table, the chart and a tarball of the logs are copied there. The summary at the end gives each
# step's time, for planning the parts.
set -uo pipefail
cd "$(dirname "$0")"
tests=0
sanitizers=0
ncu=0
bench=1
iters=30
only_chapters=""
tools="memcheck racecheck synccheck initcheck"
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --full) tests=1; sanitizers=1 ;;
    --tests) tests=1 ;;
    --sanitizers) sanitizers=1 ;;
    --chapters) only_chapters="$2"; shift ;;
    --tools) tools="$2"; shift ;;
    --ncu) ncu=1 ;;
    --no-bench) bench=0 ;;
    --iters) iters="$2"; shift ;;
    *) extra+=("$1") ;;
  esac
  shift
done
results=build/results
rm -rf "$results"
mkdir -p "$results"
summary=()
note() { summary+=("$(printf '%-28s %s' "$1" "$2")"); }
started=$SECONDS
took() { echo "$(($SECONDS - $1)) s"; }

# The main job builds what it runs: the benchmark (with the library of every chapter's kernels and
# chapter 13's cubins). --tests, --sanitizers and --ncu also run the chapter binaries and the tests:
# then everything.
targets=(--target progression)
[ "$tests" = 1 ] || [ "$sanitizers" = 1 ] || [ "$ncu" = 1 ] && targets=()
t0=$SECONDS
cmake --preset release >"$results/configure.log" 2>&1 || { cat "$results/configure.log"; exit 1; }
if ! cmake --build --preset release -j "$(nproc)" "${targets[@]}" >"$results/build.log" 2>&1; then
  grep -E "error|Error" "$results/build.log" | head -30
  echo "build failed: $results/build.log"
  exit 1
fi
note build "ok: ${targets[*]:-everything} ($(took $t0))"
bin=build/release/bin

# The chapter binaries, [0-9][0-9]_*, or those --chapters names.
chapter_binaries() {
  for exe in "$bin"/[0-9][0-9]_*; do
    name=$(basename "$exe")
    if [ -n "$only_chapters" ] && [[ " $only_chapters " != *" ${name:0:2} "* ]]; then continue; fi
    echo "$exe"
  done
}

if [ "$tests" = 1 ]; then
  # A chapter that hangs on the GPU (a pipeline barrier that never completes: release builds have
  # no watchdog) must not take the whole run with it: first each binary once on a small ragged
  # shape, 60 s at most, then every test with a limit of its own, and every sanitizer run too.
  t0=$SECONDS
  smoke_failed=0
  for exe in $(chapter_binaries); do
    name=$(basename "$exe")
    [[ "$name" == 01_* ]] && continue
    timeout 60 "$exe" --m 257 --n 1168 --k 1024 --no-timing >"$results/smoke-$name.log" 2>&1
    rc=$?
    if [ "$rc" != 0 ]; then
      smoke_failed=1
      note "smoke $name" "exit $rc$([ $rc = 124 ] && echo ' (timed out)'): $(tail -n 1 "$results/smoke-$name.log")"
    fi
  done
  [ "$smoke_failed" = 0 ] && note smoke "every chapter binary passed its checks at 257x1168x1024 ($(took $t0))"
  # Every test: the host tests, then the GPU tests, one process per chapter and suite (each group's
  # time is in tests.log).
  t0=$SECONDS
  if ctest --preset release -j 1 --timeout 240 >"$results/tests.log" 2>&1; then note tests "$(grep -E 'tests passed' "$results/tests.log") ($(took $t0))"
  else note tests "FAILED: $(grep -E 'tests passed|tests failed' "$results/tests.log") ($(took $t0))"; grep -E "Failed|FAILED|\*\*\*" "$results/tests.log" | head -20; fi
  grep -h "Skipped" "$results/tests.log" | head -3
  # Each chapter binary on its default shape: the check lines and the timing beside cuBLASLt.
  for exe in $(chapter_binaries); do
    name=$(basename "$exe")
    t0=$SECONDS
    "$exe" >"$results/$name.log" 2>&1; rc=$?
    note "$name" "exit $rc: $(tail -n 1 "$results/$name.log") ($(took $t0))"
  done
fi

if [ "$sanitizers" = 1 ]; then
  # compute-sanitizer: memcheck, racecheck, synccheck and initcheck on every chapter binary, each
  # on two small shapes (racecheck is slow): ragged in M and N with an odd number of K blocks (5),
  # and M = 1. Chapter 01 is one fixed-size wgmma: no shape flags, run once.
  if command -v compute-sanitizer >/dev/null; then
    for exe in $(chapter_binaries); do
      name=$(basename "$exe")
      shapes=("200 264 640" "1 136 384")
      [[ "$name" == 01_* ]] && shapes=("")
      # The TMA-store and persistent chapters: a shape with several tiles per CTA, and M = 1 with
      # an even number of tiles (chapter 10: multicast on A, half of it below M).
      [[ "$name" =~ ^(08|09|10|11|12)_ ]] && shapes+=("257 1168 1024" "1 256 384")
      # Chapter 10 with multicast on B (two rows of 256 x 128 tiles), and chapter 11's 256-row tile
      # (CH11_BLOCK_M=256, not the heuristic's own choice) with multicast on B: two rows of
      # 256 x 96 tiles.
      [[ "$name" == 10_* ]] && shapes+=("257 1024 1024 - B")
      [[ "$name" == 11_* ]] && shapes+=("257 1168 1024 256 B")
      # Chapters 11 and 12's own 256 x 128 tile, its last row of tiles with a sub-tile wholly past
      # M (the K loop's copy that tests for it); in chapter 11 also with multicast on A.
      [[ "$name" =~ ^(11|12)_ ]] && shapes+=("1900 4096 640")
      [[ "$name" == 11_* ]] && shapes+=("1900 4096 640 - A")
      # Chapters 12 and 13's 256 x 128 tile with multicast on A, as chapter 11's step 3 takes it
      # (K >= 8192, 4 waves of tiles: 8 x 64 tiles on 132 SMs); racecheck takes about 9 s.
      [[ "$name" =~ ^(12|13)_ ]] && shapes+=("2048 8192 8192")
      # Chapter 11's 128 x 192 tile, the rule's at 1025 x 2296 (9 x 12 tiles, the last row 1 row
      # high, the last column 184 wide), in chapters 11 to 13, and with multicast on A.
      [[ "$name" =~ ^(11|12|13)_ ]] && shapes+=("1025 2296 640")
      [[ "$name" == 11_* ]] && shapes+=("1025 2296 640 - A")
      # Chapter 12's split: the heuristic's own (64 x 512 x 4096: split 4, four CTAs to a tile
      # where chapter 11 would run 32; 128 x 2112 x 2048: split 2 over 32-column tiles where
      # chapter 11's are 16 wide), split 3 on ragged 128-row tiles with uneven slices, and split 8
      # where K is 3 blocks (five CTAs of each cluster without a K block).
      [[ "$name" == 12_* ]] && shapes+=("64 512 4096" "128 2112 2048" "100 2120 640 - - 3" "1 1024 384 - - 8")
      # Chapter 15 (both layouts in each run, 8 groups of about M rows) with 256-row tiles
      # (CH15_BLOCK_M): some hold two groups (contiguous), rows past the counts (masked).
      [[ "$name" == 15_* ]] && shapes+=("600 1168 1024 256")
      # And chapter 11's 128 x 192 tile (CH15_BLOCK_N), whose last column of tiles is ragged.
      [[ "$name" == 15_* ]] && shapes+=("600 1168 1024 128 - - 192")
      # And that tile in pairs sharing B (CH15_PAIRS=on): 7 columns of tiles, groups of odd and
      # even counts of 128-row blocks.
      [[ "$name" == 15_* ]] && shapes+=("600 1168 1024 128 - - 192 on")
      for shape in "${shapes[@]}"; do
        args=()
        tag=""
        block_m=""
        multicast=""
        split=""
        block_n=""
        pairs=""
        if [ -n "$shape" ]; then
          read -r m n k block_m multicast split block_n pairs <<<"$shape"
          [ "$block_m" = - ] && block_m=""
          [ "$multicast" = - ] && multicast=""
          [ "$split" = - ] && split=""
          args=(--m "$m" --n "$n" --k "$k" --no-timing)
          tag=" ${m}x${n}x${k}${block_m:+ block_m=$block_m}${block_n:+ block_n=$block_n}${multicast:+ multicast=$multicast}${split:+ split=$split}${pairs:+ pairs=$pairs}"
        fi
        for tool in $tools; do
          log="$results/sanitizer-$name-$tool${tag// /-}.log"
          t0=$SECONDS
          CH11_BLOCK_M=$block_m CH15_BLOCK_M=$block_m CH15_BLOCK_N=$block_n CH15_PAIRS=$pairs CH10_MULTICAST=$multicast CH11_MULTICAST=$multicast CH12_SPLIT=$split \
            timeout 300 compute-sanitizer --tool "$tool" --error-exitcode 3 "$exe" "${args[@]}" >"$log" 2>&1; rc=$?
          note "$name $tool$tag" "$([ $rc = 0 ] && echo clean || echo "exit $rc: $(grep -m1 -E 'ERROR|error' "$log")") ($(took $t0))"
        done
      done
    done
  else
    note sanitizers "compute-sanitizer not found: nothing run"
  fi
fi

# Shared-memory traffic of the staged chapters, measured: bank conflicts and wavefronts.
if [ "$ncu" = 1 ] && command -v ncu >/dev/null; then
  for exe in "$bin"/0[2-5]_*; do  # the chapters that stage operands in shared memory
    name=$(basename "$exe")
    ncu --kernel-name regex:gemm_kernel --launch-count 1 \
      --section MemoryWorkloadAnalysis_Tables --section SpeedOfLight \
      --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum,l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum,l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum \
      "$exe" --m 4096 --n 4096 --k 7168 --no-check --iters 1 >"$results/ncu-$name.log" 2>&1
    note "ncu $name" "$(grep -E 'Duration|shared_op_(st|gmma).sum' "$results/ncu-$name.log" | awk '{print $1"="$NF}' | tr '\n' ' ')"
  done
fi

# The timelines of the persistent chapters (the epilogue against the next tile's loads), on a shape
# with few K blocks per tile so that the tiles are visible: SVGs in build/results.
if [ "$tests" = 1 ]; then
  for name in 09_persistent_scheduler 10_tma_multicast 11_configuration 12_split_k; do
    timeout 60 "$bin/$name" --m 4096 --n 7168 --k 2048 --no-check --no-timing \
      --trace "$results/trace-$name-4096x7168x2048.svg" >"$results/trace-$name.log" 2>&1
    note "trace $name" "exit $?: $(tail -n 1 "$results/trace-$name.log")"
  done
fi

# What the tile order and the multicast do to L2 and DRAM, at the headline shape.
if [ "$ncu" = 1 ] && command -v ncu >/dev/null; then
  for run in 08_stmatrix_epilogue: 09_persistent_scheduler: 09_persistent_scheduler:1 \
    10_tma_multicast: 10_tma_multicast:1 11_configuration:; do
    name=${run%%:*}
    group=${run#*:}
    CH09_GROUP=$group timeout 300 ncu --kernel-name regex:gemm_kernel --launch-count 1 \
      --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed \
      "$bin/$name" --m 4096 --n 7168 --k 16384 --no-check --iters 1 >"$results/ncu-l2-$name-group$group.log" 2>&1
    note "ncu $name group=${group:-own}" "$(grep -E 'gpu__time|hit_rate|dram__bytes|srcunit_tex|lts__throughput' "$results/ncu-l2-$name-group$group.log" | awk '{print $1"="$(NF-1)$NF}' | tr '\n' ' ')"
  done
fi

t0=$SECONDS
[ "$bench" = 1 ] && "$bin/progression" --iters "$iters" --benchmark_out="$results/progression.json" \
  --benchmark_out_format=json "${extra[@]}" 2>&1 | tee "$results/progression.log"
if [ "$bench" = 1 ] && [ -s "$results/progression.json" ]; then
  python3 docs/progression.py "$results/progression.json" --md docs/progression.md \
    --png docs/progression.png --readmes
  note progression "docs/progression.md written ($(took $t0))"
fi

if [ -n "${OUT:-}" ]; then
  tar czf "$OUT/logs.tgz" -C build results
  cp "$results/progression.json" docs/progression.md docs/progression.png "$OUT/" 2>/dev/null
fi

note total "$(took $started)"
echo
echo "==== summary ===="
printf '%s\n' "${summary[@]}"
[ -s "$results/progression.json" ] && python3 docs/progression.py "$results/progression.json" --print
exit 0
