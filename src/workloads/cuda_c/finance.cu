// ferrocuda's CUDA C version of black_scholes (gpu-kernels/src/finance.rs): the same formula,
// with CUDA's accurate expf, logf, sqrtf, normcdff and IEEE division (no fast math), grid-stride.
// Parameters as ferrocuda passes them: a slice is (pointer, 64-bit length).

__device__ __forceinline__ void cdf_and_complement(float d, float& cdf, float& complement) {
    float tail = normcdff(-fabsf(d));
    float body = 1.0f - tail;
    cdf = d > 0.0f ? body : tail;
    complement = d > 0.0f ? tail : body;
}

extern "C" __global__ void black_scholes(
    const float* __restrict__ spot, unsigned long long spot_len,
    const float* __restrict__ strike, unsigned long long strike_len,
    const float* __restrict__ years, unsigned long long years_len, float rate, float volatility,
    float* __restrict__ call, unsigned long long call_len,
    float* __restrict__ put, unsigned long long put_len) {
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < call_len; i += stride) {
        float s = spot[i], k = strike[i], t = years[i];
        float c, p;
        if (!(s > 0.0f && k > 0.0f && t >= 0.0f)) {
            c = p = __int_as_float(0x7fc00000);  // NaN: inputs outside the model
        } else {
            float discounted = k * expf(-rate * t);
            float vol_sqrt_t = volatility * sqrtf(t);
            if (vol_sqrt_t == 0.0f) {
                c = fmaxf(s - discounted, 0.0f);
                p = fmaxf(discounted - s, 0.0f);
            } else {
                float d1 = (logf(s / k) + (rate + 0.5f * volatility * volatility) * t) / vol_sqrt_t;
                float d2 = d1 - vol_sqrt_t;
                float n1, m1, n2, m2;
                cdf_and_complement(d1, n1, m1);
                cdf_and_complement(d2, n2, m2);
                c = fmaxf(s * n1 - discounted * n2, 0.0f);
                p = fmaxf(discounted * m2 - s * m1, 0.0f);
            }
        }
        call[i] = c;
        put[i] = p;
    }
}
