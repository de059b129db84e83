// ferrocuda's CUDA C versions of the reduction kernels (gpu-kernels/src/reduce.rs): one partial
// sum per block, grid-stride, then a block reduction through warp shuffles and one shared float
// per warp (common.cu's block_sum).

// partial[block] = sum of a[i]*b[i] over this block's grid-stride elements.
extern "C" __global__ void dot_partial(const float* __restrict__ a, u64 a_len,
                                       const float* __restrict__ b, u64 b_len,
                                       float* __restrict__ partial, u64 partial_len) {
    __shared__ float per_warp[32];
    REQUIRE(b_len == a_len);
    float sum = 0.0f;
    for (u64 i = global_index(); i < a_len; i += grid_threads()) sum = fmaf(a[i], b[i], sum);
    sum = block_sum(sum, per_warp);
    if (threadIdx.x == 0) {
        REQUIRE(blockIdx.x < partial_len);
        partial[blockIdx.x] = sum;
    }
}

// partial[block] = sum of x[i] over this block's grid-stride elements.
extern "C" __global__ void sum_partial(const float* __restrict__ x, u64 x_len,
                                       float* __restrict__ partial, u64 partial_len) {
    __shared__ float per_warp[32];
    float sum = 0.0f;
    for (u64 i = global_index(); i < x_len; i += grid_threads()) sum += x[i];
    sum = block_sum(sum, per_warp);
    if (threadIdx.x == 0) {
        REQUIRE(blockIdx.x < partial_len);
        partial[blockIdx.x] = sum;
    }
}
