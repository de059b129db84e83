#!/usr/bin/env python3
"""What a Python user has on this CPU, side by side with ferrocuda's CPU executor, in one run.

`make compare-python` runs this in a virtual environment it makes under target/ (numpy, scipy,
numba from PyPI). For each workload, the Python baseline and `ferrocuda --only <row> --json`
are timed alternately (python, ours, python, ours, ...), so the machine's load drifts over both
alike, and the medians are compared. Every Python result is checked against a NumPy reference
first; ferrocuda checks its own results before timing them.

The workloads are the main job's rows at full size:
  vector add   16M float32: Numba `@njit(parallel=True)` prange loop (all cores) against the
               executor's `vector_add`.
  blur 3x3     3840x2160 float32 grey image, borders clamped: `scipy.ndimage.convolve(...,
               mode="nearest")` against the executor's `convolve_2d`.
  transpose    4096x4096 float32: NumPy's transpose copy `np.ascontiguousarray(a.T)` against
               the executor's coalesced (tiled) transpose.
The targets are issue 16's: vector add at least 0.8x Numba's speed; blur and transpose within
2x of SciPy's and NumPy's times.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import numba
import scipy
import scipy.ndimage


def median_seconds(fn, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


@numba.njit(parallel=True, fastmath=False, cache=False)
def numba_vector_add(a, b, out):
    for i in numba.prange(a.shape[0]):
        out[i] = a[i] + b[i]


def vector_add():
    n = 16 * 1024 * 1024
    rng = np.random.default_rng(1)
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    out = np.empty_like(a)
    numba_vector_add(a, b, out)  # compiles
    if not np.array_equal(out, a + b):
        raise SystemExit("numba vector add gave a wrong result")
    return lambda: numba_vector_add(a, b, out)


def blur_3x3():
    h, w = 2160, 3840
    rng = np.random.default_rng(2)
    image = rng.random((h, w), dtype=np.float32)
    weights = np.full((3, 3), 1.0 / 9.0, dtype=np.float32)
    out = np.empty_like(image)
    scipy.ndimage.convolve(image, weights, output=out, mode="nearest")
    # Reference: the clamped 3x3 mean, in float64.
    padded = np.pad(image.astype(np.float64), 1, mode="edge")
    reference = sum(padded[dy : dy + h, dx : dx + w] for dy in range(3) for dx in range(3)) / 9.0
    if np.max(np.abs(out - reference)) > 1e-5:
        raise SystemExit("scipy blur gave a wrong result")
    return lambda: scipy.ndimage.convolve(image, weights, output=out, mode="nearest")


def transpose():
    n = 4096
    a = np.arange(n * n, dtype=np.float32).reshape(n, n)
    t = np.ascontiguousarray(a.T)
    if not (t[3, 5] == a[5, 3] and t[n - 1, 0] == a[0, n - 1] and np.array_equal(t.T, a)):
        raise SystemExit("numpy transpose gave a wrong result")
    return lambda: np.ascontiguousarray(a.T)


# (name, ferrocuda `--only` filter, Python baseline, what it is, target: ours ÷ theirs at most)
WORKLOADS = [
    ("vector add", "vector add", vector_add, "Numba parallel CPU", 1 / 0.8),
    ("blur 3x3", "blur 3×3", blur_3x3, "SciPy ndimage.convolve", 2.0),
    ("transpose", "transpose, coalesced", transpose, "NumPy transpose copy", 2.0),
]


def ferrocuda_seconds(binary, only, out_dir):
    """The executor's median time for one main-job row (it checks its own result first)."""
    result = subprocess.run(
        [binary, "--json", "--only", only, "--out", out_dir],
        check=True,
        capture_output=True,
        text=True,
    )
    rows = json.loads(result.stdout)["rows"]
    (row,) = [r for r in rows if r["workload"] == only]
    if row["executor"]["failure"]:
        raise SystemExit(f"ferrocuda {only}: {row['executor']['failure']}")
    return row["executor"]["seconds"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ferrocuda", default="target/release/ferrocuda")
    parser.add_argument("--rounds", type=int, default=3, help="alternations per workload")
    parser.add_argument("--runs", type=int, default=10, help="Python runs per round")
    args = parser.parse_args()

    print(
        f"numpy {np.__version__}, scipy {scipy.__version__}, numba {numba.__version__} "
        f"(threads: {numba.get_num_threads()}); {os.cpu_count()} CPUs"
    )
    print("| workload | Python baseline | Python | ferrocuda executor | ours ÷ Python | target |")
    print("|---|---|---|---|---|---|")
    failed = False
    with tempfile.TemporaryDirectory() as out_dir:
        for name, only, setup, baseline, limit in WORKLOADS:
            fn = setup()
            python, ours = [], []
            for _ in range(args.rounds):
                python.append(median_seconds(fn, args.runs))
                ours.append(ferrocuda_seconds(args.ferrocuda, only, out_dir))
            p, o = statistics.median(python), statistics.median(ours)
            ratio = o / p
            ok = ratio <= limit
            failed |= not ok
            print(
                f"| {name} | {baseline} | {p * 1e3:.2f} ms | {o * 1e3:.2f} ms | {ratio:.2f}× | "
                f"≤ {limit:.2f}× {'✓' if ok else '✗'} |"
            )
    sys.exit(1 if failed and os.environ.get("FERROCUDA_STRICT") else 0)


if __name__ == "__main__":
    main()
