#!/usr/bin/env python3
"""Turns the progression benchmark's JSON into docs/progression.md (and a PNG chart).

    progression.py RESULTS.json --md docs/progression.md --png docs/progression.png
    progression.py RESULTS.json --print        # the TFLOPS table on stdout

Rows are the chapters and the cuBLASLt peers, columns DeepGEMM's 18 shapes; a chapter's ablation
rows ("10_tma_multicast[multicast=off]": registry.hpp) get a table of their own. Beside the run's own
peers, DeepGEMM's figures from docs/method.md (measured on our H100 by the same method, right after
a committed run, on its machine: DEEPGEMM_WHERE; and as published for the H800) are quoted,
labelled as such, in the comparison of the last
chapter with the peers and in the chart. The grouped entries of chapter 15
("15_grouped_gemm/masked/32x20/6144x7168", "dense_per_group/...") get a section of their own,
"## Grouped", one row per grouped shape beside DeepGEMM 2.6.1's grouped figures; a run without them
(an older JSON) has none.
"""
import argparse
import json
import sys

PEER_NOTES = {
    "cublasLt-blk": "cuBLASLt fp8, 1x128 / 128x128 block scales (the same problem)",
    "cublasLt-scalar": "cuBLASLt fp8, per-tensor scales (the unscaled product)",
    "cublasLt-bf16": "cuBLASLt bf16",
}

HEADLINE = "4096x7168x16384"
SMALL_HEADLINE = "64x7168x16384"  # GB/s: the bandwidth-bound headline
# A device-to-device copy on our H100 (docs/method.md): the bandwidth bound of M = 64 and 128.
COPY_GBPS = 3000

# DeepGEMM on our H100 SXM, both releases measured right after the committed run (2026-11-27,
# night, session 19), on its machine, in the same lease (docs/method.md, "Both on the committed
# run's machine, right after it (H100, 2026-11-27, night)"). TFLOPS by CUDA events with an 8 GiB
# flush before each run, median of 30; and by the kernel alone (PyTorch's profiler), what this benchmark's kernel-only column
# (CUPTI) compares with. A's scales in each release's TMA-aligned, M-contiguous layout before
# timing, as our kernels take them. Commit 8dfa329 (May 2025) and 2.6.1 (main 54e2261, June 2026).
# Where the figures below were measured, as the generated text says it. Say "right after this run,
# on its machine" only while they are remeasured beside the committed run; a later committed run
# without them says which run they stood beside ("beside the run of <commit>, on its machine").
DEEPGEMM_WHERE = "right after this run, on its machine"
DEEPGEMM = {
    "DeepGEMM 8dfa329": {
        "64x2112x7168": 124, "64x24576x1536": 203, "64x32768x512": 151, "64x7168x16384": 269,
        "64x4096x7168": 176, "64x7168x2048": 148, "128x2112x7168": 232, "128x24576x1536": 383,
        "128x32768x512": 281, "128x7168x16384": 497, "128x4096x7168": 320, "128x7168x2048": 271,
        "4096x2112x7168": 1102, "4096x24576x1536": 1257, "4096x32768x512": 922,
        "4096x7168x16384": 1484, "4096x4096x7168": 1402, "4096x7168x2048": 1202,
    },
    "DeepGEMM 2.6.1": {
        "64x2112x7168": 141, "64x24576x1536": 201, "64x32768x512": 150, "64x7168x16384": 269,
        "64x4096x7168": 187, "64x7168x2048": 147, "128x2112x7168": 264, "128x24576x1536": 385,
        "128x32768x512": 268, "128x7168x16384": 517, "128x4096x7168": 362, "128x7168x2048": 276,
        "4096x2112x7168": 1249, "4096x24576x1536": 1280, "4096x32768x512": 994,
        "4096x7168x16384": 1490, "4096x4096x7168": 1419, "4096x7168x2048": 1255,
    },
}
DEEPGEMM_KERNEL = {
    "DeepGEMM 8dfa329": {
        "64x2112x7168": 156, "64x24576x1536": 235, "64x32768x512": 195, "64x7168x16384": 285,
        "64x4096x7168": 211, "64x7168x2048": 193, "128x2112x7168": 287, "128x24576x1536": 440,
        "128x32768x512": 350, "128x7168x16384": 527, "128x4096x7168": 375, "128x7168x2048": 348,
        "4096x2112x7168": 1139, "4096x24576x1536": 1274, "4096x32768x512": 937,
        "4096x7168x16384": 1495, "4096x4096x7168": 1432, "4096x7168x2048": 1245,
    },
    "DeepGEMM 2.6.1": {
        "64x2112x7168": 180, "64x24576x1536": 230, "64x32768x512": 191, "64x7168x16384": 282,
        "64x4096x7168": 220, "64x7168x2048": 194, "128x2112x7168": 342, "128x24576x1536": 436,
        "128x32768x512": 346, "128x7168x16384": 545, "128x4096x7168": 430, "128x7168x2048": 347,
        "4096x2112x7168": 1295, "4096x24576x1536": 1305, "4096x32768x512": 1023,
        "4096x7168x16384": 1498, "4096x4096x7168": 1452, "4096x7168x2048": 1301,
    },
}
# The top README names DeepGEMM's releases without commit hashes (docs/method.md has them).
RELEASE_NAMES = {"DeepGEMM 8dfa329": "DeepGEMM of May 2025", "DeepGEMM 2.6.1": "DeepGEMM 2.6.1"}
# DeepGEMM's README of April 2025, H800 (docs/method.md): the stretch, not run here.
DEEPGEMM_H800 = {
    "64x2112x7168": 206, "64x24576x1536": 289, "64x32768x512": 219, "64x7168x16384": 336,
    "64x4096x7168": 287, "64x7168x2048": 295, "128x2112x7168": 352, "128x24576x1536": 535,
    "128x32768x512": 358, "128x7168x16384": 645, "128x4096x7168": 533, "128x7168x2048": 510,
    "4096x2112x7168": 1127, "4096x24576x1536": 1212, "4096x32768x512": 775,
    "4096x7168x16384": 1520, "4096x4096x7168": 1410, "4096x7168x2048": 1168,
}

