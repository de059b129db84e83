#!/usr/bin/env bash
# Runs every test of the workspace (unit, integration, benches in test mode, doc tests), then the
# release checks: the API docs build without warnings, and every crate packages and builds from
# its packaged sources (the kernels included). Ends with one line per check and one line of
# totals over all test binaries: "total: N passed, N failed, N skipped", where skipped counts the
# tests that said so (e.g. GPU tests on a machine without a GPU). Exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."

# The extra runs below name --workspace like the first: cargo resolves a dependency's features
# over the packages selected, so a run of the root package alone would build every dependency and
# test binary a second time, with other features (gigabytes of disk, minutes of CPU).
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# The GPU tests run against the PTX emulator (ptx-emu/driver, a libcuda.so over the PTX
# interpreter: docs/emulator.md), strictly: with FERROCUDA_EXPECT_GPU a GPU test that finds no GPU
# fails instead of skipping, so a broken emulator fails CI. FERROCUDA_LIBCUDA set beforehand (e.g.
# to a real libcuda.so.1) is kept.
cargo build -p ferrocuda-ptx-emu-driver || exit 1
export FERROCUDA_LIBCUDA=${FERROCUDA_LIBCUDA:-$PWD/target/debug/libferrocuda_emu_cuda.so}
export FERROCUDA_EXPECT_GPU=1
echo "GPU tests run on: $FERROCUDA_LIBCUDA"

{ cargo test --workspace --all-targets --no-fail-fast && cargo test --workspace --doc; } 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

checks=()
# check NAME COMMAND...: runs the command, records "ok" or "FAILED" and how long it took.
check() {
  local name=$1 start=$SECONDS
  shift
  printf '\n==> %s: %s\n' "$name" "$*"
  if "$@"; then
    checks+=("ok      $name ($((SECONDS - start)) s)")
  else
    checks+=("FAILED  $name ($((SECONDS - start)) s)")
    status=1
  fi
}

# The CPU executor's two paths: the tests above ran kernels that #[kernel] split at their
# barriers on the split path; these run them again forced onto coroutines (CPU halves only: the
# GPU halves do not depend on it and ran above).
check "checked mode, kernel language and ops tests on the coroutine path (FERROCUDA_CPU_PATH=coroutine)" \
  env -u FERROCUDA_LIBCUDA -u FERROCUDA_EXPECT_GPU FERROCUDA_CPU_PATH=coroutine \
  cargo test -q --workspace --test checked_mode --test kernel_language --test cpu_regions --test cpu_regions_leaving --test porting --test small_atomics --test ports --test ops_transpose \
  --test ops_matmul --test ops_group_by --test ops_statistics

# The PTX emulator's deferred mode (docs/emulator.md): asynchronous copies and launches run only
# when something waits for them, so a host that reads what it never waited for sees it unfinished.
# The tests of streams, events, pending copies, page-locked buffers and the pipeline, again so.
check "streams, pending copies, pinned buffers, buffer views, cudarc interop and the pipeline (one and two devices) on the emulator in deferred mode (FERROCUDA_EMU_DEFER=1)" \
  env FERROCUDA_EMU_DEFER=1 cargo test -q --workspace --test streams --test pipeline --test pipeline_multi_device --test buffer_slices --test gpu_interop

# Numba's own kernel tests against the emulator's libcuda (docs/emulator.md, "Judged by Numba"):
# a fixed list of cudapy modules that pass in full (atomics, complex math, constant memory, printf,
# array arguments, warp collectives, shared and local memory, libdevice's functions, f16 and bf16
# arithmetic and casts, debug and line information, recursion, libcu++'s barrier, fork, two GPUs
# ...), so a regression in the interpreter's ISA
# coverage fails here. Makes target/numba-venv with pip on its first run; a few minutes.
numba_modules=(test_atomics test_complex test_array_args test_constmem test_print test_datetime test_alignment
  test_boolean test_complex_kernel test_warp_ops test_sm test_localmem test_libdevice
  test_casting test_bfloat16 test_bfloat16_bindings test_operator test_lineinfo test_debuginfo
  test_recursion test_cooperative_groups test_multiprocessing test_multigpu)
check "Numba's cudapy tests on the emulator (${#numba_modules[@]} modules, scripts/test-numba.sh)" \
  scripts/test-numba.sh "${numba_modules[@]/#/numba.cuda.tests.cudapy.}"

# Lints and formatting are errors here, so that they do not pile up between reviews.
check "cargo clippy --workspace --all-targets (-D warnings)" \
  cargo clippy --workspace --all-targets -- -D warnings
check "cargo fmt --check" cargo fmt --all -- --check

# Each crate's files import downward (docs/design.md, "The layers"): no import circle of more than
# two files. gpu-std still has one inside its CPU runtime (cpu/mod.rs holds code its files import;
# issue 34).
check "no import circle of more than two files (tools/layers/imports.py --check)" \
  python3 tools/layers/imports.py --check

