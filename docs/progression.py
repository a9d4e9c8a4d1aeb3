#!/usr/bin/env python3
"""Turns the progression benchmark's JSON into docs/progression.md (and a PNG chart).

    progression.py RESULTS.json --md docs/progression.md --png docs/progression.png
    progression.py RESULTS.json --print        # the TFLOPS table on stdout

Rows are the chapters and the cuBLASLt peers, columns DeepGEMM's 18 shapes; a chapter's ablation
rows ("10_tma_multicast[multicast=off]": registry.hpp) get a table of their own. Beside the run's own
peers, DeepGEMM's figures from ../shared/design/anchors.md (measured on our H100 by the same method,
in other runs; and as published for the H800) are quoted, labelled as such, in the comparison of the
last chapter with the best peer and in the chart.
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
# A device-to-device copy on our H100 (anchors.md): the bandwidth bound of M = 64 and 128.
COPY_GBPS = 3000

# DeepGEMM (commit 8dfa329) on our H100 SXM, TFLOPS by CUDA events with an 8 GB flush, median of
# 30, the highest of three runs (2026-11-22 and twice on 2026-11-23): anchors.md, "DeepGEMM here".
DEEPGEMM_HERE = {
    "64x2112x7168": 133, "64x24576x1536": 213, "64x32768x512": 159, "64x7168x16384": 272,
    "64x4096x7168": 187, "64x7168x2048": 159, "128x2112x7168": 247, "128x24576x1536": 398,
    "128x32768x512": 293, "128x7168x16384": 509, "128x4096x7168": 336, "128x7168x2048": 284,
    "4096x2112x7168": 1107, "4096x24576x1536": 1259, "4096x32768x512": 926,
    "4096x7168x16384": 1471, "4096x4096x7168": 1398, "4096x7168x2048": 1205,
}
# The same runs of DeepGEMM timed by its own bench_kineto, the kernel alone (anchors.md, the
# figures in brackets): what this benchmark's kernel-only column (CUPTI) compares with.
DEEPGEMM_HERE_KERNEL = {
    "64x2112x7168": 156, "64x24576x1536": 233, "64x32768x512": 190, "64x7168x16384": 283,
    "64x4096x7168": 207, "64x7168x2048": 194, "128x2112x7168": 283, "128x24576x1536": 434,
    "128x32768x512": 347, "128x7168x16384": 532, "128x4096x7168": 372, "128x7168x2048": 343,
    "4096x2112x7168": 1132, "4096x24576x1536": 1268, "4096x32768x512": 934,
    "4096x7168x16384": 1475, "4096x4096x7168": 1421, "4096x7168x2048": 1235,
}
# DeepGEMM's README of April 2025, H800 (anchors.md): the stretch, not run here.
DEEPGEMM_H800 = {
    "64x2112x7168": 206, "64x24576x1536": 289, "64x32768x512": 219, "64x7168x16384": 336,
    "64x4096x7168": 287, "64x7168x2048": 295, "128x2112x7168": 352, "128x24576x1536": 535,
    "128x32768x512": 358, "128x7168x16384": 645, "128x4096x7168": 533, "128x7168x2048": 510,
    "4096x2112x7168": 1127, "4096x24576x1536": 1212, "4096x32768x512": 775,
    "4096x7168x16384": 1520, "4096x4096x7168": 1410, "4096x7168x2048": 1168,
}


def load(path):
    with open(path) as f:
        data = json.load(f)
    rows, shapes = {}, []
    for b in data["benchmarks"]:
        name, shape = b["name"].split("/")[:2]
        if b.get("error_occurred"):
            value = None
        else:
            # TFLOPS and GB/s by the events, the events' median, and TFLOPS by the kernels' own
            # time (CUPTI, "kernel_us"), where the run recorded it: the same flops over less time.
            kernel_us = b.get("kernel_us")
            by_kernel = b["TFLOPS"] * b["median_us"] / kernel_us if kernel_us else None
            value = (b["TFLOPS"], b["GBps"], b["median_us"], by_kernel)
        rows.setdefault(name, {})[shape] = value
        if shape not in shapes:
            shapes.append(shape)
    order = sorted(r for r in rows if is_chapter(r)) + [p for p in PEER_NOTES if p in rows]
    ablations = [r for r in rows if "[" in r]  # in the benchmark's (the registry's) order
    return data.get("context", {}), order, ablations, rows, shapes


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
    """The last chapter per shape against the best of cuBLASLt block-scaled and per-tensor (this
    run) and DeepGEMM here (anchors.md); DeepGEMM's H800 figure beside it. field 0: by the events,
    against DeepGEMM's events; 3: by the kernels' own time, against DeepGEMM's kernel-only times."""
    deepgemm = DEEPGEMM_HERE if deepgemm is None else deepgemm
    chapters = [r for r in order if is_chapter(r)]
    if not chapters:
        return ""
    last = chapters[-1]
    lines = [
        f"| shape | {last} | best peer | which | ratio | DeepGEMM H800 (published) | ratio "
        f"| {last} GB/s | of {COPY_GBPS} GB/s |",
        "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for s in shapes:
        ours = tflops(rows, last, s, field)
        peers = {p: tflops(rows, p, s, field) for p in ("cublasLt-blk", "cublasLt-scalar")}
        peers["DeepGEMM here"] = deepgemm.get(s)
        peers = {p: v for p, v in peers.items() if v}
        if ours is None or not peers:
            continue
        best = max(peers, key=peers.get)
        h800 = DEEPGEMM_H800.get(s)
        gbps = rows[last][s][1] * ours / rows[last][s][0]  # the same bytes over the same time
        lines.append(
            f"| {s.replace('x', ' x ', 2)} | {ours:.0f} | {peers[best]:.0f} | {best} | "
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
        before = [r for r in order if is_chapter(r) and r < chapter]
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


def markdown(context, order, ablations, rows, shapes):
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
        "TFLOPS. The best of cuBLASLt block-scaled and per-tensor (this run) and DeepGEMM measured on",
        "our H100 by the same method in other runs (`anchors.md`, \"DeepGEMM here\"); DeepGEMM's",
        "published H800 figures, the stretch, beside them. GB/s, the measure for M = 64 and 128,",
        f"against the {COPY_GBPS} GB/s a device-to-device copy reaches on our H100 (`anchors.md`).",
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
            "beside ours (`common/timing.hpp`): below about 20 us, compare kernels here. The last",
            "chapter against the best peer by the same measure, DeepGEMM here by its kernel-only",
            "times (`anchors.md`, the figures in brackets).",
            "",
            table(order, rows, shapes, 3, "{:.0f}"),
            "",
            against_best_peer(order, rows, shapes, 3, DEEPGEMM_HERE_KERNEL),
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
    out += [
        "## Peers",
        "",
    ]
    out += [f"- `{p}`: {n}" for p, n in PEER_NOTES.items() if p in rows]
    out += ["- DeepGEMM here: commit 8dfa329 on our H100, events, 8 GB flush, median of 30 "
            "(`anchors.md`; not this run)",
            "- DeepGEMM H800: its README of April 2025 (`anchors.md`; not measured here)"]
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
    lines (this run's cuBLASLt solid; DeepGEMM from anchors.md dashed and dotted)."""
    chapters = [r for r in order if is_chapter(r) and tflops(rows, r, HEADLINE)]
    xs = [int(r[:2]) for r in chapters]
    ys = [tflops(rows, r, HEADLINE) for r in chapters]
    ax.plot(xs, ys, marker="o", color="black", label="chapters (this run)")
    for x, y in zip(xs, ys):
        ax.annotate(f"{y:.0f}", (x, y), textcoords="offset points", xytext=(0, 6), ha="center",
                    fontsize=8)
    peers = [(p, tflops(rows, p, HEADLINE), "-") for p in PEER_NOTES]
    peers += [("DeepGEMM here (anchors.md)", DEEPGEMM_HERE[HEADLINE], "--"),
              ("DeepGEMM H800, published", DEEPGEMM_H800[HEADLINE], ":")]
    for i, (name, y, style) in enumerate(peers):
        if y:
            ax.axhline(y, linestyle=style, color=f"C{i}", label=f"{name}: {y:.0f}")
    ax.set_xticks(xs)
    ax.set_xticklabels([r.replace("_", " ", 1) for r in chapters], rotation=20, fontsize=8)
    ax.set_ylabel("TFLOPS")
    ax.set_title(f"The progression at {HEADLINE.replace('x', ' x ')}")
    ax.legend(fontsize=8, loc="upper left")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--md")
    ap.add_argument("--png")
    ap.add_argument("--print", action="store_true")
    a = ap.parse_args()
    context, order, ablations, rows, shapes = load(a.json)
    if a.md:
        with open(a.md, "w") as f:
            f.write(markdown(context, order, ablations, rows, shapes))
    if a.png:
        chart(order, rows, shapes, a.png)
    if a.print:
        print("TFLOPS, median of timed runs (" + context.get("gpu", "") + ")")
        print(table(order, rows, shapes, 0, "{:.0f}"))


if __name__ == "__main__":
    main()