# The grouped GEMMs (chapter 15): the benchmark's entries "<kernel>/<layout>/<groups>x<expected
# rows>/<N>x<K>", the chapter's and its peer's, chapter 13 launched once per group.
GROUPED_CHAPTER = "15_grouped_gemm"
GROUPED_PEER = "dense_per_group"
GROUPED_LAYOUTS = ("contiguous", "masked")
GROUPED_HEADLINE = "contiguous/8x4096/6144x7168"  # TFLOPS
GROUPED_SMALL_HEADLINE = "masked/32x20/6144x7168"  # GB/s: a decoding step, a stream of B
# Masked shapes whose groups are expected to have fewer rows than the smallest tile (64): GB/s.
SMALL_GROUP_ROWS = 64
# DeepGEMM 2.6.1's grouped GEMMs on our H100 SXM, in the same call as its dense figures above
# (docs/method.md), commit 54e2261 (main, June 2026): the benchmark's own rows per group,
# contiguous groups padded to 128 rows, masked max_m 4096 with expected_m the benchmark's; TFLOPS
# and GB/s count valid rows only. TFLOPS by CUDA events with an 8 GiB flush before each run, median
# of 30; by the kernel alone (PyTorch's profiler); GB/s by the events, over the same bytes as this
# benchmark's (the valid rows of A and D, every group's B).
DEEPGEMM_GROUPED = {
    "contiguous/4x8192/6144x7168": 1458, "contiguous/4x8192/7168x3072": 1396,
    "contiguous/4x8192/4096x4096": 1394, "contiguous/4x8192/4096x2048": 1315,
    "contiguous/8x4096/6144x7168": 1448, "contiguous/8x4096/7168x3072": 1385,
    "contiguous/8x4096/4096x4096": 1377, "contiguous/8x4096/4096x2048": 1294,
    "masked/32x192/6144x7168": 890, "masked/32x192/7168x3072": 812, "masked/32x192/4096x4096": 816,
    "masked/32x192/4096x2048": 731, "masked/6x1024/6144x7168": 1338,
    "masked/6x1024/7168x3072": 1276, "masked/6x1024/4096x4096": 1233,
    "masked/6x1024/4096x2048": 1105, "masked/32x20/6144x7168": 109, "masked/32x20/7168x3072": 101,
    "masked/32x20/4096x4096": 102, "masked/32x20/4096x2048": 94, "masked/6x20/6144x7168": 99,
    "masked/6x20/7168x3072": 84, "masked/6x20/4096x4096": 78, "masked/6x20/4096x2048": 63,
}
DEEPGEMM_GROUPED_KERNEL = {
    "contiguous/4x8192/6144x7168": 1459, "contiguous/4x8192/7168x3072": 1400,
    "contiguous/4x8192/4096x4096": 1399, "contiguous/4x8192/4096x2048": 1324,
    "contiguous/8x4096/6144x7168": 1450, "contiguous/8x4096/7168x3072": 1388,
    "contiguous/8x4096/4096x4096": 1382, "contiguous/8x4096/4096x2048": 1305,
    "masked/32x192/6144x7168": 896, "masked/32x192/7168x3072": 821, "masked/32x192/4096x4096": 826,
    "masked/32x192/4096x2048": 749, "masked/6x1024/6144x7168": 1348,
    "masked/6x1024/7168x3072": 1295, "masked/6x1024/4096x4096": 1262,
    "masked/6x1024/4096x2048": 1138, "masked/32x20/6144x7168": 110, "masked/32x20/7168x3072": 103,
    "masked/32x20/4096x4096": 104, "masked/32x20/4096x2048": 97, "masked/6x20/6144x7168": 101,
    "masked/6x20/7168x3072": 88, "masked/6x20/4096x4096": 83, "masked/6x20/4096x2048": 71,
}
DEEPGEMM_GROUPED_GBPS = {
    "contiguous/4x8192/6144x7168": 408, "contiguous/4x8192/7168x3072": 634,
    "contiguous/4x8192/4096x4096": 593, "contiguous/4x8192/4096x2048": 880,
    "contiguous/8x4096/6144x7168": 492, "contiguous/8x4096/7168x3072": 712,
    "contiguous/8x4096/4096x4096": 668, "contiguous/8x4096/4096x2048": 943,
    "masked/32x192/6144x7168": 2525, "masked/32x192/7168x3072": 2445,
    "masked/32x192/4096x4096": 2432, "masked/32x192/4096x2048": 2357,
    "masked/6x1024/6144x7168": 939, "masked/6x1024/7168x3072": 1118,
    "masked/6x1024/4096x4096": 1045, "masked/6x1024/4096x2048": 1206,
    "masked/32x20/6144x7168": 2836, "masked/32x20/7168x3072": 2641, "masked/32x20/4096x4096": 2661,
    "masked/32x20/4096x2048": 2475, "masked/6x20/6144x7168": 2507, "masked/6x20/7168x3072": 2158,
    "masked/6x20/4096x4096": 1983, "masked/6x20/4096x2048": 1633,
}
# Its GB/s by the kernel alone: the same bytes over the kernel's time, from its two TFLOPS figures.
DEEPGEMM_GROUPED_GBPS_KERNEL = {
    s: DEEPGEMM_GROUPED_GBPS[s] * DEEPGEMM_GROUPED_KERNEL[s] / DEEPGEMM_GROUPED[s]
    for s in DEEPGEMM_GROUPED}


def load(path):
    with open(path) as f:
        data = json.load(f)
    rows, shapes = {}, []
    for b in data["benchmarks"]:
        if is_grouped_entry(b["name"]):  # load_grouped's
            continue
        name, shape = b["name"].split("/")[:2]
        value = entry_value(b)
        rows.setdefault(name, {})[shape] = value
        if shape not in shapes:
            shapes.append(shape)
    order = sorted(r for r in rows if is_chapter(r)) + [p for p in PEER_NOTES if p in rows]
    ablations = [r for r in rows if "[" in r]  # in the benchmark's (the registry's) order
    return data.get("context", {}), order, ablations, rows, shapes


def entry_value(b):
    """An entry's figures, None where it failed: TFLOPS and GB/s by the events, the events' median,
    TFLOPS by the kernels' own time (CUPTI, "kernel_us") where the run recorded it (the same flops
    over less time), and GB/s by the kernels' own time likewise."""
    if b.get("error_occurred"):
        return None
    kernel_us = b.get("kernel_us")
    by_kernel = b["TFLOPS"] * b["median_us"] / kernel_us if kernel_us else None
    gbps_by_kernel = b["GBps"] * b["median_us"] / kernel_us if kernel_us else None
    return (b["TFLOPS"], b["GBps"], b["median_us"], by_kernel, gbps_by_kernel)


