// The tensor-core matrix product, C (m × n, f32) = A (m × k) · B (k × n), f16, bf16 or f32 (as
// tf32) inputs, all row-major, f32 accumulation: the twin of the library's `matmul_tc`
// (gpu-kernels-tc; same names and parameters), for the SASS comparison. The PTX-level
// instructions are inline PTX so that both sides use the same ones: `mma.sync`, `ldmatrix`,
// `cp.async`.
//
// A 64 × 64 tile of C per block of 128 threads (4 warps in 2 × 2, each a 32 × 32 sub-tile: 2 (m16)
// × 4 (n8) accumulators), stages of BK elements of K staged in shared memory by `cp.async.cg` (16
// bytes a copy, two of A and two of B per thread) into two buffers: the next stage's copies are in
// flight while the current one is multiplied. Ragged edges: a 16-byte group wholly outside the
// matrix is a `cp.async` of 0 source bytes (zeros), one partly outside (or a row not 16-byte
// aligned) is copied element by element with zeros beyond; stores of C are bounds-checked. Grid
// (⌈n/64⌉, ⌈m/64⌉), 128 threads in x. sm_80 and newer only (absent from older targets' PTX).
//
// f16 and bf16: BK 32 (two m16n8k16 steps), rows padded by 8 halves so that `ldmatrix` reads no
// bank twice. f32 (tf32: the tensor cores read the 10 high fraction bits): BK 16 (two m16n8k8
// steps), A's rows padded by 4 floats and B's by 8 (32 different banks per fragment load),
// fragments loaded element by element (`ldmatrix` moves 16-bit elements).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800

#define TC_BM 64
#define TC_BN 64
#define TC_THREADS 128

typedef unsigned short tc_half_bits;

__device__ __forceinline__ unsigned tc_shared_address(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

// 16 bytes from `global` to `shared`; `bytes` of them read (0: all 16 zero).
__device__ __forceinline__ void tc_copy_16(void* shared, const void* global, unsigned bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(tc_shared_address(shared)),
                 "l"(global), "r"(bytes)
                 : "memory");
}

// 16 bytes of elements of the row-major rows × cols matrix `src` from (row, col) to `dst`, zeros
// outside the matrix. With `whole` (cols a multiple of the piece and `src` 16-byte aligned: every
// piece is aligned) one copy (of 0 source bytes outside the matrix), else element by element.
template <typename T>
__device__ __forceinline__ void tc_stage_piece(T* dst, const T* src, unsigned row, unsigned col,
                                               unsigned rows, unsigned cols, bool whole) {
    const unsigned per = 16 / sizeof(T);
    bool inside = row < rows && col < cols;
    u64 start = (u64)row * cols + col;
    if (whole) {
        tc_copy_16(dst, inside ? src + start : src, inside ? 16 : 0);
    } else {
#pragma unroll
        for (unsigned e = 0; e < per; ++e) dst[e] = inside && col + e < cols ? src[start + e] : T(0);
    }
}

#define TC_MMA_K16(type)                                                                    \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." type "." type                      \
                 ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                \
                 : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])                     \
                 : "r"(fa[0]), "r"(fa[1]), "r"(fa[2]), "r"(fa[3]), "r"(fb[0]), "r"(fb[1]))

// f16 or bf16 inputs: m16n8k16, fragments by `ldmatrix`.
template <bool BF16>
struct TcHalf {
    typedef tc_half_bits T;
    static const unsigned BK = 32, K = 16, A_ROW = BK + 8, B_ROW = TC_BN + 8;
    // A: lane l gives row l % 16, columns 8·(l / 16): the four 8 × 8 quarters in the order of
    // A's registers.
    static __device__ __forceinline__ void load_a(unsigned* fa, const T* tile, unsigned row,
                                                  unsigned kk, unsigned lane) {
        const T* p = tile + (row + lane % 16) * A_ROW + kk + 8 * (lane / 16);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(fa[0]), "=r"(fa[1]), "=r"(fa[2]), "=r"(fa[3])
                     : "r"(tc_shared_address(p)));
    }
    // B (k × n, row-major): lanes 0..16 give rows kk..kk+16; `.trans` hands each lane the k-pairs
    // of its column, B's fragment layout.
    static __device__ __forceinline__ void load_b(unsigned* fb, const T* tile, unsigned kk,
                                                  unsigned col, unsigned lane) {
        const T* p = tile + (kk + lane % 16) * B_ROW + col;
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                     : "=r"(fb[0]), "=r"(fb[1])
                     : "r"(tc_shared_address(p)));
    }
    static __device__ __forceinline__ void mma(float* acc, const unsigned* fa, const unsigned* fb) {
        if (BF16) {
            TC_MMA_K16("bf16");
        } else {
            TC_MMA_K16("f16");
        }
    }
};

