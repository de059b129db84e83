// ferrocuda's CUDA C versions of the matrix products (gpu-kernels/src/matmul.rs): C = A·B,
// row-major f32, A m × k, B k × n. The same three kernels, tiles and launch shapes; one fused
// multiply-add per product in the tiled and blocked ones, as in ours.

// One thread per element of C, A and B from global memory; a 2D grid over n (x) and m (y).
extern "C" __global__ void matmul_naive(const float* __restrict__ a, u64 a_len,
                                        const float* __restrict__ b, u64 b_len,
                                        float* __restrict__ c, u64 c_len,
                                        unsigned m, unsigned n, unsigned k) {
    u64 col = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 row = (u64)blockIdx.y * blockDim.y + threadIdx.y;
    if (row < m && col < n) {
        REQUIRE(a_len >= (u64)m * k && b_len >= (u64)k * n && c_len >= (u64)m * n);
        float acc = 0.0f;
        for (u64 j = 0; j < k; ++j) acc += a[row * k + j] * b[j * n + col];
        c[row * n + col] = acc;
    }
}

#define TILE 16

// 16 × 16 tiles of A and B staged in shared memory per step of k, zero-padded at the edges.
// Blocks of (16, 16), a grid of (⌈n/16⌉, ⌈m/16⌉).
extern "C" __global__ void matmul_tiled(const float* __restrict__ a, u64 a_len,
                                        const float* __restrict__ b, u64 b_len,
                                        float* __restrict__ c, u64 c_len,
                                        unsigned m, unsigned n, unsigned k) {
    __shared__ float a_tile[TILE * TILE], b_tile[TILE * TILE];
    REQUIRE(blockDim.x == TILE && blockDim.y == TILE && blockDim.z == 1);
    REQUIRE(a_len >= (u64)m * k && b_len >= (u64)k * n);
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    u64 row = (u64)blockIdx.y * TILE + ty, col = (u64)blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (u64 step = 0; step < (k + TILE - 1) / TILE; ++step) {
        u64 a_col = step * TILE + tx, b_row = step * TILE + ty;
        a_tile[ty * TILE + tx] = row < m && a_col < k ? a[row * k + a_col] : 0.0f;
        b_tile[ty * TILE + tx] = b_row < k && col < n ? b[b_row * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int j = 0; j < TILE; ++j) acc = fmaf(a_tile[ty * TILE + j], b_tile[j * TILE + tx], acc);
        __syncthreads();
    }
    if (row < m && col < n) {
        REQUIRE(c_len >= (u64)m * n);
        c[row * n + col] = acc;
    }
}

#define BLOCKED_M 128
#define BLOCKED_N 128
#define BLOCKED_K 8
#define BLOCKED_THREADS 256
// Quads per k-row of the transposed A tile: 32 plus one of padding against bank conflicts.
#define A_PITCH (BLOCKED_M / 4 + 1)
#define A_TILE (BLOCKED_K * A_PITCH)
#define B_TILE (BLOCKED_K * BLOCKED_N / 4)
// Quads between a thread's two 4-wide halves of rows (columns): half a block tile.
#define HALF (BLOCKED_N / 8)

// A 128 × 128 tile of C per block of 256 threads, 8 × 8 per thread in registers (rows
// 4·ty..+4 and 64 + 4·ty..+4, columns likewise), from double-buffered 128 × 8 (transposed,
// padded) and 8 × 128 tiles of A and B in shared memory, 128-bit shared loads, one barrier per
// step of 8. Blocks of 256 threads in x, a grid of (⌈n/128⌉, ⌈m/128⌉).
extern "C" __global__ void __launch_bounds__(BLOCKED_THREADS)
    matmul_blocked(const float* __restrict__ a, u64 a_len, const float* __restrict__ b,
                   u64 b_len, float* __restrict__ c, u64 c_len, unsigned m, unsigned n,
                   unsigned k) {
    __shared__ float4 a_tiles[2 * A_TILE];
    __shared__ float4 b_tiles[2 * B_TILE];
    REQUIRE(blockDim.x == BLOCKED_THREADS && blockDim.y == 1 && blockDim.z == 1);
    REQUIRE(a_len >= (u64)m * k && b_len >= (u64)k * n && c_len >= (u64)m * n);
    unsigned t = threadIdx.x;
    unsigned row0 = blockIdx.y * BLOCKED_M, col0 = blockIdx.x * BLOCKED_N;
    // This thread's share of each tile: rows 4·a_quad..+4 of column a_k of A, columns
    // 4·b_quad..+4 of row b_k of B; and how many of those 4 lie inside the matrix.
    unsigned a_k = t % BLOCKED_K, a_quad = t / BLOCKED_K;
    unsigned b_k = t / (BLOCKED_N / 4), b_quad = t % (BLOCKED_N / 4);
    u64 a_start = (u64)(row0 + 4 * a_quad) * k + a_k;
    unsigned a_first = row0 + 4 * a_quad, b_first = col0 + 4 * b_quad;
    unsigned a_rows = m > a_first ? min(m - a_first, 4u) : 0;
    u64 b_start = (u64)b_k * n + b_first;
    unsigned b_cols = n > b_first ? min(n - b_first, 4u) : 0;

    float4 from_a, from_b;
    auto load = [&](unsigned step) {
        u64 k0 = (u64)step * BLOCKED_K;
        float va[4] = {0.0f, 0.0f, 0.0f, 0.0f}, vb[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (unsigned j = 0; j < 4; ++j) {
            if (j < a_rows && k0 + a_k < k) va[j] = a[a_start + j * (u64)k + k0];
            if (j < b_cols && k0 + b_k < k) vb[j] = b[b_start + k0 * n + j];
        }
        from_a = make_float4(va[0], va[1], va[2], va[3]);
        from_b = make_float4(vb[0], vb[1], vb[2], vb[3]);
    };
    auto store = [&](unsigned buffer) {
        a_tiles[buffer * A_TILE + a_k * A_PITCH + a_quad] = from_a;
        b_tiles[buffer * B_TILE + b_k * (BLOCKED_N / 4) + b_quad] = from_b;
    };

    unsigned tx = t % 16, ty = t / 16;
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
    unsigned steps = (k + BLOCKED_K - 1) / BLOCKED_K;
    load(0);
    store(0);
    __syncthreads();
    for (unsigned step = 0; step < steps; ++step) {
        unsigned buffer = step % 2;
        // The next tiles go into the buffer not read in this step; the barrier at the end of
        // the last step ended its reads.
        if (step + 1 < steps) {
            load(step + 1);
            store(1 - buffer);
        }
#pragma unroll
        for (unsigned kk = 0; kk < BLOCKED_K; ++kk) {
            unsigned a_at = buffer * A_TILE + kk * A_PITCH + ty;
            unsigned b_at = buffer * B_TILE + kk * (BLOCKED_N / 4) + tx;
            float4 a0 = a_tiles[a_at], a1 = a_tiles[a_at + HALF];
            float4 b0 = b_tiles[b_at], b1 = b_tiles[b_at + HALF];
            float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        __syncthreads();
    }
    // acc[i][j] is C's element (top + r(i), left + r(j)), r(i) = 64·(i/4) + i%4.
    unsigned top = row0 + 4 * ty, left = col0 + 4 * tx;
    unsigned rows = m > top ? m - top : 0, cols = n > left ? n - left : 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        unsigned r = (i / 4) * (BLOCKED_M / 2) + i % 4;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            unsigned q = (j / 4) * (BLOCKED_N / 2) + j % 4;
            if (r < rows && q < cols) c[(u64)(top + r) * n + left + q] = acc[i][j];
        }
    }
}
