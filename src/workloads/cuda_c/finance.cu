// ferrocuda's CUDA C version of black_scholes (gpu-kernels/src/finance.rs): the same formula,
// with CUDA's accurate expf, logf, sqrtf, normcdff and IEEE division (no fast math), grid-stride.
// The streamed Black-Scholes row runs this kernel too, chunk by chunk.

__device__ __forceinline__ void cdf_and_complement(float d, float& cdf, float& complement) {
    float tail = normcdff(-fabsf(d));
    float body = 1.0f - tail;
    cdf = d > 0.0f ? body : tail;
    complement = d > 0.0f ? tail : body;
}

extern "C" __global__ void black_scholes(
    const float* __restrict__ spot, u64 spot_len,
    const float* __restrict__ strike, u64 strike_len,
    const float* __restrict__ years, u64 years_len, float rate, float volatility,
    float* __restrict__ call, u64 call_len,
    float* __restrict__ put, u64 put_len) {
    REQUIRE(spot_len == call_len && strike_len == call_len && years_len == call_len &&
            put_len == call_len);
    for (u64 i = global_index(); i < call_len; i += grid_threads()) {
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
