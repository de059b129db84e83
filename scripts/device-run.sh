#!/usr/bin/env bash
# Runs on the GPU machine (see scripts/device-bundle.sh): doctor, the main job at full size, the
# example, every GPU test and the benches. Everything is logged to $OUT/device.log (the device tool
# brings back at most 8 files); the main job's results.json and speedups.svg land in
# $OUT/results/. Stops at nothing: every check reports, with its exit status.
set -uo pipefail
cd "$(dirname "$0")/.."
bundle=.device-bundle
out=${OUT:-/tmp/ferrocuda-device-out}
mkdir -p "$out/results"
log="$out/device.log"
export FERROCUDA_EXPECT_GPU=1 FERROCUDA_DEVICE=cuda
# For tests/doctor.rs and tests/main_job.rs (the ferrocuda binary) and tests/gpu_faults.rs (the
# planted-fault kernels), tests/tensor_cores.rs (the sm_80 kernels).
export FERROCUDA_BIN="$PWD/$bundle/ferrocuda" FERROCUDA_TEST_KERNELS_PTX="$PWD/$bundle/fault-kernels.ptx"
export FERROCUDA_TEST_KERNELS_SM80_PTX="$PWD/$bundle/tensor-core-kernels.ptx"

# The CUDA C column's NVRTC: the toolkit's, where the dynamic linker does not find it by name.
if [ -z "${FERROCUDA_NVRTC:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so'; then
  for lib in "${CUDA_HOME:-/usr/local/cuda}"/lib64/libnvrtc.so* /usr/local/cuda*/lib64/libnvrtc.so* \
      /usr/lib/x86_64-linux-gnu/libnvrtc.so*; do
    if [ -f "$lib" ]; then
      export FERROCUDA_NVRTC="$lib"
      break
    fi
  done
fi

# cuBLAS, the matrix rows' ceiling (the main job's cuBLAS lines, benches matmul and
# matmul_tensor): the toolkit's, where the dynamic linker does not find it by name.
if ! ldconfig -p 2>/dev/null | grep -q 'libcublas\.so'; then
  for lib in "${CUDA_HOME:-/usr/local/cuda}"/lib64/libcublas.so* /usr/local/cuda*/lib64/libcublas.so* \
      /usr/local/lib/python3*/dist-packages/nvidia/cublas/lib/libcublas.so*; do
    if [ -f "$lib" ]; then
      export LD_LIBRARY_PATH="$(dirname "$lib")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      break
    fi
  done
fi

step() {
  local name=$1; shift
  echo "=== $name: $*" | tee -a "$log"
  local start=$SECONDS
  "$@" >>"$log" 2>&1
  echo "=== $name: exit $? after $((SECONDS - start)) s" | tee -a "$log"
}

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1 | tee -a "$log"
step doctor "$bundle/ferrocuda" doctor
step kernels-sm90 "$bundle/ferrocuda" kernels
step main "$bundle/ferrocuda" run --out "$out/results"
step example "$bundle/example-vector_add"
step example-library "$bundle/example-library"
# The tests are release builds here; checked mode is what they expect of the CPU executor.
for t in "$bundle"/test-*; do
  step "$(basename "$t")" env FERROCUDA_CHECKED=1 "$t" --test-threads=1
done
for b in "$bundle"/bench-*; do
  step "$(basename "$b")" "$b" --bench --warm-up-time 1 --measurement-time 3
done
grep -E "^=== .*exit" "$log" > "$out/summary.txt"
