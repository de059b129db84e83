// The tensor-core matrix product, C (m × n, f32) = A (m × k) · B (k × n), f16 or bf16 inputs,
// all row-major, f32 accumulation: the twin of the library's `matmul_tc` (gpu-kernels-tc, its
// f16 and bf16 instances; same names and parameters), for the SASS comparison. The PTX-level
// instructions are inline PTX so that both sides use the same ones: `mma.sync`, `ldmatrix`,
// `cp.async`. (No tf32 twin yet.)
//
// A 64 × 64 tile of C per block of 128 threads (4 warps in 2 × 2, each a 32 × 32 sub-tile: 2 (m16)
// × 4 (n8) accumulators of m16n8k16), stages of depth 32 (two k16 steps), staged in shared memory
// by `cp.async.cg` (16 bytes a copy) into two buffers: the next stage's copies are in flight while
// the current one is multiplied. Shared rows are padded by 8 halves so that `ldmatrix` reads no
// bank twice. Ragged edges: a 16-byte group wholly outside the matrix is a `cp.async` of 0 source
// bytes (zeros), one partly outside (or a row not 16-byte aligned: k or n not a multiple of 8) is
// copied element by element with zeros beyond; stores of C are bounds-checked. Grid
// (⌈n/64⌉, ⌈m/64⌉), 128 threads in x. sm_80 and newer only (absent from older targets' PTX).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800

#define TC_BM 64
#define TC_BN 64
#define TC_BK 32
#define TC_THREADS 128
#define TC_A_PITCH (TC_BK + 8)
#define TC_B_PITCH (TC_BN + 8)

typedef unsigned short tc_half_bits;

__device__ __forceinline__ unsigned tc_shared_address(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

// 16 bytes from `global` to `shared`; `bytes` of them read (0: all 16 zero).
__device__ __forceinline__ void tc_copy_16(tc_half_bits* shared, const tc_half_bits* global,
                                           unsigned bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(tc_shared_address(shared)),
                 "l"(global), "r"(bytes)
                 : "memory");
}

// Eight elements of the row-major rows × cols matrix `src` from (row, col) to `dst`, zeros
// outside the matrix. With `whole` (cols a multiple of 8 and `src` 16-byte aligned: every piece
// is aligned) one copy (of 0 source bytes outside the matrix), else element by element.
__device__ __forceinline__ void tc_stage_8(tc_half_bits* dst, const tc_half_bits* src,
                                           unsigned row, unsigned col, unsigned rows,
                                           unsigned cols, bool whole) {
    bool inside = row < rows && col < cols;
    u64 start = (u64)row * cols + col;
    if (whole) {
        tc_copy_16(dst, inside ? src + start : src, inside ? 16 : 0);
    } else {
#pragma unroll
        for (unsigned e = 0; e < 8; ++e) dst[e] = inside && col + e < cols ? src[start + e] : 0;
    }
}

#define TC_MMA(type)                                                                        \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." type "." type                      \
                 ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                \
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])                     \
                 : "r"(fa[0]), "r"(fa[1]), "r"(fa[2]), "r"(fa[3]), "r"(fb[0]), "r"(fb[1]))

template <bool BF16>
__device__ __forceinline__ void tc_mma(float* acc, const unsigned* fa, const unsigned* fb) {
    if (BF16) {
        TC_MMA("bf16");
    } else {
        TC_MMA("f16");
    }
}

