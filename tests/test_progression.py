#!/usr/bin/env python3
"""docs/progression.py on a made-up benchmark JSON (no GPU): which rows are chapters, peers and
ablations, and what the tables say. Run by ctest (tests/CMakeLists.txt)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "docs", "progression.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import progression  # noqa: E402

SHAPES = ["64x2112x7168", "4096x7168x16384"]


# The kernels' own time (CUPTI) in the made-up run: the events' time over this factor.
KERNEL_FACTOR = 1.2


def row(name, shape, tflops, error=False, kernel_times=True):
    m, n, k = (int(x) for x in shape.split("x"))
    us = 2.0 * m * n * k / (tflops * 1e12) * 1e6
    b = {"name": f"{name}/{shape}/iterations:1/manual_time", "TFLOPS": tflops, "GBps": (m * k + n * k + 2 * m * n) / us / 1e3,
         "median_us": us}
    if kernel_times:
        b["kernel_us"] = us / KERNEL_FACTOR
    if error:
        b = {"name": f"{name}/{shape}", "error_occurred": True,
             "error_message": "chapter 10: multicast on B needs the tiles to pair up"}
    return b


# Made-up grouped entries (chapter 15): shape -> (the chapter's TFLOPS, chapter 13 once per group);
# None where the entry failed.
GROUPED = {
    "contiguous/8x4096/6144x7168": (1300, 1200),
    "masked/32x192/4096x2048": (800, None),
    "masked/32x20/6144x7168": (120, 60),
}


IDEA_15 = "the scheduler learns groups: contiguous and masked grouped GEMM for mixture-of-experts"


def grouped_row(name, shape, tflops, kernel_times=True):
    """A grouped entry with every group at its expected rows (the made-up run's valid rows), named
    as Google Benchmark names it in its JSON (with "/iterations:1/manual_time")."""
    layout, rows, nk = shape.split("/")
    groups, expected = (int(x) for x in rows.split("x"))
    n, k = (int(x) for x in nk.split("x"))
    valid = groups * expected
    if tflops is None:
        return {"name": f"{name}/{shape}/iterations:1/manual_time", "error_occurred": True,
                "error_message": "chapter 13: refused"}
    us = 2.0 * valid * n * k / (tflops * 1e12) * 1e6
    b = {"name": f"{name}/{shape}/iterations:1/manual_time", "TFLOPS": tflops,
         "GBps": (valid * k + groups * n * k + 2 * valid * n) / us / 1e3, "median_us": us,
         "groups": groups, "rows": expected, "N": n, "K": k, "masked": int(layout == "masked")}
    if kernel_times:
        b["kernel_us"] = us / KERNEL_FACTOR
    return b


def grouped_gbps(shape, tflops):
    """GB/s of a made-up grouped entry of that TFLOPS."""
    return grouped_row("x", shape, tflops)["GBps"]


def fake_run(path, kernel_times=True, grouped=False, shapes=SHAPES):
    benchmarks = []
    for s in shapes:
        for name, tflops in (("08_stmatrix_epilogue", 100), ("09_persistent_scheduler", 110),
                             ("10_tma_multicast", 130), ("10_tma_multicast[multicast=off]", 120),
                             ("10_tma_multicast[multicast=A]", 131)):
            benchmarks.append(row(name, s, tflops, kernel_times=kernel_times))
        benchmarks.append(row("10_tma_multicast[multicast=B]", s, 125, error=s.startswith("64x"),
                              kernel_times=kernel_times))
        benchmarks.append(row("cublasLt-blk", s, 115, kernel_times=kernel_times))
        benchmarks.append(row("cublasLt-scalar", s, 128, kernel_times=kernel_times))
    if grouped:  # after the dense shapes, as the benchmark registers them
        for s, (ours, dense) in GROUPED.items():
            benchmarks.append(grouped_row("15_grouped_gemm", s, ours, kernel_times))
            benchmarks.append(grouped_row("dense_per_group", s, dense, kernel_times))
    with open(path, "w") as f:
        json.dump({"context": {"gpu": "test GPU", "date": "2026-11-23"}, "benchmarks": benchmarks}, f)


class Progression(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.json = os.path.join(self.dir.name, "run.json")
        fake_run(self.json)

    def tearDown(self):
        self.dir.cleanup()

    def test_rows(self):
        _, order, ablations, rows, shapes = progression.load(self.json)
        self.assertEqual(order, ["08_stmatrix_epilogue", "09_persistent_scheduler",
                                 "10_tma_multicast", "cublasLt-blk", "cublasLt-scalar"])
        self.assertEqual(ablations, ["10_tma_multicast[multicast=off]",
                                     "10_tma_multicast[multicast=A]",
                                     "10_tma_multicast[multicast=B]"])
        self.assertEqual(shapes, SHAPES)
        self.assertIsNone(rows["10_tma_multicast[multicast=B]"]["64x2112x7168"])

    def markdown(self):
        md = os.path.join(self.dir.name, "p.md")
        subprocess.run([sys.executable, SCRIPT, self.json, "--md", md], check=True)
        with open(md) as f:
            return f.read()

    def test_markdown(self):
        text = self.markdown()
        # The last chapter (not an ablation row) against each peer and the best: at the headline
        # shape DeepGEMM 2.6.1 (docs/method.md, 1490 against 8dfa329's 1484), at 64 x 2112 x 7168
        # DeepGEMM 2.6.1 (141 against 8dfa329's 124 and cuBLASLt's 115 and 128).
        self.assertIn("| shape | 10_tma_multicast | cublasLt-blk | cublasLt-scalar | "
                      "DeepGEMM 8dfa329 | DeepGEMM 2.6.1 | best peer | ratio |", text)
        self.assertIn("| 4096 x 7168 x 16384 | 130 | 115 | 128 | 1484 | 1490 | DeepGEMM 2.6.1 | "
                      "0.09 |", text)
        self.assertIn("| 64 x 2112 x 7168 | 130 | 115 | 128 | 124 | 141 | DeepGEMM 2.6.1 | 0.92 |",
                      text)
        # Its GB/s against the copy bandwidth.
        gbps = (64 * 7168 + 2112 * 7168 + 2 * 64 * 2112) / (2.0 * 64 * 2112 * 7168 / 130e12) / 1e9
        self.assertIn(f"| {gbps:.0f} | {gbps / 3000:.2f} |", text)
        # The ablation table: previous chapter, the forced choices, the chapter; "-" where refused.
        self.assertIn("### 10_tma_multicast", text)
        self.assertIn("| shape | 09_persistent_scheduler | [multicast=off] | [multicast=A] | "
                      "[multicast=B] | 10_tma_multicast |", text)
        self.assertIn("| 64 x 2112 x 7168 | 110 | 120 | 131 | - | 130 |", text)
        self.assertIn("| 4096 x 7168 x 16384 | 110 | 120 | 131 | 125 | 130 |", text)
        # The TFLOPS table has one row per chapter and peer, none for the ablations.
        tflops_table = text.split("## TFLOPS")[1].split("## GB/s")[0]
        self.assertNotIn("[multicast", tflops_table)
        # By the kernels' own time: the same flops over 1 / 1.2 of the time, against DeepGEMM's
        # kernel-only figures (docs/method.md: 8dfa329 1495 and 2.6.1 1498 at the headline shape,
        # 156 and 180 at 64 x 2112 x 7168).
        by_kernel = text.split("## By the kernels' own time (CUPTI)")[1].split("## Ablations")[0]
        self.assertIn("| 10_tma_multicast | 156 | 156 |", by_kernel)
        self.assertIn("| 4096 x 7168 x 16384 | 156 | 138 | 154 | 1495 | 1498 | DeepGEMM 2.6.1 | "
                      "0.10 |", by_kernel)
        self.assertIn("| 64 x 2112 x 7168 | 156 | 138 | 154 | 156 | 180 | DeepGEMM 2.6.1 | 0.87 |",
                      by_kernel)

    def test_no_kernel_section_without_kernel_times(self):
        # A run recorded without CUPTI (an older JSON, or CUPTI held by another tool).
        fake_run(self.json, kernel_times=False)
        text = self.markdown()
        self.assertNotIn("By the kernels' own time", text)
        self.assertIn("| 4096 x 7168 x 16384 | 130 | 115 | 128 | 1484 | 1490 | DeepGEMM 2.6.1 | "
                      "0.09 |", text)

    def test_readme_blocks(self):
        # The markdown written from the made-up run, read back, fills a chapter README's blocks.
        root = self.dir.name
        os.makedirs(os.path.join(root, "docs"))
        subprocess.run([sys.executable, SCRIPT, self.json, "--md",
                        os.path.join(root, "docs", "progression.md")], check=True)
        chapter = os.path.join(root, "chapters", "10_tma_multicast")
        os.makedirs(chapter)
        readme = os.path.join(chapter, "README.md")
        with open(readme, "w") as f:
            f.write("# 10\n<!-- generated: headline -->\nstale\n<!-- end generated -->\n"
                    "<!-- generated: table 4096x7168x16384 -->\n<!-- end generated -->\n")
        self.assertEqual(progression.readme_blocks(root, check=True),
                         [os.path.join("chapters", "10_tma_multicast", "README.md")])
        progression.readme_blocks(root)
        self.assertEqual(progression.readme_blocks(root, check=True), [])
        with open(readme) as f:
            text = f.read()
        # Headline: this chapter against the previous one (130 against 110 TFLOPS).
        self.assertIn("**4096 x 7168 x 16384: 130 TFLOPS** (chapter 09: 110, x1.18)", text)
        self.assertNotIn("stale", text)
        # Table: the previous chapter, the ablations ("-" where refused: none at this shape), this
        # chapter, the best cuBLASLt of the run and DeepGEMM 2.6.1.
        self.assertIn("| shape | chapter 09 | [multicast=off] | [multicast=A] | [multicast=B] | "
                      "**this chapter** | best cuBLASLt | DeepGEMM 2.6.1 | this chapter GB/s |", text)
        self.assertIn("| 4096 x 7168 x 16384 | 110 | 120 | 131 | 125 | **130** | 128 | 1490 |", text)

    def test_grouped_rows(self):
        # The grouped entries are not dense rows: load leaves them out, load_grouped has them.
        fake_run(self.json, grouped=True)
        _, order, ablations, rows, shapes = progression.load(self.json)
        self.assertEqual(shapes, SHAPES)
        self.assertNotIn("15_grouped_gemm", rows)
        self.assertNotIn("dense_per_group", rows)
        self.assertEqual(len(order), 5)
        grouped = progression.load_grouped(self.json)
        self.assertEqual(grouped["chapter"], "15_grouped_gemm")
        self.assertEqual(grouped["shapes"], list(GROUPED))
        ours = grouped["ours"]["masked/32x20/6144x7168"]
        self.assertAlmostEqual(ours[0], 120)
        self.assertAlmostEqual(ours[1], grouped_gbps("masked/32x20/6144x7168", 120))
        self.assertAlmostEqual(ours[3], 120 * KERNEL_FACTOR)  # by the kernels' own time
        self.assertAlmostEqual(ours[4], ours[1] * KERNEL_FACTOR)
        self.assertIsNone(grouped["dense"]["masked/32x192/4096x2048"])  # the failed entry
        # An older run: no grouped entries, nothing to show.
        fake_run(self.json)
        self.assertIsNone(progression.load_grouped(self.json))

    def test_grouped_markdown(self):
        fake_run(self.json, grouped=True)
        text = self.markdown()
        grouped = text.split("## Grouped\n")[1].split("## Grouped, by the kernels' own time")[0]
        # One row per shape: the chapter, DeepGEMM 2.6.1 (docs/method.md: 1448 at contiguous 8 x
        # 4096, 6144 x 7168; 731 and 109), the ratio of the two, chapter 13 once per group ("-"
        # where its entry failed).
        self.assertIn("| layout | groups x rows | N | K | this chapter TFLOPS | DeepGEMM 2.6.1 "
                      "TFLOPS | ratio | dense per group TFLOPS |", grouped)
        self.assertIn("| contiguous | 8 x 4096 | 6144 | 7168 | 1300 | 1448 | 0.90 | 1200 |",
                      grouped)
        self.assertIn("| masked | 32 x 192 | 4096 | 2048 | 800 | 731 | 1.09 | - |", grouped)
        self.assertIn("| masked | 32 x 20 | 6144 | 7168 | 120 | 109 | 1.10 | 60 |", grouped)
        # GB/s at the 20-row shape only, against DeepGEMM's 2836.
        gbps = grouped_gbps("masked/32x20/6144x7168", 120)
        self.assertIn("| layout | groups x rows | N | K | this chapter GB/s | DeepGEMM 2.6.1 GB/s "
                      "| ratio |", grouped)
        self.assertIn(f"| masked | 32 x 20 | 6144 | 7168 | {gbps:.0f} | 2836 | {gbps / 2836:.2f} |",
                      grouped)
        self.assertNotIn("| contiguous | 8 x 4096 | 6144 | 7168 | "
                         f"{grouped_gbps('contiguous/8x4096/6144x7168', 1300):.0f} |", grouped)
        # By the kernels' own time: 1.2 x the figures, against DeepGEMM's kernel-only ones (1450,
        # 749, 110; its GB/s 2836 x 110 / 109); chapter 13's the sum of its kernels.
        by_kernel = text.split("## Grouped, by the kernels' own time (CUPTI)")[1]
        by_kernel = by_kernel.split("## Peers")[0]
        self.assertIn("| contiguous | 8 x 4096 | 6144 | 7168 | 1560 | 1450 | 1.08 | 1440 |",
                      by_kernel)
        self.assertIn("| masked | 32 x 192 | 4096 | 2048 | 960 | 749 | 1.28 | - |", by_kernel)
        self.assertIn(f"| masked | 32 x 20 | 6144 | 7168 | {gbps * 1.2:.0f} | 2862 | "
                      f"{gbps * 1.2 / (2836 * 110 / 109):.2f} |", by_kernel)
        self.assertIn("- `dense_per_group`:", text)
        # The dense tables know nothing of them: no grouped row, no grouped column.
        dense = text.split("## Grouped\n")[0]
        for name in ("15_grouped_gemm", "dense_per_group", "contiguous", "masked"):
            self.assertNotIn(name, dense)
        self.assertIn("| kernel | 64 x 2112 x 7168 | 4096 x 7168 x 16384 |", dense)

    def test_no_grouped_section_without_grouped_entries(self):
        text = self.markdown()
        self.assertNotIn("## Grouped", text)
        self.assertNotIn("dense_per_group", text)
        fake_run(self.json, kernel_times=False, grouped=True)
        text = self.markdown()
        self.assertIn("## Grouped\n", text)
        self.assertNotIn("## Grouped, by the kernels' own time", text)

    def grouped_tree(self, grouped):
        """A tree with docs/progression.md from a made-up run (with or without grouped entries), a
        top README and chapter 15's, their generated blocks stale."""
        root = self.dir.name
        fake_run(self.json, grouped=grouped, shapes=SHAPES + ["64x7168x16384"])
        os.makedirs(os.path.join(root, "docs"), exist_ok=True)
        subprocess.run([sys.executable, SCRIPT, self.json, "--md",
                        os.path.join(root, "docs", "progression.md")], check=True)
        for d in ("09_persistent_scheduler", "10_tma_multicast", "15_grouped_gemm"):
            os.makedirs(os.path.join(root, "chapters", d), exist_ok=True)
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write("# top\n<!-- generated: chapters -->\n<!-- end generated -->\n"
                    "<!-- generated: standing -->\n<!-- end generated -->\n")
        readme = os.path.join(root, "chapters", "15_grouped_gemm", "README.md")
        with open(readme, "w") as f:
            f.write("# 15\n<!-- generated: headline -->\nstale\n<!-- end generated -->\n"
                    "<!-- generated: grouped-headline -->\nstale\n<!-- end generated -->\n"
                    "text\n<!-- generated: grouped-table -->\n<!-- end generated -->\n")
        self.assertEqual(sorted(progression.readme_blocks(root, check=True)),
                         ["README.md", os.path.join("chapters", "15_grouped_gemm", "README.md")])
        progression.readme_blocks(root)
        self.assertEqual(progression.readme_blocks(root, check=True), [])
        with open(readme) as f:
            chapter = f.read()
        with open(os.path.join(root, "README.md")) as f:
            top = f.read()
        self.assertNotIn("stale", chapter)
        return top, chapter

    def test_grouped_readme_blocks(self):
        top, chapter = self.grouped_tree(grouped=True)
        gbps = grouped_gbps("masked/32x20/6144x7168", 120)
        # The headline (the chapter's headline block says the same): the contiguous prefill's
        # TFLOPS and the masked decoding step's GB/s, each beside DeepGEMM 2.6.1.
        headline = ("**contiguous 8 x 4096 at 6144 x 7168: 1300 TFLOPS** (chapter 13 once per "
                    "group: 1200; DeepGEMM 2.6.1: 1448, x0.90) · **masked 32 x 20 at 6144 x 7168: "
                    f"{gbps:.0f} GB/s** (DeepGEMM 2.6.1: 2836, x{gbps / 2836:.2f})")
        self.assertEqual(chapter.count(headline), 2)
        # The table, as ## Grouped has it.
        self.assertIn("\n".join([
            "| layout | groups x rows | N | K | this chapter TFLOPS | DeepGEMM 2.6.1 TFLOPS "
            "| ratio | dense per group TFLOPS |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
            "| contiguous | 8 x 4096 | 6144 | 7168 | 1300 | 1448 | 0.90 | 1200 |",
            "| masked | 32 x 192 | 4096 | 2048 | 800 | 731 | 1.09 | - |",
            "| masked | 32 x 20 | 6144 | 7168 | 120 | 109 | 1.10 | 60 |", "", ""]), chapter)
        # The top table: chapter 15's row with its idea and its grouped headline; the standing
        # block still on the last dense chapter.
        self.assertIn("| 15 | [grouped gemm](chapters/15_grouped_gemm) | " + IDEA_15 + " | 1300 "
                      "(contiguous 8 x 4096 at 6144 x 7168) | | "
                      f"{gbps:.0f} (masked 32 x 20 at 6144 x 7168) |", top)
        self.assertIn("| 10 | [tma multicast](chapters/10_tma_multicast) |", top)
        self.assertIn("- By CUDA events, chapter 10 is at or above", top)

    def test_grouped_readme_blocks_without_grouped_run(self):
        # A committed run from before chapter 15: its blocks and its row say so.
        top, chapter = self.grouped_tree(grouped=False)
        self.assertEqual(chapter.count("(Not in the committed run yet: "), 3)
        self.assertIn("| 15 | [grouped gemm](chapters/15_grouped_gemm) | " + IDEA_15
                      + " | (not in this run) | |  |", top)

    def test_chart(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib not installed: progression.py draws no chart")
        png = os.path.join(self.dir.name, "p.png")
        subprocess.run([sys.executable, SCRIPT, self.json, "--png", png], check=True)
        self.assertGreater(os.path.getsize(png), 10000)


if __name__ == "__main__":
    unittest.main()
