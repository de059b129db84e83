//! The seed's two transposes, written as its Numba code writes them, with 2D views.
//!
//! Numba:
//! ```python
//! @cuda.jit
//! def transpose_naive(a, out):
//!     x, y = cuda.grid(2)
//!     if y < a.shape[0] and x < a.shape[1]:
//!         out[x, y] = a[y, x]
//!
//! @cuda.jit
//! def transpose_tiled(a, out):
//!     tile = cuda.shared.array((TILE_DIM, TILE_DIM + 1), float32)
//!     x, y = cuda.grid(2)
//!     tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
//!     if y < a.shape[0] and x < a.shape[1]:
//!         tile[ty, tx] = a[y, x]
//!     cuda.syncthreads()
//!     x = cuda.blockIdx.y * TILE_DIM + tx
//!     y = cuda.blockIdx.x * TILE_DIM + ty
//!     if y < out.shape[0] and x < out.shape[1]:
//!         out[y, x] = tile[tx, ty]
//! ```
//!
//! The kernels are `gpu-kernels/src/transpose_2d.rs`'s:
//! ```ignore
//! #[kernel]
//! pub fn transpose_2d_naive(a: Array2<f32>, out: Out2<f32>) {
//!     let (x, y) = thread::index_2d();                 // x, y = cuda.grid(2)
//!     if y < a.rows() && x < a.cols() {                // a.shape[0], a.shape[1]
//!         out.set((x, y), a[(y, x)]);                  // out[x, y] = a[y, x]
//!     }
//! }
//!
//! #[kernel]
//! pub fn transpose_2d_tiled(a: Array2<f32>, out: Out2<f32>) {
//!     let tile = shared!([[f32; TILE_2D + 1]; TILE_2D]);
//!     let (x, y) = thread::index_2d();
//!     let (t, b) = (thread::thread_idx(), thread::block_idx());
//!     let (tx, ty) = (t.x as usize, t.y as usize);
//!     if y < a.rows() && x < a.cols() {
//!         tile.set2(ty, tx, a[(y, x)]);               // tile[ty, tx] = a[y, x]
//!     }
//!     thread::sync_threads();
//!     let x = b.y as usize * TILE_2D + tx;
//!     let y = b.x as usize * TILE_2D + ty;
//!     if y < out.rows() && x < out.cols() {
//!         out.set((y, x), tile.get2(tx, ty));         // out[y, x] = tile[tx, ty]
//!     }
//! }
//! ```
//!
//! Run with `cargo run --release --example transpose_2d`.

use ferrocuda::kernels::transpose_2d::{transpose_2d_naive, transpose_2d_tiled, TILE_2D};
use ferrocuda::{launch, Array2, Device, Out2};

fn main() -> ferrocuda::Result<()> {
    let device = Device::best().device;
    let kernels = device.load(&ferrocuda::KERNELS)?;

    let (rows, cols) = (300, 200);
    let a: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect(); // np.arange(...).reshape(rows, cols)
    let mut naive = vec![0.0f32; rows * cols]; //                      np.empty((cols, rows))
    let mut tiled = vec![0.0f32; rows * cols];

    let blocks = (cols.div_ceil(TILE_2D), rows.div_ceil(TILE_2D));
    let threads = (TILE_2D, TILE_2D);
    // transpose_naive[blocks, threads](a, out): the shapes travel with the views.
    launch!(
        kernels,
        transpose_2d_naive[blocks, threads](
            Array2::new(&a, rows, cols)?,
            Out2::new(&mut naive, cols, rows)?
        )
    )?;
    launch!(
        kernels,
        transpose_2d_tiled[blocks, threads](
            Array2::new(&a, rows, cols)?,
            Out2::new(&mut tiled, cols, rows)?
        )
    )?;

    // out[c, r] == a[r, c]
    let expected = |i: usize| ((i % rows) * cols + i / rows) as f32;
    assert!(naive.iter().enumerate().all(|(i, &v)| v == expected(i)));
    assert_eq!(naive, tiled);
    println!(
        "on {device}: transposed a {rows} × {cols} matrix both ways; out[1, 0] = {}",
        naive[1]
    );
    Ok(())
}
