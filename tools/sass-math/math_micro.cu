// One math function per kernel, out[i] = f(x[i]), to size each function's SASS: subtract the
// m_identity harness. CUDA's accurate functions (no fast math); the Rust side is
// rust_math/src/lib.rs. The *_reproducible kernels pair ferrocuda-std's reproducible tier with
// the same CUDA functions.

#define MICRO_OF(T, name, expr)                                                             \
    extern "C" __global__ void name(const T* __restrict__ x, T* __restrict__ out, int n) {  \
        int i = blockIdx.x * blockDim.x + threadIdx.x;                                      \
        if (i < n) {                                                                        \
            T v = x[i];                                                                     \
            out[i] = (expr);                                                                \
        }                                                                                   \
    }
#define MICRO(name, expr) MICRO_OF(float, name, expr)
// ferrocuda-std's f64 default tier against CUDA's double functions.
#define MICRO64(name, expr) MICRO_OF(double, name, expr)

MICRO(m_identity, v)
MICRO(m_exp, expf(v))
MICRO(m_exp2, exp2f(v))
MICRO(m_ln, logf(v))
MICRO(m_log2, log2f(v))
MICRO(m_sqrt, sqrtf(v))
MICRO(m_div, 1.5f / v)
MICRO(m_erfc, erfcf(v))
MICRO(m_normal_cdf, normcdff(v))
MICRO(m_sin, sinf(v))
MICRO(m_cos, cosf(v))
MICRO(m_pow, powf(v, v + 0.5f))
MICRO(m_exp_reproducible, expf(v))
MICRO(m_ln_reproducible, logf(v))
MICRO(m_erfc_reproducible, erfcf(v))
MICRO(m_normal_cdf_reproducible, normcdff(v))
MICRO64(m_exp_f64, exp(v))
MICRO64(m_exp2_f64, exp2(v))
MICRO64(m_ln_f64, log(v))
MICRO64(m_log2_f64, log2(v))
MICRO64(m_sqrt_f64, sqrt(v))
MICRO64(m_sin_f64, sin(v))
MICRO64(m_cos_f64, cos(v))
MICRO64(m_pow_f64, pow(v, v + 0.5))
MICRO64(m_erfc_f64, erfc(v))
MICRO64(m_normal_cdf_f64, normcdf(v))
