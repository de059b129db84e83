// ferrocuda's CUDA C versions of the statistics kernels (gpu-kernels/src/statistics.rs): per
// thread Welford's update in f64 (count, mean, M2) and f32 min and max over a grid-stride loop;
// Chan et al.'s merge over the warp (a shuffle tree over the lanes that exist), then over the
// block's warps (one state per warp in shared memory); thread 0 writes 5 doubles per block.

#define STATE_LEN 5

struct Moments {
    double count, mean, m2;
    float min, max;
};

__device__ __forceinline__ Moments empty_moments() {
    return Moments{0.0, 0.0, 0.0, __int_as_float(0x7f800000), __int_as_float(0xff800000)};
}

// The mean after moving by `step` toward `toward`; once infinite, what Σx/n gives.
__device__ __forceinline__ double moved_mean(double mean, double step, double toward) {
    return isinf(mean) ? mean + toward : mean + step;
}

__device__ __forceinline__ void push(Moments& s, float x) {
    double value = x;
    s.count += 1.0;
    double delta = value - s.mean;
    s.mean = moved_mean(s.mean, delta / s.count, value);
    s.m2 += delta * (value - s.mean);
    if (x < s.min) s.min = x;
    if (x > s.max) s.max = x;
}

__device__ __forceinline__ Moments merge(Moments a, Moments b) {
    if (b.count == 0.0) return a;
    if (a.count == 0.0) return b;
    Moments r;
    r.count = a.count + b.count;
    double delta = b.mean - a.mean;
    r.mean = moved_mean(a.mean, delta * (b.count / r.count), b.mean);
    r.m2 = a.m2 + b.m2 + delta * delta * (a.count * (b.count / r.count));
    r.min = b.min < a.min ? b.min : a.min;
    r.max = b.max > a.max ? b.max : a.max;
    return r;
}

__device__ __forceinline__ Moments warp_merge(Moments s) {
    unsigned lanes = lanes_in_warp(), mask = mask_of(lanes), lane = threadIdx.x & 31;
    for (unsigned offset = 16; offset > 0; offset >>= 1) {
        Moments o;
        o.count = __shfl_down_sync(mask, s.count, offset);
        o.mean = __shfl_down_sync(mask, s.mean, offset);
        o.m2 = __shfl_down_sync(mask, s.m2, offset);
        o.min = __shfl_down_sync(mask, s.min, offset);
        o.max = __shfl_down_sync(mask, s.max, offset);
        if (lane + offset < lanes) s = merge(s, o);
    }
    return s;
}

// The merge of `state` over the (1D) block, stored by thread 0 at out[STATE_LEN·block ..].
__device__ __forceinline__ void store_block_merge(Moments state, double* out, u64 out_len) {
    __shared__ double s_count[32], s_mean[32], s_m2[32];
    __shared__ float s_min[32], s_max[32];
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    Moments w = warp_merge(state);
    if (lane == 0) {
        s_count[warp] = w.count;
        s_mean[warp] = w.mean;
        s_m2[warp] = w.m2;
        s_min[warp] = w.min;
        s_max[warp] = w.max;
    }
    __syncthreads();
    if (warp != 0) return;
    Moments p = empty_moments();
    if (lane < (blockDim.x + 31) >> 5)
        p = Moments{s_count[lane], s_mean[lane], s_m2[lane], s_min[lane], s_max[lane]};
    Moments total = warp_merge(p);
    if (threadIdx.x == 0) {
        u64 at = (u64)STATE_LEN * blockIdx.x;
        REQUIRE(at + STATE_LEN <= out_len);
        out[at] = total.count;
        out[at + 1] = total.mean;
        out[at + 2] = total.m2;
        out[at + 3] = total.min;
        out[at + 4] = total.max;
    }
}

// partial[5·block ..] = the moments of the elements of x this block visits (grid-stride).
extern "C" __global__ void statistics_partial(const float* __restrict__ x, u64 x_len,
                                              double* __restrict__ partial, u64 partial_len) {
    Moments state = empty_moments();
    for (u64 i = global_index(); i < x_len; i += grid_threads()) push(state, x[i]);
    store_block_merge(state, partial, partial_len);
}

// out[5·block ..] = the merge of the states of partial this block visits (grid-stride over
// states): with one block, the merge of all of them.
extern "C" __global__ void statistics_merge(const double* __restrict__ partial, u64 partial_len,
                                            double* __restrict__ out, u64 out_len) {
    Moments state = empty_moments();
    for (u64 i = global_index(); i < partial_len / STATE_LEN; i += grid_threads()) {
        const double* p = partial + STATE_LEN * i;
        state = merge(state, Moments{p[0], p[1], p[2], (float)p[3], (float)p[4]});
    }
    store_block_merge(state, out, out_len);
}
