// ferrocuda's CUDA C version of convolve_2d (gpu-kernels/src/convolution.rs): a (2r + 1)² filter
// over row-major pixels of 1-3 interleaved channels, borders clamped, not flipped (a
// cross-correlation). Each 32 × 8 block stages its tile plus the halo, every channel, in shared
// memory in one coalesced pass, then each thread filters its pixel's channels with the weights
// in registers; radius and channels are template constants, dispatched once. convolve_2d_const
// reads the weights from constant memory instead (CONV_WEIGHTS, the table ferrocuda's
// convolve_2d_const reads, set by the host for each launch).

#define CONV_TILE_X 32
#define CONV_TILE_Y 8
#define CONV_MAX_RADIUS 2
#define CONV_MAX_CHANNELS 3
#define CONV_THREADS (CONV_TILE_X * CONV_TILE_Y)
#define CONV_SHARED \
    (CONV_MAX_CHANNELS * (CONV_TILE_X + 2 * CONV_MAX_RADIUS) * (CONV_TILE_Y + 2 * CONV_MAX_RADIUS))
#define CONV_MAX_TAPS ((2 * CONV_MAX_RADIUS + 1) * (2 * CONV_MAX_RADIUS + 1))

// The weights of convolve_2d_const, (2·radius + 1)² of them first, row-major.
__constant__ float CONV_WEIGHTS[CONV_MAX_TAPS];

// The weights from the slice (`weights`) or, with IN_CONSTANT, from CONV_WEIGHTS.
template <int R, int C, bool IN_CONSTANT>
__device__ __forceinline__ void filter_tile(const float* __restrict__ image,
                                            float* __restrict__ out,
                                            const float* __restrict__ weights, unsigned w,
                                            unsigned h, float* tile) {
    const unsigned pitch = (CONV_TILE_X + 2 * R) * C, tile_rows = CONV_TILE_Y + 2 * R;
    const int side = 2 * R + 1;
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned x0 = blockIdx.x * CONV_TILE_X, y0 = blockIdx.y * CONV_TILE_Y;
    for (unsigned i = ty * CONV_TILE_X + tx; i < tile_rows * pitch; i += CONV_THREADS) {
        unsigned row = i / pitch, in_row = i % pitch;
        unsigned column = in_row / C, channel = in_row % C;
        // (x0 + column) - R and (y0 + row) - R, clamped into the image.
        unsigned x = min(x0 + column > R ? x0 + column - R : 0, w - 1);
        unsigned y = min(y0 + row > R ? y0 + row - R : 0, h - 1);
        tile[i] = image[((u64)y * w + x) * C + channel];
    }
    __syncthreads();
    unsigned x = x0 + tx, y = y0 + ty;
    if (x < w && y < h) {
        float wt[side * side];
#pragma unroll
        for (int tap = 0; tap < side * side; ++tap)
            wt[tap] = IN_CONSTANT ? CONV_WEIGHTS[tap] : weights[tap];
#pragma unroll
        for (int channel = 0; channel < C; ++channel) {
            float sum = 0.0f;
#pragma unroll
            for (int dy = 0; dy < side; ++dy)
#pragma unroll
                for (int dx = 0; dx < side; ++dx)
                    sum = fmaf(wt[dy * side + dx], tile[(ty + dy) * pitch + (tx + dx) * C + channel],
                               sum);
            out[((u64)y * w + x) * C + channel] = sum;
        }
    }
}

// filter_tile for `radius` and `channels` (0 to 2, 1 to 3: else a trap).
template <bool IN_CONSTANT>
__device__ __forceinline__ void filter_block(const float* __restrict__ image,
                                             float* __restrict__ out,
                                             const float* __restrict__ weights, unsigned w,
                                             unsigned h, unsigned channels, unsigned radius) {
    __shared__ float tile[CONV_SHARED];
    REQUIRE(blockDim.x == CONV_TILE_X && blockDim.y == CONV_TILE_Y && blockDim.z == 1);
    switch (radius * 4 + channels) {
#define CONV_CASE(R, C) \
    case R * 4 + C: filter_tile<R, C, IN_CONSTANT>(image, out, weights, w, h, tile); break;
        CONV_CASE(0, 1) CONV_CASE(0, 2) CONV_CASE(0, 3)
        CONV_CASE(1, 1) CONV_CASE(1, 2) CONV_CASE(1, 3)
        CONV_CASE(2, 1) CONV_CASE(2, 2) CONV_CASE(2, 3)
#undef CONV_CASE
        default: __trap();
    }
}

// Blocks of (32, 8), a grid of (⌈width/32⌉, ⌈height/8⌉).
extern "C" __global__ void convolve_2d(const float* __restrict__ image, u64 image_len,
                                       float* __restrict__ out, u64 out_len,
                                       const float* __restrict__ weights, u64 weights_len,
                                       unsigned width, unsigned height, unsigned channels,
                                       unsigned radius) {
    REQUIRE(width >= 1 && height >= 1 && image_len == (u64)width * height * channels &&
            out_len == image_len);
    REQUIRE(radius <= CONV_MAX_RADIUS && weights_len == (u64)(2 * radius + 1) * (2 * radius + 1));
    filter_block<false>(image, out, weights, width, height, channels, radius);
}

// convolve_2d with the weights in CONV_WEIGHTS; the same launch shape.
extern "C" __global__ void convolve_2d_const(const float* __restrict__ image, u64 image_len,
                                             float* __restrict__ out, u64 out_len,
                                             unsigned width, unsigned height, unsigned channels,
                                             unsigned radius) {
    REQUIRE(width >= 1 && height >= 1 && image_len == (u64)width * height * channels &&
            out_len == image_len && radius <= CONV_MAX_RADIUS);
    filter_block<true>(image, out, nullptr, width, height, channels, radius);
}
