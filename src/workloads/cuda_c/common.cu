// What every CUDA C kernel of ferrocuda's "CUDA C" column shares: its preconditions and the warp
// and block sums. This file comes first in the one NVRTC program (see ../cuda_c.rs). Parameters
// are ferrocuda's: a slice or an output is (pointer, 64-bit length), in the Rust kernel's order.

typedef unsigned long long u64;

// What the Rust kernel asserts (and so traps on), this one checks the same way: a launch that
// passes ferrocuda's host checks never traps, and one that does not cannot touch memory out of
// range.
#define REQUIRE(condition) \
    do {                   \
        if (!(condition)) __trap(); \
    } while (0)

// The index of a 1D grid-stride loop, and its step (64-bit, as the Rust kernels' `usize`).
__device__ __forceinline__ u64 global_index() {
    return (u64)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ u64 grid_threads() { return (u64)blockDim.x * gridDim.x; }

// The lanes of this thread's warp that exist (the last warp of a block of 100 threads has 4),
// as a shuffle mask and a count: shuffles name only those.
__device__ __forceinline__ unsigned lanes_in_warp() {
    unsigned threads = blockDim.x * blockDim.y * blockDim.z;
    unsigned linear = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    return min(32u, threads - (linear & ~31u));
}
__device__ __forceinline__ unsigned mask_of(unsigned lanes) {
    return lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
}

// The sum of `v` over the lanes of the warp that exist, valid in lane 0 (a shuffle tree).
template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
    unsigned lanes = lanes_in_warp(), mask = mask_of(lanes), lane = threadIdx.x & 31;
    for (unsigned offset = 16; offset > 0; offset >>= 1) {
        T other = __shfl_down_sync(mask, v, offset);
        if (lane + offset < lanes) v += other;
    }
    return v;
}

// The sum of `v` over a 1D block (any size up to 1024), valid in thread 0; `scratch` holds one
// value per warp. Every thread of the block calls it.
template <typename T>
__device__ __forceinline__ T block_sum(T v, T* scratch) {
    unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    T total = T(0);
    if (warp == 0) {
        unsigned warps = (blockDim.x + 31) >> 5;
        total = warp_sum(lane < warps ? scratch[lane] : T(0));
    }
    return total;
}
