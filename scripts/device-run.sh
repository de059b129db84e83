#!/usr/bin/env bash
# Runs on the GPU machine (see scripts/device-bundle.sh): doctor, the main job, the example, the
# GPU tests and the benches, each logged under $OUT. Stops at nothing: every check reports.
set -uo pipefail
cd "$(dirname "$0")/.."
bundle=.device-bundle
out=${OUT:-/tmp/oxicuda-device-out}
mkdir -p "$out"
export OXICUDA_EXPECT_GPU=1 OXICUDA_DEVICE=cuda
# For tests/doctor.rs (the oxicuda binary) and tests/gpu_faults.rs (the planted-fault kernels).
export OXICUDA_BIN="$PWD/$bundle/oxicuda" OXICUDA_TEST_KERNELS_PTX="$PWD/$bundle/fault-kernels.ptx"

step() {
  local name=$1; shift
  echo "=== $name: $*"
  "$@" 2>&1 | tee "$out/$name.log"
  echo "=== $name: exit ${PIPESTATUS[0]}"
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 | tee "$out/gpu.txt"
step doctor "$bundle/oxicuda" doctor
step doctor-json "$bundle/oxicuda" doctor --json
step main "$bundle/oxicuda"
step example "$bundle/example-vector_add"
for t in "$bundle"/test-*; do
  step "$(basename "$t")" "$t" --test-threads=1 --nocapture
done
for b in "$bundle"/bench-*; do
  step "$(basename "$b")" "$b" --bench --warm-up-time 1 --measurement-time 3
done
