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
    b = {"name": f"{name}/{shape}", "TFLOPS": tflops, "GBps": (m * k + n * k + 2 * m * n) / us / 1e3,
         "median_us": us}
    if kernel_times:
        b["kernel_us"] = us / KERNEL_FACTOR
    if error:
        b = {"name": f"{name}/{shape}", "error_occurred": True,
             "error_message": "chapter 10: multicast on B needs the tiles to pair up"}
    return b


def fake_run(path, kernel_times=True):
    benchmarks = []
    for s in SHAPES:
        for name, tflops in (("08_stmatrix_epilogue", 100), ("09_persistent_scheduler", 110),
                             ("10_tma_multicast", 130), ("10_tma_multicast[multicast=off]", 120),
                             ("10_tma_multicast[multicast=A]", 131)):
            benchmarks.append(row(name, s, tflops, kernel_times=kernel_times))
        benchmarks.append(row("10_tma_multicast[multicast=B]", s, 125, error=s.startswith("64x"),
                              kernel_times=kernel_times))
        benchmarks.append(row("cublasLt-blk", s, 115, kernel_times=kernel_times))
        benchmarks.append(row("cublasLt-scalar", s, 128, kernel_times=kernel_times))
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
        # shape DeepGEMM 8dfa329 (docs/method.md, 1464 against 2.6.1's 1459), at 64 x 2112 x 7168
        # DeepGEMM 2.6.1 (141 against 8dfa329's 126 and cuBLASLt's 115 and 128).
        self.assertIn("| shape | 10_tma_multicast | cublasLt-blk | cublasLt-scalar | "
                      "DeepGEMM 8dfa329 | DeepGEMM 2.6.1 | best peer | ratio |", text)
        self.assertIn("| 4096 x 7168 x 16384 | 130 | 115 | 128 | 1464 | 1459 | DeepGEMM 8dfa329 | "
                      "0.09 |", text)
        self.assertIn("| 64 x 2112 x 7168 | 130 | 115 | 128 | 126 | 141 | DeepGEMM 2.6.1 | 0.92 |",
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
        # kernel-only figures (docs/method.md: 8dfa329 1467 and 2.6.1 1464 at the headline shape,
        # 157 and 181 at 64 x 2112 x 7168).
        by_kernel = text.split("## By the kernels' own time (CUPTI)")[1].split("## Ablations")[0]
        self.assertIn("| 10_tma_multicast | 156 | 156 |", by_kernel)
        self.assertIn("| 4096 x 7168 x 16384 | 156 | 138 | 154 | 1467 | 1464 | DeepGEMM 8dfa329 | "
                      "0.11 |", by_kernel)
        self.assertIn("| 64 x 2112 x 7168 | 156 | 138 | 154 | 157 | 181 | DeepGEMM 2.6.1 | 0.86 |",
                      by_kernel)

    def test_no_kernel_section_without_kernel_times(self):
        # A run recorded without CUPTI (an older JSON, or CUPTI held by another tool).
        fake_run(self.json, kernel_times=False)
        text = self.markdown()
        self.assertNotIn("By the kernels' own time", text)
        self.assertIn("| 4096 x 7168 x 16384 | 130 | 115 | 128 | 1464 | 1459 | DeepGEMM 8dfa329 | "
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
        self.assertIn("| 4096 x 7168 x 16384 | 110 | 120 | 131 | 125 | **130** | 128 | 1459 |", text)

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