# Side chapters: outside the main line (not its "last chapter", not in its chain of previous
# chapters), each compared with the main-line chapter named here.
SIDE_CHAPTERS = {"14": "02"}


def is_main(name):
    """A chapter of the main line (not a side chapter such as 14, the warp-level road)."""
    return is_chapter(name) and name[:2] not in SIDE_CHAPTERS


def is_chapter(name):
    """A chapter's own row ("10_tma_multicast"), not a peer or an ablation ("...[multicast=A]")."""
    return name[:2].isdigit() and "[" not in name


def table(order, rows, shapes, field, fmt):
    head = "| kernel | " + " | ".join(s.replace("x", " x ", 2) for s in shapes) + " |"
    sep = "| --- |" + " ---: |" * len(shapes)
    lines = [head, sep]
    for r in order:
        cells = []
        for s in shapes:
            v = rows[r].get(s)
            cells.append("-" if v is None or v[field] is None else fmt.format(v[field]))
        lines.append(f"| {r} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def tflops(rows, name, shape, field=0):
    v = rows.get(name, {}).get(shape)
    return None if v is None else v[field]


def has_kernel_times(rows):
    return any(v is not None and v[3] is not None for r in rows.values() for v in r.values())


def against_best_peer(order, rows, shapes, field=0, deepgemm=None):
    """The last chapter per shape against each peer and the best of them: cuBLASLt block-scaled and
    per-tensor (this run), DeepGEMM 8dfa329 and 2.6.1 (docs/method.md); DeepGEMM's H800 figure
    beside it. field 0: by the events, against DeepGEMM's events; 3: by the kernels' own time,
    against DeepGEMM's kernel-only times."""
    deepgemm = DEEPGEMM if deepgemm is None else deepgemm
    chapters = [r for r in order if is_main(r)]
    if not chapters:
        return ""
    last = chapters[-1]
    names = ["cublasLt-blk", "cublasLt-scalar"] + list(deepgemm)
    lines = [
        f"| shape | {last} | " + " | ".join(names) + " | best peer | ratio "
        f"| DeepGEMM H800 (published) | ratio | {last} GB/s | of {COPY_GBPS} GB/s |",
        "| --- | ---: |" + " ---: |" * len(names) + " --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in shapes:
        ours = tflops(rows, last, s, field)
        peers = {p: tflops(rows, p, s, field) for p in names[:2]}
        peers.update({p: figures.get(s) for p, figures in deepgemm.items()})
        shown = ["-" if not peers[p] else f"{peers[p]:.0f}" for p in names]
        peers = {p: v for p, v in peers.items() if v}
        if ours is None or not peers:
            continue
        best = max(peers, key=peers.get)
        h800 = DEEPGEMM_H800.get(s)
        gbps = rows[last][s][1] * ours / rows[last][s][0]  # the same bytes over the same time
        lines.append(
            f"| {s.replace('x', ' x ', 2)} | {ours:.0f} | " + " | ".join(shown) + f" | {best} | "
            f"{ours / peers[best]:.2f} | {h800 or '-'} | "
            + (f"{ours / h800:.2f}" if h800 else "-")
            + f" | {gbps:.0f} | {gbps / COPY_GBPS:.2f} |")
    return "\n".join(lines)


def ablation_table(order, ablations, rows, shapes):
    """Per shape: the previous chapter, each ablation of a chapter, and the chapter as it chooses,
    TFLOPS; "-" where the variation does not apply to the shape."""
    out = []
    for chapter in [r for r in order if is_chapter(r)]:
        cols = [a for a in ablations if a.startswith(chapter + "[")]
        if not cols:
            continue
        before = [r for r in order if is_main(r) and r < chapter]
        if not is_main(chapter):
            before = [r for r in order if r[:2] == SIDE_CHAPTERS[chapter[:2]]]
        first = before[-1:] + cols + [chapter]
        names = [c[len(chapter):] if c in cols else c for c in first]
        out += [f"### {chapter}", "",
                "| shape | " + " | ".join(names) + " |",
                "| --- |" + " ---: |" * len(first)]
        for s in shapes:
            cells = [tflops(rows, c, s) for c in first]
            out.append(f"| {s.replace('x', ' x ', 2)} | "
                       + " | ".join("-" if v is None else f"{v:.0f}" for v in cells) + " |")
        out.append("")
    return "\n".join(out)


def is_grouped_entry(name):
    """A grouped entry: "15_grouped_gemm/masked/32x20/6144x7168" or "dense_per_group/...", not a
    dense one ("13_ffma_interleave/64x2112x7168")."""
    parts = grouped_name(name).split("/")
    return len(parts) == 4 and parts[1] in GROUPED_LAYOUTS


def grouped_name(name):
    """The entry's name without Google Benchmark's suffixes ("/iterations:1/manual_time")."""
    return "/".join(p for p in name.split("/") if ":" not in p and p != "manual_time")


def load_grouped(path):
    """The grouped entries of a run, or None where it has none (an older run): the chapter's name,
    the shapes in the benchmark's order ("masked/32x20/6144x7168") and, per shape, the chapter's
    figures ("ours") and chapter 13's once per group ("dense"), as entry_value gives them."""
    with open(path) as f:
        data = json.load(f)
    grouped = {"chapter": GROUPED_CHAPTER, "shapes": [], "ours": {}, "dense": {}}
    for b in data["benchmarks"]:
        if not is_grouped_entry(b["name"]):
            continue
        kernel, shape = grouped_name(b["name"]).split("/", 1)
        if kernel == GROUPED_PEER:
            grouped["dense"][shape] = entry_value(b)
        else:
            grouped["chapter"] = kernel
            grouped["ours"][shape] = entry_value(b)
        if shape not in grouped["shapes"]:
            grouped["shapes"].append(shape)
    return grouped if grouped["shapes"] else None


def grouped_cells(shape):
    """A grouped shape's first four cells: layout, groups x rows, N, K."""
    layout, rows, nk = shape.split("/")
    return [layout, rows.replace("x", " x "), *nk.split("x")]


def grouped_key(cells):
    """The shape back from those cells (a table of docs/progression.md)."""
    return f"{cells[0]}/{shape_key(cells[1])}/{cells[2]}x{cells[3]}"


def is_small_group(shape):
    layout, rows, _ = shape.split("/")
    return layout == "masked" and int(rows.split("x")[1]) < SMALL_GROUP_ROWS


def ratio_text(ours, theirs):
    return "-" if not ours or not theirs else f"{ours / theirs:.2f}"


GROUPED_HEAD = ["layout", "groups x rows", "N", "K", "this chapter TFLOPS",
                "DeepGEMM 2.6.1 TFLOPS", "ratio", "dense per group TFLOPS"]
GROUPED_GBPS_HEAD = ["layout", "groups x rows", "N", "K", "this chapter GB/s",
                     "DeepGEMM 2.6.1 GB/s", "ratio"]


def head_lines(head):
    return ["| " + " | ".join(head) + " |", "| --- | --- |" + " ---: |" * (len(head) - 2)]


def grouped_table(grouped, field=0, deepgemm=None):
    """One row per grouped shape: the chapter's TFLOPS, DeepGEMM 2.6.1's, their ratio, and chapter
    13 once per group. field 0: by the events, against DeepGEMM's events; 3: by the kernels' own
    time, against DeepGEMM's kernel-only times."""
    deepgemm = DEEPGEMM_GROUPED if deepgemm is None else deepgemm
    lines = head_lines(GROUPED_HEAD)
    for s in grouped["shapes"]:
        ours, dense = (grouped[k].get(s) for k in ("ours", "dense"))
        ours = None if ours is None else ours[field]
        dense = None if dense is None else dense[field]
        lines.append("| " + " | ".join(grouped_cells(s) + [
            fmt(ours), fmt(deepgemm.get(s)), ratio_text(ours, deepgemm.get(s)), fmt(dense)]) + " |")
    return "\n".join(lines)


def grouped_gbps_table(grouped, field=1, deepgemm=None):
    """GB/s at the masked shapes of a few rows per group (is_small_group), where the work is a
    stream of B: the chapter's, DeepGEMM 2.6.1's and their ratio. field 1: by the events; 4: by the
    kernels' own time, against DeepGEMM's kernel-only GB/s."""
    deepgemm = DEEPGEMM_GROUPED_GBPS if deepgemm is None else deepgemm
    lines = head_lines(GROUPED_GBPS_HEAD)
    for s in grouped["shapes"]:
        if not is_small_group(s):
            continue
        ours = grouped["ours"].get(s)
        ours = None if ours is None else ours[field]
        lines.append("| " + " | ".join(grouped_cells(s) + [
            fmt(ours), fmt(deepgemm.get(s)), ratio_text(ours, deepgemm.get(s))]) + " |")
    return "\n".join(lines)


def grouped_markdown(grouped):
    chapter = grouped["chapter"]
    out = [
        "## Grouped",
        "",
        f"Chapter {chapter[:2]}'s grouped GEMM (`{chapter}`), every group in one launch, against",
        "DeepGEMM 2.6.1's grouped GEMMs, measured on our H100 by the same method",
        f"{DEEPGEMM_WHERE} ([method.md](method.md)), and against chapter",
        "13's dense kernel",
        "launched once per group (`dense_per_group`, this run; its time includes the gaps between",
        "its launches). `groups x rows`: the groups and the rows each is expected to have, the",
        "rows drawn uniformly in [0.7, 1.3] x that with a fixed seed; contiguous groups padded to",
        "128 rows, masked max_m 4096. TFLOPS (2 x valid rows x N x K / t) and GB/s (valid rows of",
        "A and D, all of B) count valid rows only. By the events; ratio: this chapter / DeepGEMM",
        "2.6.1. `-`: not available.",
        "",
        grouped_table(grouped),
        "",
    ]
    if any(is_small_group(s) for s in grouped["shapes"]):
        out += [
            "GB/s where a group is expected to have fewer rows than the smallest tile",
            f"({SMALL_GROUP_ROWS}): the work is a stream of B, whose bar is the {COPY_GBPS} GB/s a",
            "device-to-device copy reaches on our H100 ([method.md](method.md)). DeepGEMM was",
            "given the same rows: at these shapes a few rows more or less move TFLOPS by several",
            "percent and GB/s, which B's bytes dominate, hardly at all.",
            "",
            grouped_gbps_table(grouped),
            "",
        ]
    if any(v is not None and v[3] is not None
           for k in ("ours", "dense") for v in grouped[k].values()):
        out += [
            "## Grouped, by the kernels' own time (CUPTI)",
            "",
            "The same tables by the kernels' own time (CUPTI), median of the same runs: the",
            "chapter's one kernel; chapter 13 once per group as the sum of its kernels' durations",
            "(the gaps between its launches left out); DeepGEMM 2.6.1 by its kernel-only times",
            "from PyTorch's profiler ([method.md](method.md)), its GB/s the same bytes over that",
            "time.",
            "",
            grouped_table(grouped, 3, DEEPGEMM_GROUPED_KERNEL),
            "",
        ]
        if any(is_small_group(s) for s in grouped["shapes"]):
            out += [grouped_gbps_table(grouped, 4, DEEPGEMM_GROUPED_GBPS_KERNEL), ""]
    return out


def markdown(context, order, ablations, rows, shapes, grouped=None):
    gpu = context.get("gpu", "GPU")
    date = context.get("date", "")
    timing = context.get("timing", "")
    out = [
        "# The progression",
        "",
        f"Measured on {gpu}, {date}. Timing: {timing}.",
        "Generated by `docs/progression.py` from the progression benchmark (`./run_all.sh`);",
        "shapes are M x N x K of D(MxN, bf16) = A(MxK, fp8) * B(NxK, fp8)^T, DeepGEMM's dense shapes.",
        "`-`: not available for that shape.",
        "",
        "## TFLOPS (2MNK / t)",
        "",
        table(order, rows, shapes, 0, "{:.0f}"),
        "",
        "## GB/s ((MK + NK + 2MN) / t): the figure that matters for M = 64 and 128",
        "",
        table(order, rows, shapes, 1, "{:.0f}"),
        "",
        "## The last chapter against the best peer",
        "",
        "TFLOPS by the events. The peers: cuBLASLt block-scaled and per-tensor (this run), and",
        "DeepGEMM 8dfa329 and 2.6.1 measured on our H100 by the same method",
        f"{DEEPGEMM_WHERE} ([method.md](method.md)); DeepGEMM's published H800",
        "figures, the stretch, beside them. GB/s, the measure for M = 64 and 128, against the",
        f"{COPY_GBPS} GB/s a device-to-device copy reaches on our H100 ([method.md](method.md)).",
        "",
        against_best_peer(order, rows, shapes),
        "",
    ]
    if has_kernel_times(rows):
        out += [
            "## By the kernels' own time (CUPTI)",
            "",
            "TFLOPS over each timed run's kernel time (first kernel start to last kernel end, from",
            "CUPTI's activity records), median of the same runs: what DeepGEMM's own benchmark",
            "reads from the profiler. It leaves out what the events add to a kernel, 2.4 or 3.0 us",
            "in our runs on the H100, which of the two depending on what the process had timed",
            "before, and 2.2 to 2.8 for a kernel that only spins and for DeepGEMM's kernels timed",
            "beside ours ([method.md](method.md)): below about 20 us, compare kernels here. The",
            "last chapter against the peers by the same measure, DeepGEMM by its kernel-only",
            "times from PyTorch's profiler ([method.md](method.md)).",
            "",
            table(order, rows, shapes, 3, "{:.0f}"),
            "",
            against_best_peer(order, rows, shapes, 3, DEEPGEMM_KERNEL),
            "",
        ]
    if ablations:
        out += [
            "## Ablations: a chapter's changes measured one at a time",
            "",
            "TFLOPS, this run. The chapter's kernel with one choice forced (`[...]`), beside the",
            "previous chapter and the chapter as it chooses; `-`: the variation does not apply to",
            "the shape. Rows timed twice (a forced choice equal to the chapter's own) show the",
            "run-to-run spread.",
            "",
            ablation_table(order, ablations, rows, shapes),
        ]
    if grouped:
        out += grouped_markdown(grouped)
    out += [
        "## Peers",
        "",
    ]
    out += [f"- `{p}`: {n}" for p, n in PEER_NOTES.items() if p in rows]
    if grouped:
        out += [f"- `{GROUPED_PEER}`: chapter 13's dense kernel launched once per group, one "
                "launch after another in one timed run (the grouped shapes)"]
    out += [f"- DeepGEMM 8dfa329 and 2.6.1: on our H100, {DEEPGEMM_WHERE}, "
            "events, 8 GiB flush, median of 30 ([method.md](method.md))"
            + ("; 2.6.1's grouped GEMMs in the same call" if grouped else ""),
            "- DeepGEMM H800: its README of April 2025 ([method.md](method.md); not measured here)"]
    return "\n".join(out) + "\n"


def chart(order, rows, shapes, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: no chart", file=sys.stderr)
        return
    fig = plt.figure(figsize=(18, 11))
    grid = fig.add_gridspec(2, 3)
    axes = [fig.add_subplot(grid[0, i]) for i in range(3)]
    for ax, m in zip(axes, ("64", "128", "4096")):
        cols = [s for s in shapes if s.split("x")[0] == m]
        width = 0.8 / max(len(order), 1)
        for i, r in enumerate(order):
            ys = [(rows[r].get(s) or (0, 0, 0))[0] for s in cols]
            xs = [j + i * width for j in range(len(cols))]
            ax.bar(xs, ys, width, label=r, hatch="//" if not is_chapter(r) else None)
        ax.set_xticks([j + 0.4 - width / 2 for j in range(len(cols))])
        ax.set_xticklabels(["x".join(s.split("x")[1:]) for s in cols], rotation=30, fontsize=8)
        ax.set_title(f"M = {m}  (N x K below)")
        ax.set_ylabel("TFLOPS")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=7, fontsize=8, bbox_to_anchor=(0.5, 0.965))
    line_chart(fig.add_subplot(grid[1, :]), order, rows)
    fig.suptitle("FP8 GEMM progression, chapters beside cuBLASLt")
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    fig.savefig(path, dpi=110)


def line_chart(ax, order, rows):
    """The progression on the headline shape: chapters on the x axis, the peers as horizontal
    lines (this run's cuBLASLt solid; DeepGEMM from docs/method.md dashed and dotted)."""
    chapters = [r for r in order if is_main(r) and tflops(rows, r, HEADLINE)]
    xs = [int(r[:2]) for r in chapters]
    ys = [tflops(rows, r, HEADLINE) for r in chapters]
    ax.plot(xs, ys, marker="o", color="black", label="chapters (this run)")
    for x, y in zip(xs, ys):
        ax.annotate(f"{y:.0f}", (x, y), textcoords="offset points", xytext=(0, 6), ha="center",
                    fontsize=8)
    peers = [(p, tflops(rows, p, HEADLINE), "-") for p in PEER_NOTES]
    peers += [(f"{name} (method.md)", figures[HEADLINE], "--") for name, figures in DEEPGEMM.items()]
    peers += [("DeepGEMM H800, published", DEEPGEMM_H800[HEADLINE], ":")]
    for i, (name, y, style) in enumerate(peers):
        if y:
            ax.axhline(y, linestyle=style, color=f"C{i}", label=f"{name}: {y:.0f}")
    ax.set_xticks(xs)
    ax.set_xticklabels([r.replace("_", " ", 1) for r in chapters], rotation=20, fontsize=8)
    ax.set_ylabel("TFLOPS")
    ax.set_title(f"The progression at {HEADLINE.replace('x', ' x ')}")
    ax.legend(fontsize=8, loc="upper left")


# --- The READMEs' generated blocks -----------------------------------------------------------------
#
# A README holds blocks that this script fills from the committed docs/progression.md:
#   <!-- generated: headline -->                 a chapter's headline against the previous chapter
#   <!-- generated: table 4096x7168x16384 ... -->  a chapter's numbers on the shapes named
#   <!-- generated: chapters -->                  the top README's table of the book
#   <!-- generated: standing -->                  the top README's bullets on the last chapter
#   <!-- generated: grouped-headline -->          the grouped chapter's headline against DeepGEMM
#   <!-- generated: grouped-table -->             its table of the grouped shapes (## Grouped)
# each closed by <!-- end generated -->. `--readmes` rewrites them, `--check-readmes` fails where a
# block differs from what docs/progression.md gives (a ctest, so CI keeps them in step).

ROOT = __import__("os").path.dirname(__import__("os").path.dirname(__import__("os").path.abspath(
    __file__)))

# The top table's idea cells, 12 words at most.
IDEAS = {
    "00": "one thread per output; the quantiser; the CPU reference",
    "01": "one wgmma with hand-built shared-memory descriptors",
    "02": "fp8 wgmma m64n128k32 over a K loop, ordinary loads",
    "03": "TMA loads completing on an mbarrier with expect_tx",
    "04": "128-byte swizzle: TMA writes it, the descriptor reads it",
    "05": "a ring of stages, a producer warpgroup, setmaxnreg",
    "06": "scales applied in fp32 after every 128-wide K block",
    "07": "BLOCK_N of 144 or 160 straddling two scale blocks",
    "08": "bf16 through stmatrix and a swizzled tile, one TMA store",
    "09": "persistent CTAs walking tiles in groups; the epilogue overlaps loads",
    "10": "2-CTA clusters sharing A or B by TMA multicast",
    "11": "tile, stages and multicast chosen per shape",
    "12": "split-K across a cluster through distributed shared memory",
    "13": "FFMA yield and reuse bits rewritten in the SASS",
    "14": "side road: warp-level mma.sync and ldmatrix; why Hopper needs wgmma",
    "15": "the scheduler learns groups: contiguous and masked grouped GEMM for mixture-of-experts",
}


def shape_key(cell):
    return cell.strip().replace(" x ", "x")


def pretty(shape):
    return shape.replace("x", " x ", 2)


def bytes_per_flop(shape):
    m, n, k = (int(x) for x in shape.split("x"))
    return (m * k + n * k + 2 * m * n) / (2.0 * m * n * k)


def parse_markdown(path):
    """The committed run as docs/progression.md has it: its date and GPU, the TFLOPS, GB/s and
    kernel-time tables (kernel -> shape -> value), the ablation tables, and the grouped tables
    (grouped shape -> column -> value; empty where the run has no grouped entries)."""
    with open(path) as f:
        lines = f.read().split("\n")
    run = {"tflops": {}, "gbps": {}, "kernel": {}, "ablations": {}, "grouped": {},
           "grouped_kernel": {}}
    first = lines[2]  # "Measured on <gpu>, <date>. Timing: ..."
    run["gpu"], run["date"] = first[len("Measured on "):first.index(". Timing")].rsplit(", ", 1)
    section, grouped, i = None, None, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## TFLOPS"):
            section = run["tflops"]
        elif line.startswith("## GB/s"):
            section = run["gbps"]
        elif line.startswith("## By the kernels' own time"):
            section = run["kernel"]
        elif line.startswith("### "):
            section = run["ablations"].setdefault(line[4:].strip(), {})
        elif line == "## Grouped":
            section, grouped = None, run["grouped"]
        elif line.startswith("## Grouped, by the kernels' own time"):
            section, grouped = None, run["grouped_kernel"]
        elif line.startswith("## "):
            section, grouped = None, None
        elif line.startswith("| layout |") and grouped is not None:
            # A grouped table: rows the grouped shapes, columns as its head names them (two
            # tables in a section, TFLOPS and GB/s, fill the same rows: their ratios are
            # "ratio TFLOPS" and "ratio GB/s").
            head = [c.strip() for c in line.strip("|").split("|")]
            head = [f"ratio {head[4].split()[-1]}" if h == "ratio" else h for h in head]
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                cells = [c.strip() for c in lines[i].strip("|").split("|")]
                grouped.setdefault(grouped_key(cells), {}).update(
                    {h: None if v == "-" else float(v) for h, v in zip(head[4:], cells[4:])})
                i += 1
            continue
        elif line.startswith("| ") and section is not None and not section.get("_done"):
            head = [c.strip() for c in line.strip("|").split("|")]
            i += 2
            body = []
            while i < len(lines) and lines[i].startswith("|"):
                body.append([c.strip() for c in lines[i].strip("|").split("|")])
                i += 1
            if head[0] == "kernel":  # rows: kernels, columns: shapes
                shapes = [shape_key(c) for c in head[1:]]
                for cells in body:
                    section[cells[0]] = {s: None if v == "-" else float(v)
                                         for s, v in zip(shapes, cells[1:])}
            else:  # an ablation table: rows shapes, columns previous, [ablations], chapter
                section["columns"] = head[1:]
                section["rows"] = {shape_key(c[0]): [None if v == "-" else float(v)
                                                     for v in c[1:]] for c in body}
            section["_done"] = True
            continue
        i += 1
    for t in (run["tflops"], run["gbps"], run["kernel"]):
        t.pop("_done", None)
    return run


def chapter_rows(run):
    """The main line's chapters in the run (side chapters left out)."""
    return [r for r in run["tflops"] if is_main(r)]


def previous_chapter(run, name):
    """The chapter a chapter is compared with: the one before it on the main line, or the one a
    side chapter names (SIDE_CHAPTERS)."""
    if is_chapter(name) and not is_main(name):
        return next((r for r in run["tflops"] if r[:2] == SIDE_CHAPTERS[name[:2]]), None)
    rows = chapter_rows(run)
    return rows[rows.index(name) - 1] if name in rows and rows.index(name) > 0 else None


def fmt(v):
    return "-" if v is None else f"{v:.0f}"


def source_line(run, link):
    return (f"The committed run, [docs/progression.md]({link}) ({run['gpu']}, {run['date']}; "
            "TFLOPS and GB/s by CUDA events, median of 30).")


def headline_block(run, name, link):
    t, g = run["tflops"], run["gbps"]
    if name == GROUPED_CHAPTER:  # not a dense chapter: its grouped headline
        return grouped_headline_block(run, link)
    if name not in t:
        return ("(Not timed: the chapter is one instruction, not a GEMM.)" if name[:2] == "01" else
                "(Not in the committed run yet: " + source_line(run, link) + ")")
    prev = previous_chapter(run, name)
    parts = []
    for shape, table, unit in ((HEADLINE, t, "TFLOPS"), (SMALL_HEADLINE, g, "GB/s")):
        ours = table[name].get(shape)
        text = f"**{pretty(shape)}: {fmt(ours)} {unit}**"
        if prev and table[prev].get(shape) and ours:
            before = table[prev][shape]
            text += f" (chapter {prev[:2]}: {fmt(before)}, x{ours / before:.2f})"
        parts.append(text)
    return " · ".join(parts) + ". " + source_line(run, link)


def grouped_label(shape):
    layout, rows, nk = shape.split("/")
    return f"{layout} {rows.replace('x', ' x ')} at {nk.replace('x', ' x ')}"


def grouped_source_line(run, link):
    return (f"DeepGEMM 2.6.1: measured on our H100 {DEEPGEMM_WHERE} "
            f"([docs/method.md]({link.replace('progression.md', 'method.md')})); TFLOPS and GB/s "
            "count valid rows only. " + source_line(run, link))


def grouped_headline_block(run, link):
    """The grouped chapter's headline: a contiguous prefill's TFLOPS and a masked decoding step's
    GB/s, each beside DeepGEMM 2.6.1's."""
    g = run["grouped"]
    if not g:
        return "(Not in the committed run yet: " + source_line(run, link) + ")"
    parts = []
    for shape, unit, deepgemm in ((GROUPED_HEADLINE, "TFLOPS", DEEPGEMM_GROUPED),
                                  (GROUPED_SMALL_HEADLINE, "GB/s", DEEPGEMM_GROUPED_GBPS)):
        row = g.get(shape, {})
        ours, ratio_cell = row.get(f"this chapter {unit}"), row.get(f"ratio {unit}")
        text = f"**{grouped_label(shape)}: {fmt(ours)} {unit}**"
        dense = row.get(f"dense per group {unit}")
        before = f"chapter 13 once per group: {fmt(dense)}; " if dense else ""
        if ours and ratio_cell:  # the table's ratio, of the unrounded figures
            text += f" ({before}DeepGEMM 2.6.1: {fmt(deepgemm[shape])}, x{ratio_cell:.2f})"
        parts.append(text)
    return " · ".join(parts) + ". " + grouped_source_line(run, link)


def grouped_table_block(run, link):
    """The table of docs/progression.md's ## Grouped, as it is there."""
    g = run["grouped"]
    if not g:
        return "(Not in the committed run yet: " + source_line(run, link) + ")"
    lines = head_lines(GROUPED_HEAD)
    for shape, v in g.items():
        ours = v.get("this chapter TFLOPS")
        lines.append("| " + " | ".join(grouped_cells(shape) + [
            fmt(ours), fmt(v.get("DeepGEMM 2.6.1 TFLOPS")),
            "-" if v.get("ratio TFLOPS") is None else f"{v['ratio TFLOPS']:.2f}",
            fmt(v.get("dense per group TFLOPS"))]) + " |")
    note = ("TFLOPS by CUDA events; ratio: this chapter / DeepGEMM 2.6.1; dense per group: chapter "
            "13 launched once per group, the same run. " + grouped_source_line(run, link))
    return "\n".join(lines) + "\n\n" + note


def best_cublaslt(run, table, shape):
    vals = [run[table].get(p, {}).get(shape) for p in ("cublasLt-blk", "cublasLt-scalar")]
    vals = [v for v in vals if v]
    return max(vals) if vals else None


def table_block(run, name, shapes, link):
    prev = previous_chapter(run, name)
    ablation = run["ablations"].get(name)
    abl_cols = [c for c in ablation["columns"] if c.startswith("[")] if ablation else []
    head = ["shape"] + ([f"chapter {prev[:2]}"] if prev else []) + abl_cols
    head += [f"**this chapter**", "best cuBLASLt", "DeepGEMM 2.6.1", "this chapter GB/s"]
    lines = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for s in shapes:
        cells = [pretty(s)]
        if prev:
            cells.append(fmt(run["tflops"][prev].get(s)))
        if abl_cols:
            row = ablation["rows"].get(s)
            for c in abl_cols:
                cells.append(fmt(row[ablation["columns"].index(c)] if row else None))
        cells.append(f"**{fmt(run['tflops'].get(name, {}).get(s))}**")
        cells.append(fmt(best_cublaslt(run, "tflops", s)))
        cells.append(fmt(DEEPGEMM["DeepGEMM 2.6.1"].get(s)))
        cells.append(fmt(run["gbps"].get(name, {}).get(s)))
        lines.append("| " + " | ".join(cells) + " |")
    note = ("TFLOPS by CUDA events; " + ("`[...]`: this chapter with one choice forced (its "
            "ablations); " if abl_cols else "") + "best cuBLASLt: block-scaled or per-tensor, the "
            f"same run; DeepGEMM 2.6.1: measured on our H100 {DEEPGEMM_WHERE} "
            f"([docs/method.md]({link.replace('progression.md', 'method.md')})). "
            + source_line(run, link))
    return "\n".join(lines) + "\n\n" + note


def chapters_block(run, chapter_dirs):
    t, g = run["tflops"], run["gbps"]
    lines = [f"| # | chapter | the one new idea | TFLOPS at {pretty(HEADLINE)} | x previous | "
             f"GB/s at {pretty(SMALL_HEADLINE)} |", "| --- | --- | --- | ---: | ---: | ---: |"]
    for d in chapter_dirs:
        n = d[:2]
        if d == GROUPED_CHAPTER:
            lines.append(grouped_chapter_row(run, d))
            continue
        ours = t.get(d, {}).get(HEADLINE)
        prev = previous_chapter(run, d)
        ratio = f"x{ours / t[prev][HEADLINE]:.2f}" if prev and ours else ""
        lines.append(f"| {n} | [{d[3:].replace('_', ' ')}](chapters/{d}) | {IDEAS.get(n, '')} | "
                     + (fmt(ours) if ours else "(one instruction)" if n == "01" else
                        "(not in this run)") + f" | {ratio} | "
                     + fmt(g.get(d, {}).get(SMALL_HEADLINE) if ours else None).replace("-", "")
                     + " |")
    peers = [(label, t[p][HEADLINE], g[p][SMALL_HEADLINE]) for p, label in
             (("cublasLt-blk", "cuBLASLt block-scaled, this run"),
              ("cublasLt-scalar", "cuBLASLt per-tensor, this run")) if p in t]
    for name, figures in DEEPGEMM.items():
        small = figures[SMALL_HEADLINE] * 1000 * bytes_per_flop(SMALL_HEADLINE)
        peers.append((f"{RELEASE_NAMES[name]}, measured 2026-11-27 ([method](docs/method.md))",
                      figures[HEADLINE], small))
    for name, big, small in peers:
        lines.append(f"| | peer | {name} | {fmt(big)} | | {fmt(small)} |")
    return "\n".join(lines) + "\n\n" + source_line(run, "docs/progression.md")


def grouped_chapter_row(run, d):
    """The grouped chapter's row of the top table: its grouped headline in the dense columns."""
    g = run["grouped"]
    big = g.get(GROUPED_HEADLINE, {}).get("this chapter TFLOPS")
    small = g.get(GROUPED_SMALL_HEADLINE, {}).get("this chapter GB/s")
    return (f"| {d[:2]} | [{d[3:].replace('_', ' ')}](chapters/{d}) | {IDEAS.get(d[:2], '')} | "
            + (f"{fmt(big)} ({grouped_label(GROUPED_HEADLINE)})" if big else "(not in this run)")
            + " | | " + (f"{fmt(small)} ({grouped_label(GROUPED_SMALL_HEADLINE)})" if small else "")
            + " |")


def standing_block(run):
    chapters = chapter_rows(run)
    last = chapters[-1]
    out = []
    for table, label, deepgemm in (("tflops", "By CUDA events", DEEPGEMM),
                                   ("kernel", "By the kernels' own time", DEEPGEMM_KERNEL)):
        if last not in run[table]:
            continue
        ours = run[table][last]
        verdicts = []
        peers = {p: run[table].get(p, {}) for p in ("cublasLt-blk", "cublasLt-scalar")}
        peers.update(deepgemm)
        for peer, figures in peers.items():
            shapes = [s for s in ours if ours[s] and figures.get(s)]
            behind = [s for s in shapes if ours[s] < figures[s]]
            text = f"{PEER_NOTES.get(peer, peer).split(',')[0] if peer in PEER_NOTES else peer}"
            if peer == "cublasLt-blk":
                text = "cuBLASLt block-scaled"
            elif peer == "cublasLt-scalar":
                text = "cuBLASLt per-tensor"
            else:
                text = RELEASE_NAMES[peer]
            text += f" {len(shapes) - len(behind)} of {len(shapes)}"
            if behind:
                text += " (behind at " + ", ".join(
                    f"{pretty(s)} by {100 * (1 - ours[s] / figures[s]):.1f}%" for s in behind) + ")"
            verdicts.append(text)
        out.append(f"- {label}, chapter {last[:2]} is at or above " + "; ".join(verdicts) + ".")
    small = run["gbps"][last].get(SMALL_HEADLINE)
    if small:
        out.append(f"- At {pretty(SMALL_HEADLINE)}, where the work is a stream of B: {small:.0f} "
                   f"GB/s by events, {small / COPY_GBPS:.2f} of the {COPY_GBPS} GB/s a "
                   "device-to-device copy reaches on our H100.")
    out.append(f"- DeepGEMM's figures: measured on our H100 {DEEPGEMM_WHERE} "
               f"([docs/method.md](docs/method.md)); cuBLASLt's: the same run. "
               + source_line(run, "docs/progression.md"))
    return "\n".join(out)


def readme_blocks(root=ROOT, check=False):
    """Fills (or, with check, compares) every README's generated blocks from docs/progression.md.
    Returns the list of READMEs whose blocks differ (check) or changed."""
    import glob
    import os
    import re

    run = parse_markdown(os.path.join(root, "docs", "progression.md"))
    dirs = sorted(os.path.basename(d) for d in glob.glob(os.path.join(root, "chapters", "[0-9][0-9]_*"))
                  if os.path.isdir(d))
    pattern = re.compile(r"(<!-- generated: ([\w-]+)([^>]*?) -->\n)(.*?)(<!-- end generated -->)",
                         re.S)
    differ = []
    for path in [os.path.join(root, "README.md")] + [
            os.path.join(root, "chapters", d, "README.md") for d in dirs]:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            text = f.read()
        name = os.path.basename(os.path.dirname(path))
        link = "docs/progression.md" if path.endswith(os.path.join(root, "README.md")) and \
            os.path.dirname(path) == root else "../../docs/progression.md"

        def fill(m):
            kind, args = m.group(2), m.group(3).split()
            if kind == "headline":
                body = headline_block(run, name, link)
            elif kind == "table":
                body = table_block(run, name, args, link)
            elif kind == "chapters":
                body = chapters_block(run, dirs)
            elif kind == "standing":
                body = standing_block(run)
            elif kind == "grouped-headline":
                body = grouped_headline_block(run, link)
            elif kind == "grouped-table":
                body = grouped_table_block(run, link)
            else:
                raise SystemExit(f"{path}: unknown generated block '{kind}'")
            return m.group(1) + body + "\n" + m.group(5)

        new = pattern.sub(fill, text)
        if new != text:
            differ.append(os.path.relpath(path, root))
            if not check:
                with open(path, "w") as f:
                    f.write(new)
    return differ


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json", nargs="?")
    ap.add_argument("--md")
    ap.add_argument("--png")
    ap.add_argument("--print", action="store_true")
    ap.add_argument("--readmes", action="store_true",
                    help="fill the READMEs' generated blocks from docs/progression.md")
    ap.add_argument("--check-readmes", action="store_true",
                    help="fail where a README's generated block differs from docs/progression.md")
    a = ap.parse_args()
    if a.readmes or a.check_readmes:
        if a.json or a.md:  # first the markdown from the run, then the READMEs from it
            context, order, ablations, rows, shapes = load(a.json)
            if a.md:
                with open(a.md, "w") as f:
                    f.write(markdown(context, order, ablations, rows, shapes,
                                     load_grouped(a.json)))
        differ = readme_blocks(check=a.check_readmes)
        if a.check_readmes and differ:
            print("generated blocks differ from docs/progression.md (run docs/progression.py "
                  "--readmes): " + ", ".join(differ))
            sys.exit(1)
        print(("checked" if a.check_readmes else "filled") + " the READMEs' generated blocks")
        if not (a.png or a.print):
            return
    context, order, ablations, rows, shapes = load(a.json)
    if a.md:
        with open(a.md, "w") as f:
            f.write(markdown(context, order, ablations, rows, shapes, load_grouped(a.json)))
    if a.png:
        chart(order, rows, shapes, a.png)
    if a.print:
        print("TFLOPS, median of timed runs (" + context.get("gpu", "") + ")")
        print(table(order, rows, shapes, 0, "{:.0f}"))


if __name__ == "__main__":
    main()
