#!/usr/bin/env python3
"""The shared SASS comparison (../../../shared/sass/compare_sass.py, or $SASS_DIR) with this
project's math micro-kernels: rust_math/ (both tiers of ferrocuda-std's math) and math_micro.cu
(CUDA's functions) replace the shared ones; every other kernel comes from the shared folder.

    eval "$(../shared/sass/setup.sh)"
    python3 tools/sass-math/compare.py target/release/build/*/out/kernel-target/ferrocuda_kernels.ptx --project .

Takes compare_sass.py's options. Nothing in the shared folder is changed.
"""
import glob
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("SASS_DIR", os.path.join(HERE, "..", "..", "..", "shared", "sass"))
sys.path.insert(0, SHARED)
import compare_sass  # noqa: E402

kernels = tempfile.mkdtemp(prefix="sass_math_kernels_")
for cu in glob.glob(os.path.join(SHARED, "kernels", "*.cu")):
    if os.path.basename(cu) != "math_micro.cu":
        shutil.copy(cu, kernels)
shutil.copy(os.path.join(HERE, "math_micro.cu"), kernels)
compare_sass.KERNEL_DIR = kernels
compare_sass.HERE = HERE
compare_sass.MATH_FUNCS = [
    "m_exp", "m_exp2", "m_ln", "m_log2", "m_sqrt", "m_div", "m_erfc", "m_normal_cdf", "m_sin", "m_cos", "m_pow",
    "m_exp_reproducible", "m_ln_reproducible", "m_erfc_reproducible",
    "m_normal_cdf_reproducible",
    "m_exp_f64", "m_exp2_f64", "m_ln_f64", "m_log2_f64", "m_sqrt_f64", "m_sin_f64", "m_cos_f64", "m_pow_f64",
    "m_erfc_f64", "m_normal_cdf_f64",
]
try:
    compare_sass.main()
finally:
    shutil.rmtree(kernels, ignore_errors=True)
