#!/usr/bin/env bash
# Installs what building and testing ferrocuda needs, and only what is missing:
#   1. a kernel toolchain: a rustc with the standard library's source, for `-Zbuild-std=core`
#      on the nvptx64-nvidia-cuda target (rustup's `rust-src`, or Debian's rustc-web + rust-web-src);
#   2. ptxas for sm_70..sm_90 to check the PTX (CUDA 12.x, PyPI package nvidia-cuda-nvcc-cu12:
#      CUDA 13's ptxas no longer assembles sm_70);
#   3. optional: nvdisasm, to disassemble the kernels' machine code (`ferrocuda kernels --sass`,
#      tests/machine_code.rs): PyPI's nvidia-cuda-nvdisasm, a 6 MB binary. `make setup-sass`
#      runs only this step.
#   4. NVRTC, CUDA's run-time C++ compiler (PyPI's nvidia-cuda-nvrtc-cu12, ~60 MB): what the main
#      job's "CUDA C" column compiles the project's CUDA C with, and tests/cuda_c.rs (there, on the
#      PTX emulator, whose driver reads NVRTC 12.9's PTX ISA 8.8). A system NVRTC is used as is.
#   5. on CI (CI=true) or with FERROCUDA_MIRI=1: the pinned nightly with Miri that scripts/miri.sh
#      uses (`make test` runs what Miri can run; elsewhere it says "skipped" without it).
# No CUDA toolkit and no GPU driver are needed to build; a GPU driver is only needed to run on a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

PTXAS_WHEEL="nvidia-cuda-nvcc-cu12==12.9.86"
NVDISASM_WHEEL="nvidia-cuda-nvdisasm==13.5.37"
NVRTC_WHEEL="nvidia-cuda-nvrtc-cu12==12.9.86"

say() { printf 'setup: %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi
}

# A rustc whose sysroot has library/core: the override, the active toolchain, Debian's.
kernel_rustc() {
  local rustc sysroot
  for rustc in "${FERROCUDA_KERNEL_RUSTC:-}" "$(command -v rustc || true)" /usr/bin/rustc; do
    [ -n "$rustc" ] && [ -x "$rustc" ] || continue
    sysroot=$("$rustc" --print sysroot 2>/dev/null) || continue
    if [ -f "$sysroot/lib/rustlib/src/rust/library/core/Cargo.toml" ]; then
      echo "$rustc"
      return 0
    fi
  done
  return 1
}

# pip install into the interpreter's site-packages; else the user's (a system Python that PEP 668
# protects).
pip_install_wheel() {
  command -v python3 >/dev/null || return 1
  local quiet="--quiet --disable-pip-version-check"
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install $quiet "$1" \
    || PIP_ROOT_USER_ACTION=ignore python3 -m pip install $quiet --user "$1" \
    || PIP_ROOT_USER_ACTION=ignore python3 -m pip install $quiet --user --break-system-packages "$1"
}

# `$1` (a path inside a pip wheel) under the interpreter's site-packages or the user's, where
# pip_install_wheel puts it.
in_site_packages() {
  local site
  command -v python3 >/dev/null || return 1
  for site in $(python3 -c 'import site, sysconfig; print(sysconfig.get_paths()["purelib"], site.getusersitepackages())'); do
    if [ -e "$site/$1" ]; then
      echo "$site/$1"
      return 0
    fi
  done
  return 1
}

# nvdisasm: FERROCUDA_NVDISASM, PATH, or the pip wheel (nvidia/cu13/bin).
find_nvdisasm() {
  local candidate
  for candidate in "${FERROCUDA_NVDISASM:-}" "$(command -v nvdisasm || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
      echo "$candidate"
      return 0
    fi
  done
  in_site_packages nvidia/cu13/bin/nvdisasm
}

# Says where the tool `$1` is (found by the function `$2`), first installing the wheel `$3` where
# it is not found; fails if it is still missing.
found_or_installed() {
  local path
  if path=$($2); then
    say "$1: $path"
  elif say "no $1; installing $3 from PyPI" && pip_install_wheel "$3" && path=$($2); then
    say "$1: $path"
  else
    return 1
  fi
}

setup_nvdisasm() {
  if ! found_or_installed nvdisasm find_nvdisasm "$NVDISASM_WHEEL"; then
    say "note: no nvdisasm: \`ferrocuda kernels --sass\` and the SASS test skip (optional)."
    say "  Install it with: python3 -m pip install '$NVDISASM_WHEEL'   (or set FERROCUDA_NVDISASM)"
  fi
}