template <bool BF16>
__device__ __forceinline__ void matmul_tc(const tc_half_bits* __restrict__ a, u64 a_len,
                                          const tc_half_bits* __restrict__ b, u64 b_len,
                                          float* __restrict__ c, u64 c_len, unsigned m,
                                          unsigned n, unsigned k) {
    __shared__ __align__(16) tc_half_bits a_tiles[2][TC_BM][TC_A_PITCH];
    __shared__ __align__(16) tc_half_bits b_tiles[2][TC_BK][TC_B_PITCH];
    REQUIRE(blockDim.x == TC_THREADS && blockDim.y == 1 && blockDim.z == 1);
    REQUIRE(a_len >= (u64)m * k && b_len >= (u64)k * n && c_len >= (u64)m * n);
    unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
    unsigned row0 = blockIdx.y * TC_BM, col0 = blockIdx.x * TC_BN;
    unsigned wr = 32 * (warp / 2), wc = 32 * (warp % 2);

    // Whether every 8-element piece of a row is 16-byte aligned (block-uniform).
    bool a_whole = k % 8 == 0 && (u64)a % 16 == 0, b_whole = n % 8 == 0 && (u64)b % 16 == 0;
    // Each thread stages two 8-element groups of A (64 rows × 4) and two of B (32 rows × 8).
    auto stage = [&](unsigned buffer, unsigned k0) {
#pragma unroll
        for (unsigned q = 0; q < 2; ++q) {
            unsigned id = t + TC_THREADS * q;
            unsigned ar = id / 4, ac = 8 * (id % 4);
            tc_stage_8(&a_tiles[buffer][ar][ac], a, row0 + ar, k0 + ac, m, k, a_whole);
            unsigned br = id / 8, bc = 8 * (id % 8);
            tc_stage_8(&b_tiles[buffer][br][bc], b, k0 + br, col0 + bc, k, n, b_whole);
        }
    };

    float acc[2][4][4];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

    unsigned steps = (k + TC_BK - 1) / TC_BK;
    stage(0, 0);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    for (unsigned s = 0; s < steps; ++s) {
        if (s + 1 < steps) stage((s + 1) % 2, (s + 1) * TC_BK);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        asm volatile("cp.async.wait_group 1;\n" ::: "memory");
        __syncthreads();
        unsigned buffer = s % 2;
#pragma unroll
        for (unsigned kk = 0; kk < TC_BK; kk += 16) {
            unsigned fa[2][4], fb[4][2];
            // A: lane l gives row l % 16, columns 8·(l / 16): the four 8 × 8 quarters in the order
            // of A's registers.
#pragma unroll
            for (unsigned i = 0; i < 2; ++i) {
                const tc_half_bits* p = &a_tiles[buffer][wr + 16 * i + lane % 16][kk + 8 * (lane / 16)];
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                             : "=r"(fa[i][0]), "=r"(fa[i][1]), "=r"(fa[i][2]), "=r"(fa[i][3])
                             : "r"(tc_shared_address(p)));
            }
            // B (k × n, row-major): lanes 0..16 give rows kk..kk+16; `.trans` hands each lane
            // the k-pairs of its column, B's fragment layout.
#pragma unroll
            for (unsigned j = 0; j < 4; ++j) {
                const tc_half_bits* p = &b_tiles[buffer][kk + lane % 16][wc + 8 * j];
                asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                             : "=r"(fb[j][0]), "=r"(fb[j][1])
                             : "r"(tc_shared_address(p)));
            }
#pragma unroll
            for (unsigned i = 0; i < 2; ++i)
#pragma unroll
                for (unsigned j = 0; j < 4; ++j) tc_mma<BF16>(acc[i][j], fa[i], fb[j]);
        }
        // Every warp is done with `buffer` before the next stage's copies overwrite it.
        __syncthreads();
    }

    // Accumulator element e of lane (g, t) is at row g + 8·(e / 2), column 2t + e % 2.
    unsigned g = lane / 4, tq = lane % 4;
#pragma unroll
    for (unsigned i = 0; i < 2; ++i)
#pragma unroll
        for (unsigned j = 0; j < 4; ++j)
#pragma unroll
            for (unsigned e = 0; e < 4; ++e) {
                unsigned row = row0 + wr + 16 * i + g + 8 * (e / 2);
                unsigned col = col0 + wc + 8 * j + 2 * tq + e % 2;
                if (row < m && col < n) c[(u64)row * n + col] = acc[i][j][e];
            }
}

extern "C" __global__ void __launch_bounds__(TC_THREADS)
    matmul_tc_f16(const tc_half_bits* __restrict__ a, u64 a_len,
                      const tc_half_bits* __restrict__ b, u64 b_len, float* __restrict__ c,
                      u64 c_len, unsigned m, unsigned n, unsigned k) {
    matmul_tc<false>(a, a_len, b, b_len, c, c_len, m, n, k);
}

extern "C" __global__ void __launch_bounds__(TC_THREADS)
    matmul_tc_bf16(const tc_half_bits* __restrict__ a, u64 a_len,
                       const tc_half_bits* __restrict__ b, u64 b_len, float* __restrict__ c,
                       u64 c_len, unsigned m, unsigned n, unsigned k) {
    matmul_tc<true>(a, a_len, b, b_len, c, c_len, m, n, k);
}

#endif
