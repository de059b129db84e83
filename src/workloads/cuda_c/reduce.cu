// ferrocuda's CUDA C versions of the reduction kernels (gpu-kernels/src/reduce.rs): one partial
// sum per block, grid-stride, then a block reduction through warp shuffles and one shared float
// per warp. Parameters as ferrocuda passes them: a slice is (pointer, 64-bit length).

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// The sum of `v` over the block (valid in thread 0); any block size up to 1024.
__device__ __forceinline__ float block_sum(float v) {
    __shared__ float per_warp[32];
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) per_warp[warp] = v;
    __syncthreads();
    unsigned warps = (blockDim.x + 31) >> 5;
    v = threadIdx.x < warps ? per_warp[threadIdx.x] : 0.0f;
    if (warp == 0) v = warp_sum(v);
    return v;
}

// partial[block] = sum of a[i]*b[i] over this block's grid-stride elements.
extern "C" __global__ void dot_partial(const float* __restrict__ a, unsigned long long a_len,
                                       const float* __restrict__ b, unsigned long long b_len,
                                       float* __restrict__ partial, unsigned long long partial_len) {
    float sum = 0.0f;
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < a_len; i += stride)
        sum += a[i] * b[i];
    sum = block_sum(sum);
    if (threadIdx.x == 0 && blockIdx.x < partial_len) partial[blockIdx.x] = sum;
}

// partial[block] = sum of x[i] over this block's grid-stride elements.
extern "C" __global__ void sum_partial(const float* __restrict__ x, unsigned long long x_len,
                                       float* __restrict__ partial, unsigned long long partial_len) {
    float sum = 0.0f;
    unsigned long long stride = (unsigned long long)blockDim.x * gridDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < x_len; i += stride)
        sum += x[i];
    sum = block_sum(sum);
    if (threadIdx.x == 0 && blockIdx.x < partial_len) partial[blockIdx.x] = sum;
}