// f32 inputs as tf32: m16n8k8, fragments element by element (lane (g, t) = (l / 4, l % 4)).
struct TcTf32 {
    typedef float T;
    static const unsigned BK = 16, K = 8, A_ROW = BK + 4, B_ROW = TC_BN + 8;
    // A's registers: (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4).
    static __device__ __forceinline__ void load_a(unsigned* fa, const T* tile, unsigned row,
                                                  unsigned kk, unsigned lane) {
        const T* p = tile + (row + lane / 4) * A_ROW + kk + lane % 4;
        fa[0] = __float_as_uint(p[0]);
        fa[1] = __float_as_uint(p[8 * A_ROW]);
        fa[2] = __float_as_uint(p[4]);
        fa[3] = __float_as_uint(p[8 * A_ROW + 4]);
    }
    // B's registers: (k = t, n = g), (k = t + 4, n = g).
    static __device__ __forceinline__ void load_b(unsigned* fb, const T* tile, unsigned kk,
                                                  unsigned col, unsigned lane) {
        const T* p = tile + (kk + lane % 4) * B_ROW + col + lane / 4;
        fb[0] = __float_as_uint(p[0]);
        fb[1] = __float_as_uint(p[4 * B_ROW]);
    }
    static __device__ __forceinline__ void mma(float* acc, const unsigned* fa, const unsigned* fb) {
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(acc[0]), "+f"(acc[1]), "+f"(acc[2]), "+f"(acc[3])
            : "r"(fa[0]), "r"(fa[1]), "r"(fa[2]), "r"(fa[3]), "r"(fb[0]), "r"(fb[1]));
    }
};

template <typename P>
__device__ __forceinline__ void matmul_tc(const typename P::T* __restrict__ a, u64 a_len,
                                          const typename P::T* __restrict__ b, u64 b_len,
                                          float* __restrict__ c, u64 c_len, unsigned m,
                                          unsigned n, unsigned k) {
    typedef typename P::T T;
    const unsigned BK = P::BK, A_ROW = P::A_ROW, B_ROW = P::B_ROW;
    const unsigned PER = 16 / sizeof(T);
    __shared__ __align__(16) T a_tiles[2][TC_BM * A_ROW];
    __shared__ __align__(16) T b_tiles[2][BK * B_ROW];
    REQUIRE(blockDim.x == TC_THREADS && blockDim.y == 1 && blockDim.z == 1);
    REQUIRE(a_len >= (u64)m * k && b_len >= (u64)k * n && c_len >= (u64)m * n);
    unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
    unsigned row0 = blockIdx.y * TC_BM, col0 = blockIdx.x * TC_BN;
    unsigned wr = 32 * (warp / 2), wc = 32 * (warp % 2);

    // Whether every 16-byte piece of a row is aligned (block-uniform).
    bool a_whole = k % PER == 0 && (u64)a % 16 == 0, b_whole = n % PER == 0 && (u64)b % 16 == 0;
    // Each thread stages two pieces of A (64 rows × BK/PER) and two of B (BK rows × 64/PER).
    auto stage = [&](unsigned buffer, unsigned k0) {
#pragma unroll
        for (unsigned q = 0; q < 2; ++q) {
            unsigned id = t + TC_THREADS * q;
            unsigned ar = id / (BK / PER), ac = PER * (id % (BK / PER));
            tc_stage_piece(&a_tiles[buffer][ar * A_ROW + ac], a, row0 + ar, k0 + ac, m, k, a_whole);
            unsigned br = id / (TC_BN / PER), bc = PER * (id % (TC_BN / PER));
            tc_stage_piece(&b_tiles[buffer][br * B_ROW + bc], b, k0 + br, col0 + bc, k, n, b_whole);
        }
    };

    float acc[2][4][4];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

    unsigned steps = (k + BK - 1) / BK;
    stage(0, 0);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    for (unsigned s = 0; s < steps; ++s) {
        if (s + 1 < steps) stage((s + 1) % 2, (s + 1) * BK);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        asm volatile("cp.async.wait_group 1;\n" ::: "memory");
        __syncthreads();
        unsigned buffer = s % 2;
#pragma unroll
        for (unsigned kk = 0; kk < BK; kk += P::K) {
            unsigned fa[2][4], fb[4][2];
#pragma unroll
            for (unsigned i = 0; i < 2; ++i) P::load_a(fa[i], a_tiles[buffer], wr + 16 * i, kk, lane);
#pragma unroll
            for (unsigned j = 0; j < 4; ++j) P::load_b(fb[j], b_tiles[buffer], kk, wc + 8 * j, lane);
#pragma unroll
            for (unsigned i = 0; i < 2; ++i)
#pragma unroll
                for (unsigned j = 0; j < 4; ++j) P::mma(acc[i][j], fa[i], fb[j]);
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
    matmul_tc<TcHalf<false> >(a, a_len, b, b_len, c, c_len, m, n, k);
}

extern "C" __global__ void __launch_bounds__(TC_THREADS)
    matmul_tc_bf16(const tc_half_bits* __restrict__ a, u64 a_len,
                       const tc_half_bits* __restrict__ b, u64 b_len, float* __restrict__ c,
                       u64 c_len, unsigned m, unsigned n, unsigned k) {
    matmul_tc<TcHalf<true> >(a, a_len, b, b_len, c, c_len, m, n, k);
}

extern "C" __global__ void __launch_bounds__(TC_THREADS)
    matmul_tc_f32(const float* __restrict__ a, u64 a_len, const float* __restrict__ b,
                  u64 b_len, float* __restrict__ c, u64 c_len, unsigned m, unsigned n,
                  unsigned k) {
    matmul_tc<TcTf32>(a, a_len, b, b_len, c, c_len, m, n, k);
}

#endif