# Broken intra-doc links and the like are errors, as they would be on docs.rs.
check "cargo doc --workspace --no-deps (RUSTDOCFLAGS=-D warnings)" \
  env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

# Packages every publishable crate (test-kernels and the ports, examples/ports, are not) and verifies each by building it from the packaged sources
# alone, the ferrocuda crates resolved from cargo's temporary registry: what crates.io users get.
# `--allow-dirty`: this checks the working tree as it is (CI's checkout is clean anyway).
# cargo treats registry crates as immutable: while the version stays the same it reuses its
# unpacked copy of each packaged crate ($CARGO_HOME/registry/src/<overlay>/) and the artifacts it
# built from that copy, however the sources changed since. Drop both for ferrocuda's own crates
# (none is on crates.io yet), so the verification builds today's sources.
forget_packaged_builds() {
  local version depfile unit
  version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
  rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ferrocuda-*-"$version"
  for depfile in $(grep -l 'registry/src/[^/]*/ferrocuda-' target/debug/deps/*.d 2>/dev/null); do
    unit=$(basename "$depfile" .d)             # ferrocuda_std-<hash>
    rm -rf "target/debug/.fingerprint/${unit//_/-}" "$depfile"
  done
}
forget_packaged_builds
check "cargo package --workspace" cargo package --workspace --exclude test-kernels --exclude fuzz-kernels --exclude ferrocuda-ports --exclude ports-kernels --exclude ferrocuda-ptx-emu --exclude ferrocuda-ptx-emu-driver --allow-dirty

# ferrocuda's verification above ran its build.rs on the packaged sources, and that fails unless
# the kernels build; this shows it was the packaged ferrocuda-kernels (found through `links`, in
# cargo's registry directory, not through a path into this repository) and that its PTX has kernels.
packaged_kernels_built() {
  local output ptx
  output=$(grep -l 'rerun-if-changed=.*/registry/src/[^/]*/ferrocuda-kernels-[^/]*/Cargo.toml' \
    target/*/build/ferrocuda-*/output 2>/dev/null | head -n 1)
  if [ -z "$output" ]; then
    echo "no build of ferrocuda from its packaged sources built ferrocuda-kernels" >&2
    return 1
  fi
  ptx=$(sed -n 's/^cargo:rustc-env=FERROCUDA_KERNELS_PTX=//p' "$output")
  echo "$ptx: $(grep -c '^\.visible \.entry' "$ptx") kernels (build script output: $output)"
  grep -q '^\.visible \.entry' "$ptx"
}
check "kernels built to PTX from the packaged sources" packaged_kernels_built

# The examples run where Device::best() puts them (here the PTX emulator: CUDA device 0) and
# check their own results.
examples_run_on_the_gpu() {
  local example out
  for example in vector_add library transpose_2d cudarc_interop; do
    cargo build -q --workspace --example "$example" || return 1
    out=$("target/debug/examples/$example") || return 1
    printf '%s\n' "$out"
    if ! grep -q "CUDA device 0" <<<"$out"; then
      echo "the example $example did not run on CUDA device 0" >&2
      return 1
    fi
  done
}
check "examples on CUDA device 0 ($FERROCUDA_LIBCUDA)" examples_run_on_the_gpu

# A user's kernel benchmarked with criterion (feature `criterion`, docs/benchmarking.md), in
# criterion's test mode (each benchmark once, 4096 elements): checked against its reference, the
# CPU executor run, and on the emulator its counters and estimate printed instead of a GPU time.
# tests/bench_gpu_time.rs (the CUDA-event measurement on the emulator) needs the feature too.
bench_own_kernel_runs() {
  local out
  cargo test -q --workspace --features ferrocuda/criterion --test bench_gpu_time || return 1
  cargo build -q --workspace --features ferrocuda/criterion --example bench_own_kernel || return 1
  out=$(target/debug/examples/bench_own_kernel --test) || return 1
  printf '%s\n' "$out"
  grep -q "is the PTX emulator: not timed" <<<"$out" && grep -qE "^saxpy +saxpy +1 .* \((memory|compute)\)$" <<<"$out"
}
check "examples/bench_own_kernel --test (criterion, emulator estimate)" bench_own_kernel_runs

# Undefined behaviour in what Miri can run (scripts/miri.sh); says "skipped" where no nightly
# toolchain with Miri is installed.
check "scripts/miri.sh" scripts/miri.sh

echo
printf '%s\n' "${checks[@]}"
awk '
  /^test result:/ {
    for (i = 1; i <= NF; i++) {
      if ($(i + 1) ~ /^passed/) passed += $i
      if ($(i + 1) ~ /^failed/) failed += $i
    }
  }
  /: skipped: / { skipped++ }
  END { printf "total: %d passed, %d failed, %d skipped\n", passed, failed, skipped }
' "$log"
exit "$status"
