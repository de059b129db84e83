// ferrocuda's CUDA C versions of the Monte Carlo kernels (gpu-kernels/src/monte_carlo.rs), with
// the same counter-based generator (Philox4x32-10, ferrocuda_std::random), so they draw the very
// same samples: π from points of the unit square, a European option under geometric Brownian
// motion. Grid-stride over Philox blocks; one block sum per kernel and block.

#define PI_STREAM 0x7069ull              // "pi"
#define OPTION_STREAM 0x6f7074696f6eull  // "option"
#define OPTION_SUMS 4

// Philox4x32-10 of counter (index, stream) under key (seed low, seed high).
__device__ __forceinline__ uint4 philox_block(u64 seed, u64 index, u64 stream) {
    unsigned k0 = (unsigned)seed, k1 = (unsigned)(seed >> 32);
    unsigned c0 = (unsigned)index, c1 = (unsigned)(index >> 32);
    unsigned c2 = (unsigned)stream, c3 = (unsigned)(stream >> 32);
#pragma unroll
    for (int round = 0; round < 10; ++round) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        unsigned hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
        unsigned hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
        unsigned n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
    }
    return make_uint4(c0, c1, c2, c3);
}

// Whether the centre of cell (X, Y) of a 2^24 × 2^24 grid of the unit square, X and Y the top
// 24 bits of the words, lies in the quarter disk: exact in integers.
__device__ __forceinline__ bool in_quarter_disk(unsigned word_x, unsigned word_y) {
    u64 x = 2 * (u64)(word_x >> 8) + 1, y = 2 * (u64)(word_y >> 8) + 1;
    return x * x + y * y <= (1ull << 50);
}

// hits[0] += the samples (of `samples` points) in the quarter disk; points 2i and 2i + 1 from
// Philox block i.
extern "C" __global__ void monte_carlo_pi(u64 samples, u64 seed, u64* hits, u64 hits_len) {
    __shared__ u64 scratch[32];
    u64 count = 0;
    for (u64 i = global_index(); i < (samples + 1) / 2; i += grid_threads()) {
        uint4 r = philox_block(seed, i, PI_STREAM);
        count += in_quarter_disk(r.x, r.y);
        if (2 * i + 1 < samples) count += in_quarter_disk(r.z, r.w);
    }
    u64 total = block_sum(count, scratch);
    if (threadIdx.x == 0 && total != 0) {
        REQUIRE(hits_len >= 1);
        atomicAdd(&hits[0], total);
    }
}

// Two standard normal values from two words (Box-Muller), as ferrocuda_std::random::normal_pair.
__device__ __forceinline__ float2 normal_pair(unsigned word0, unsigned word1) {
    float v = fmaf((float)word0, 2.3283064e-10f, 1.1641532e-10f);  // in (0, 1]
    float r = sqrtf(-2.0f * logf(v));
    float s, c;
    sincospif((float)(word1 >> 8) * (2.0f * 5.9604645e-8f), &s, &c);
    return make_float2(r * c, r * s);
}

// A running f32 sum with Kahan's compensation.
struct CompensatedSum {
    float sum = 0.0f, carry = 0.0f;
    __device__ __forceinline__ void add(float x) {
        float y = x - carry, t = sum + y;
        carry = (t - sum) - y;
        sum = t;
    }
    __device__ __forceinline__ double value() const { return (double)sum - (double)carry; }
};

// partial[4·block ..] = Σ call payoff, Σ call payoff², Σ put payoff, Σ put payoff² of this
// block's samples of S_T = spot·exp(drift + vol_sqrt_t·Z); samples 4i..4i + 4 from Philox block i.
extern "C" __global__ void monte_carlo_option(u64 samples, u64 seed, float spot, float strike,
                                              float drift, float vol_sqrt_t, double* partial,
                                              u64 partial_len) {
    __shared__ double scratch[OPTION_SUMS][32];
    REQUIRE(partial_len >= (u64)OPTION_SUMS * gridDim.x);
    CompensatedSum call_sum, call_squares, put_sum, put_squares;
    auto add_sample = [&](float z) {
        float price = spot * expf(fmaf(vol_sqrt_t, z, drift));
        float call = fmaxf(price - strike, 0.0f), put = fmaxf(strike - price, 0.0f);
        call_sum.add(call);
        call_squares.add(call * call);
        put_sum.add(put);
        put_squares.add(put * put);
    };
    for (u64 i = global_index(); i < (samples + 3) / 4; i += grid_threads()) {
        uint4 r = philox_block(seed, i, OPTION_STREAM);
        float2 z01 = normal_pair(r.x, r.y), z23 = normal_pair(r.z, r.w);
        add_sample(z01.x);
        if (4 * i + 1 < samples) add_sample(z01.y);
        if (4 * i + 2 < samples) add_sample(z23.x);
        if (4 * i + 3 < samples) add_sample(z23.y);
    }
    double totals[OPTION_SUMS] = {
        block_sum(call_sum.value(), scratch[0]), block_sum(call_squares.value(), scratch[1]),
        block_sum(put_sum.value(), scratch[2]), block_sum(put_squares.value(), scratch[3])};
    if (threadIdx.x == 0)
        for (int s = 0; s < OPTION_SUMS; ++s) partial[OPTION_SUMS * blockIdx.x + s] = totals[s];
}
