#!/usr/bin/env bash
# Builds, here, everything the GPU checks run, into .device-bundle/ (git-ignored): the GPU machine
# has no Rust toolchain. Then, with the `device` tool:
#   run(command="bash scripts/device-run.sh", carry=[".device-bundle"])
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=.device-bundle
rm -rf "$bundle" && mkdir -p "$bundle"

# Prints the executables cargo builds for the given targets.
executables() {
  cargo "$@" --message-format=json 2>/dev/null \
    | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    kinds = m.get("target", {}).get("kind", [])
    if m.get("reason") == "compiler-artifact" and m.get("executable") and ("test" in kinds or "bench" in kinds):
        print(m["target"]["name"], m["executable"])'
}

cargo build --release --bins --examples
cp target/release/ferrocuda "$bundle/ferrocuda"
cp target/release/examples/vector_add "$bundle/example-vector_add"
cp target/release/examples/library "$bundle/example-library"
# Every test with a GPU part (they skip on the CPU here, and must pass there).
tests=(gpu gpu_faults gpu_cooperation tensor_cores doctor main_job math_kernel math_default_kernel cuda_c cpu_executor cooperative_kernels checked_mode ptx kernel_language launch_config streams pipeline device_memory_limit)
for t in tests/ops_*.rs; do tests+=("$(basename "$t" .rs)"); done
executables test --release --no-run "${tests[@]/#/--test=}" | while read -r name exe; do
  cp "$exe" "$bundle/test-$name"
done
# The planted-fault kernels gpu_faults launches, built to PTX here (device-run.sh hands the file
# to the tests through FERROCUDA_TEST_KERNELS_PTX).
cargo test --release --test gpu_faults -- --exact test_kernels_build_to_ptx
cp target/test-kernels-ptx/test_kernels.ptx "$bundle/fault-kernels.ptx"
# The tensor-core kernels (test-kernels' sm80 feature, PTX for sm_80), for tests/tensor_cores.rs
# (FERROCUDA_TEST_KERNELS_SM80_PTX): its CPU run here builds them.
cargo test --release --test tensor_cores -- --exact tf32_tile
cp target/test-kernels-sm80-ptx/test_kernels.ptx "$bundle/tensor-core-kernels.ptx"
executables bench --no-run --bench workloads --bench matmul --bench matmul_tensor | while read -r name exe; do
  cp "$exe" "$bundle/bench-$name"
done
# Debug information is most of each binary; the checks need none of it (the carry limit is 64 MiB).
strip "$bundle"/ferrocuda "$bundle"/example-* "$bundle"/test-* "$bundle"/bench-*
ls -la "$bundle"
du -sh "$bundle"