if [ "${1:-}" = "--sass-only" ]; then
  setup_nvdisasm
  exit 0
fi

if rustc_path=$(kernel_rustc); then
  say "kernel toolchain: $("$rustc_path" -V) ($rustc_path)"
else
  say "no rustc with the standard library source; installing one"
  if command -v rustup >/dev/null && timeout 300 rustup component add rust-src; then
    say "installed rustup's rust-src"
  elif command -v apt-get >/dev/null && as_root apt-get update -qq \
      && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rustc-web rust-web-src >/dev/null; then
    say "installed Debian's rustc-web and rust-web-src (/usr/bin/rustc)"
  fi
  if rustc_path=$(kernel_rustc); then
    say "kernel toolchain: $("$rustc_path" -V) ($rustc_path)"
  else
    say "ERROR: could not install a kernel toolchain. Run one of:"
    say "  rustup component add rust-src                      (rustup)"
    say "  sudo apt-get install rustc-web rust-web-src         (Debian/Ubuntu)"
    say "or point FERROCUDA_KERNEL_RUSTC at a rustc whose sysroot has lib/rustlib/src/rust/library."
    exit 1
  fi
fi

# A ptxas that knows sm_70: FERROCUDA_PTXAS, PATH, or the pip wheel.
ptxas_for_sm70() {
  local candidate
  for candidate in "${FERROCUDA_PTXAS:-}" "$(command -v ptxas || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" --help 2>/dev/null | grep -q sm_70; then
      echo "$candidate"
      return 0
    fi
  done
  in_site_packages nvidia/cuda_nvcc/bin/ptxas
}

if ptxas_path=$(ptxas_for_sm70); then
  say "ptxas: $ptxas_path"
else
  say "no ptxas for sm_70; installing $PTXAS_WHEEL from PyPI"
  if pip_install_wheel "$PTXAS_WHEEL" && ptxas_path=$(ptxas_for_sm70); then
    say "ptxas: $ptxas_path"
  else
    say "WARNING: no ptxas: kernels build, but their PTX is not checked and the ptxas tests fail on CI."
    say "  Install it with: python3 -m pip install '$PTXAS_WHEEL'   (or set FERROCUDA_PTXAS)"
  fi
fi

setup_nvdisasm

# NVRTC: FERROCUDA_NVRTC, the dynamic linker's, or the pip wheel (nvidia/cuda_nvrtc/lib), where
# tests/cuda_c.rs looks for it.
find_nvrtc() {
  if [ -n "${FERROCUDA_NVRTC:-}" ] && [ -f "$FERROCUDA_NVRTC" ]; then
    echo "$FERROCUDA_NVRTC"
    return 0
  fi
  if command -v ldconfig >/dev/null && ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so'; then
    ldconfig -p | grep -m1 'libnvrtc\.so' | sed 's/.*=> //'
    return 0
  fi
  in_site_packages nvidia/cuda_nvrtc/lib/libnvrtc.so.12
}

if ! found_or_installed NVRTC find_nvrtc "$NVRTC_WHEEL"; then
  say "WARNING: no NVRTC: the main job's CUDA C column says so, and tests/cuda_c.rs fails on CI."
  say "  Install it with: python3 -m pip install '$NVRTC_WHEEL'   (or set FERROCUDA_NVRTC)"
fi

# Miri, for scripts/miri.sh: a pinned nightly (Miri exists only on nightlies), minimal profile.
MIRI_TOOLCHAIN="${FERROCUDA_MIRI_TOOLCHAIN:-nightly-2026-10-29}"
if [ -n "${CI:-}" ] && [ "${CI}" != "false" ] && [ "${CI}" != "0" ] || [ "${FERROCUDA_MIRI:-0}" = 1 ]; then
  if cargo "+$MIRI_TOOLCHAIN" miri --version >/dev/null 2>&1; then
    say "miri: $MIRI_TOOLCHAIN"
  elif command -v rustup >/dev/null && say "installing $MIRI_TOOLCHAIN with miri and rust-src" \
      && timeout 600 rustup toolchain install "$MIRI_TOOLCHAIN" --profile minimal --component miri,rust-src >/dev/null; then
    say "miri: $MIRI_TOOLCHAIN"
  else
    say "WARNING: could not install $MIRI_TOOLCHAIN with Miri: scripts/miri.sh will say skipped."
  fi
fi
