#!/usr/bin/env bash
# Runs Numba's CUDA test suites (numba.cuda.tests.cudadrv: the driver; numba.cuda.tests.cudapy:
# kernels) against the PTX emulator's libcuda, through Numba's ctypes driver binding
# (docs/emulator.md, "Judged by Numba"). Makes its own virtual environment with the pinned
# versions of scripts/numba.requirements.txt under target/numba-venv, builds the emulator, runs
# the suites and prints passed / failed / errors / skipped for each.
#
#   scripts/test-numba.sh                 both suites
#   scripts/test-numba.sh cudadrv         one suite (or a test id: numba.cuda.tests.cudapy.test_atomics)
#   NUMBA_JOBS=2 scripts/test-numba.sh    in parallel processes (Numba's runner's -m)
#   NUMBA_EMU_PROFILE=debug ...           on the emulator's debug build (default: release)
set -uo pipefail
cd "$(dirname "$0")/.."

venv=target/numba-venv
# The import needs the ctypes binding chosen (as below): without NVIDIA's cuda-bindings package
# it fails otherwise, and every run would make the environment again.
if ! NUMBA_CUDA_USE_NVIDIA_BINDING=0 "$venv/bin/python" -c 'import numba.cuda' 2>/dev/null \
    || ! cmp -s scripts/numba.requirements.txt "$venv/requirements.txt"; then
  python3 -m venv "$venv" || exit 1
  "$venv/bin/python" -m pip install -q -r scripts/numba.requirements.txt || exit 1
  cp scripts/numba.requirements.txt "$venv/requirements.txt"
fi
# The emulator built optimised: the suites launch kernels of billions of PTX instructions
# (test_matmul, test_intrinsics' 5.7e9-thread grid), which the debug build's interpreter runs
# tens of times slower. NUMBA_EMU_PROFILE=debug runs them on the debug build.
case ${NUMBA_EMU_PROFILE:=release} in
  release) cargo build -q --release -p ferrocuda-ptx-emu-driver || exit 1 ;;
  debug) cargo build -q -p ferrocuda-ptx-emu-driver || exit 1 ;;
  *) echo "NUMBA_EMU_PROFILE must be release or debug, not $NUMBA_EMU_PROFILE" >&2; exit 2 ;;
esac

export NUMBA_CUDA_USE_NVIDIA_BINDING=0
export NUMBA_CUDA_DRIVER=$PWD/target/$NUMBA_EMU_PROFILE/libferrocuda_emu_cuda.so
# NVIDIA's cuda-bindings (test_module_callbacks calls it directly) opens libcuda.so.1 by name:
# the emulator under that name, first on the library path, and never a real driver.
mkdir -p "$venv/libcuda"
ln -sfn "$NUMBA_CUDA_DRIVER" "$venv/libcuda/libcuda.so.1"
export LD_LIBRARY_PATH=$PWD/$venv/libcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The suites' own tests of the simulator are not ours to run.
unset NUMBA_ENABLE_CUDASIM
# The suites are written against GPUs and rely on what a GPU lets pass (test_localmem stores past
# a one-element array, test_sm reads shared memory never stored to): check kernels as a GPU
# does (docs/emulator.md, "How strictly kernels are checked"). FERROCUDA_EMU_CHECKS=strict runs
# them under the emulator's own checks.
export FERROCUDA_EMU_CHECKS=${FERROCUDA_EMU_CHECKS:-gpu}
# Two virtual GPUs, so that the suites' multi-GPU tests (context switches between devices,
# test_multigpu, CUDA_VISIBLE_DEVICES) run rather than skip.
export FERROCUDA_EMU_DEVICES=${FERROCUDA_EMU_DEVICES:-2}
# Of two compute capabilities (sm_90 and sm_80), so that test_caching's multi-CC test (a kernel
# cached for one GPU and compiled again for the other) runs rather than skips.
# (FERROCUDA_EMU_SM lists one per GPU: only for the two GPUs of the default.)
if [ "$FERROCUDA_EMU_DEVICES" = 2 ]; then
  export FERROCUDA_EMU_SM=${FERROCUDA_EMU_SM:-90,80}
fi

suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(cudadrv cudapy)
status=0
for suite in "${suites[@]}"; do
  case $suite in
    *.*) id=$suite ;;
    *) id=numba.cuda.tests.$suite ;;
  esac
  log=target/numba-$(echo "$id" | tr '.' '_').log
  echo "==> $id (log: $log)"
  "$venv/bin/python" -m numba.runtests -v ${NUMBA_JOBS:+-m "$NUMBA_JOBS"} "$id" >"$log" 2>&1
  [ $? -eq 0 ] || status=1
  "$venv/bin/python" - "$log" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
ran = re.search(r"^Ran (\d+) tests? in ([\d.]+)s", text, re.M)
summary = re.search(r"^(OK|FAILED)(?: \((.*)\))?$", text, re.M)
if not (ran and summary):
    print("   did not finish (see the log)")
    sys.exit()
parts = dict((k.strip(), int(v)) for k, v in
             (p.split("=") for p in (summary.group(2) or "").split(",") if "=" in p))
failed, errors = parts.get("failures", 0), parts.get("errors", 0)
skipped = parts.get("skipped", 0)
expected = parts.get("expected failures", 0) + parts.get("unexpected successes", 0)
# Errors also count failed class and module set-ups, so passes are counted, not subtracted.
passed = len(re.findall(r" \.\.\. ok$", text, re.M))
print(f"   {passed} passed, {failed} failed, {errors} errors, {skipped} skipped"
      + (f", {expected} expected failures" if expected else "")
      + f" (ran {ran.group(1)} in {float(ran.group(2)):.0f} s)")
PY
done
exit $status
