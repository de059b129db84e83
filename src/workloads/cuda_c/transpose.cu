// ferrocuda's CUDA C versions of the transposes (gpu-kernels/src/transpose.rs): out (cols × rows)
// = inputᵀ (rows × cols), row-major f32, bit for bit.

// One thread per element: reads coalesced, writes strided by `rows`. A 2D grid over cols (x)
// and rows (y).
extern "C" __global__ void transpose_naive(const float* __restrict__ input, u64 input_len,
                                           float* __restrict__ out, u64 out_len,
                                           unsigned rows, unsigned cols) {
    REQUIRE(out_len == input_len);
    u64 x = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 y = (u64)blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows) {
        REQUIRE(input_len >= (u64)rows * cols);
        out[x * rows + y] = input[y * cols + x];
    }
}

#define TRANSPOSE_TILE 32
#define TRANSPOSE_ROWS 8

// Through a 32 × 33 shared tile (one column of padding: a tile column hits 32 banks), so that
// reads and writes are both coalesced; each thread moves 4 elements. Blocks of (32, 8), a grid
// of (⌈cols/32⌉, ⌈rows/32⌉).
extern "C" __global__ void transpose_tiled(const float* __restrict__ input, u64 input_len,
                                           float* __restrict__ out, u64 out_len,
                                           unsigned rows, unsigned cols) {
    __shared__ float tile[TRANSPOSE_TILE][TRANSPOSE_TILE + 1];
    REQUIRE(blockDim.x == TRANSPOSE_TILE && blockDim.y == TRANSPOSE_ROWS && blockDim.z == 1);
    REQUIRE(out_len == input_len && input_len >= (u64)rows * cols);
    // A block past the matrix has nothing to move; inside, coordinates fit in 32 bits.
    if ((u64)blockIdx.x * TRANSPOSE_TILE >= cols || (u64)blockIdx.y * TRANSPOSE_TILE >= rows)
        return;
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned block_col = blockIdx.x * TRANSPOSE_TILE, block_row = blockIdx.y * TRANSPOSE_TILE;
#pragma unroll
    for (unsigned j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS) {
        unsigned x = block_col + tx, y = block_row + ty + j;
        if (x < cols && y < rows) tile[ty + j][tx] = input[(u64)y * cols + x];
    }
    __syncthreads();
#pragma unroll
    for (unsigned j = 0; j < TRANSPOSE_TILE; j += TRANSPOSE_ROWS) {
        // Output row block_col + ty + j (an input column), output column block_row + tx.
        unsigned x = block_row + tx, y = block_col + ty + j;
        if (x < rows && y < cols) out[(u64)y * rows + x] = tile[tx][ty + j];
    }
}
