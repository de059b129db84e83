#!/usr/bin/env bash
# Runs under Miri (an interpreter that detects undefined behaviour) what Miri can run: the host's
# argument packing and validation, launches on the CPU executor of kernels without barriers (their
# buffers, `Out` writes and shared arrays), and the PTX reader, with a few property-test cases
# each. Not under Miri: the block scheduler's coroutines (corosensei switches stacks with inline
# assembly), the GPU path (it loads the driver with dlopen), and the tests of error messages that
# ask the driver for its version. Needs the pinned nightly with Miri (scripts/setup.sh installs it
# on CI, or with FERROCUDA_MIRI=1; FERROCUDA_MIRI_TOOLCHAIN picks another):
#   rustup toolchain install nightly-2026-10-29 --profile minimal --component miri,rust-src
# Measured on a shared 2-core machine: about 2.5 minutes for Miri's sysroot (once), 2.5 for the
# dependencies under Miri (once), then about 3 minutes for the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

toolchain="${FERROCUDA_MIRI_TOOLCHAIN:-nightly-2026-10-29}"
if ! cargo "+$toolchain" miri --version >/dev/null 2>&1; then
  echo "miri: skipped: no $toolchain with Miri (FERROCUDA_MIRI=1 make setup installs it)"
  exit 0
fi
# Reading /proc/meminfo (the CPU device's memory) needs the host's file system.
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"
export PROPTEST_CASES="${PROPTEST_CASES:-8}"
miri() { cargo "+$toolchain" miri test "$@"; }

miri -p ferrocuda-host --lib -- --skip error_tests
# The PTX reader's fixed and generated well-formed inputs; the random-text properties take
# minutes per case under Miri and stay with the normal test run.
miri -p ferrocuda-host --test ptx_parser -- huge_and_malformed declared_parameter_sizes
# Launches go through rayon, whose crossbeam-epoch breaks Stacked Borrows' rules but not Tree
# Borrows' (crossbeam-rs/crossbeam#545, #996): this one runs under Tree Borrows, and rayon's
# pool threads are still alive when the test binary's main thread ends (-Zmiri-ignore-leaks).
MIRIFLAGS="$MIRIFLAGS -Zmiri-tree-borrows -Zmiri-ignore-leaks" miri -p ferrocuda-host --test launch_validation
# The elementwise loop's plain output stores across the pool's workers, and the atomic ones of 2D
# launches: a data race between two OS threads would be Miri's error (about 70 s here).
MIRIFLAGS="$MIRIFLAGS -Zmiri-tree-borrows -Zmiri-ignore-leaks" miri -p ferrocuda-host --test owned_outputs
# The same for outputs owned through a grid-stride loop (each thread's run, in chunks).
MIRIFLAGS="$MIRIFLAGS -Zmiri-tree-borrows -Zmiri-ignore-leaks" miri -p ferrocuda-host --test owned_grid_stride
# Out's accessors; the executor without barriers (no coroutine is made) and its shared arrays;
# the split path's carried-variable slots and their arena.
miri -p ferrocuda-std --lib -- out:: cpu::tests::run_block_visits cpu::tests::a_shared_array_too_large cpu::slots::tests
