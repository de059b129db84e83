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
cp target/release/oxicuda "$bundle/oxicuda"
cp target/release/examples/vector_add "$bundle/example-vector_add"
executables test --release --no-run --test gpu --test gpu_faults --test gpu_cooperation --test doctor --test cpu_executor --test cooperative_kernels --test checked_mode --test ptx | while read -r name exe; do
  cp "$exe" "$bundle/test-$name"
done
# The planted-fault kernels gpu_faults launches, built to PTX here (device-run.sh hands the file
# to the tests through OXICUDA_TEST_KERNELS_PTX).
cargo test --release --test gpu_faults -- --exact test_kernels_build_to_ptx
cp target/test-kernels-ptx/test_kernels.ptx "$bundle/fault-kernels.ptx"
executables bench --no-run --bench vector_add | while read -r name exe; do
  cp "$exe" "$bundle/bench-$name"
done
ls -la "$bundle"
du -sh "$bundle"
