//! 2D filtering of an image of f32 pixels with a small square filter (3 × 3, 5 × 5), borders
//! clamped. The image is row-major, `width × height` pixels of `channels` interleaved floats
//! (1: grey, 3: RGB); each channel is filtered on its own with the same weights.
//!
//! It is a cross-correlation, as in image-processing libraries (OpenCV's `filter2D`, CUDA NPP):
//! the filter is not flipped,
//!
//! ```text
//! out[y][x][c] = Σ_{dy,dx ∈ -r..=r} w[(dy + r)·(2r + 1) + (dx + r)] · in[clamp(y + dy)][clamp(x + dx)][c]
//! ```
//!
//! with `clamp` keeping coordinates inside the image (the edge pixels repeat outwards). For the
//! symmetric filters (Gaussian blur) it is the same as a convolution; for an antisymmetric one
//! (Sobel) a convolution would flip the sign.

use ferrocuda_std::{kernel, shared, thread, ConstView, Out, Shared};

/// Output columns (pixels) of the tile each block of [`convolve_2d`] computes: one warp per row.
pub const CONV_TILE_X: usize = 32;
/// Output rows of the tile each block of [`convolve_2d`] computes.
pub const CONV_TILE_Y: usize = 8;
/// Largest filter radius [`convolve_2d`] takes: 2, a 5 × 5 filter.
pub const CONV_MAX_RADIUS: usize = 2;
/// Most interleaved channels per pixel [`convolve_2d`] takes: 3 (RGB).
pub const CONV_MAX_CHANNELS: usize = 3;
/// Floats of the shared tile: the output tile and its halo of the largest radius, every channel.
const CONV_SHARED: usize =
    CONV_MAX_CHANNELS * (CONV_TILE_X + 2 * CONV_MAX_RADIUS) * (CONV_TILE_Y + 2 * CONV_MAX_RADIUS);

/// Filters `image` into `out` (both `width · height · channels` floats) with the
/// `(2·radius + 1)²` row-major `weights`, borders clamped: see the module documentation for the
/// formula. `radius` is at most [`CONV_MAX_RADIUS`], `channels` 1 to [`CONV_MAX_CHANNELS`].
///
/// Each block loads its `32 × 8` output tile plus a `radius`-wide halo (coordinates clamped into
/// the image) into shared memory, every channel, in one cooperative, coalesced pass over
/// consecutive floats of each image row; after a barrier each thread computes its pixel's
/// channels from shared memory, so each input float is read from global memory about
/// `(32 + 2r)(8 + 2r)/256` times (1.69 for 5 × 5) instead of `(2r + 1)²` times. Radius and
/// channel count are dispatched to compile-time constants, so that the tap loops unroll with the
/// weights in registers. Any image size works: threads past the image load (clamped) pixels and
/// wait at the barrier but write nothing.
///
/// Launch with blocks of `(CONV_TILE_X, CONV_TILE_Y)` (the launch refuses another shape) and a
/// grid of `(⌈width/32⌉, ⌈height/8⌉)`. The image has at most `u32::MAX` floats (the launch
/// checks `len(image = width * height * channels)`), so indices are 32-bit, as in CUDA C, and
/// its sides are below 2^31.
#[kernel(
    same_len(image, out),
    len(image = width * height * channels),
    block(CONV_TILE_X, CONV_TILE_Y)
)]
pub fn convolve_2d(
    image: &[f32],
    out: Out<f32>,
    weights: &[f32],
    width: u32,
    height: u32,
    channels: u32,
    radius: u32,
) {
    let tile = shared!([f32; CONV_SHARED]);
    let taps = (2 * radius as usize + 1) * (2 * radius as usize + 1);
    assert!(
        weights.len() == taps,
        "convolve_2d: weights must have (2·radius + 1)² elements"
    );
    let b = thread::block_idx();
    let t = thread::thread_idx();
    let image = Image::new(image, width, height);
    if image.past(b) {
        return;
    }
    load_tile(image, channels, radius, tile, Place { t, b });
    thread::sync_threads();
    filter(image, out, weights, channels, radius, tile, Place { t, b });
}

/// The largest filter's taps: what [`CONV_WEIGHTS`] holds.
pub const CONV_MAX_TAPS: usize = (2 * CONV_MAX_RADIUS + 1) * (2 * CONV_MAX_RADIUS + 1);

ferrocuda_std::constant! {
    /// The weights [`convolve_2d_const`] reads, `(2·radius + 1)²` of them first, row-major; the
    /// host sets them for each launch (`Module::launch_with_constant`).
    pub static CONV_WEIGHTS: [f32; CONV_MAX_TAPS];
}

/// [`convolve_2d`] with the weights in constant memory ([`CONV_WEIGHTS`], CUDA's
/// `__constant__`): every thread of a warp reads the same weight at once, which the constant
/// cache broadcasts, and the multiply-adds take them as operands instead of holding them in
/// registers. Launch it with the table carried (`Module::launch_with_constant`), as
/// `ops::convolve_2d` does, so that concurrent launches with other weights cannot change the
/// table under it. Same launch shape and results as [`convolve_2d`].
#[kernel(
    same_len(image, out),
    len(image = width * height * channels),
    block(CONV_TILE_X, CONV_TILE_Y)
)]
pub fn convolve_2d_const(
    image: &[f32],
    out: Out<f32>,
    width: u32,
    height: u32,
    channels: u32,
    radius: u32,
) {
    let tile = shared!([f32; CONV_SHARED]);
    // Taken once at the top: on the CPU's split path a block-uniform `let`, so once per block
    // (a view holds the table's reference count, which the executor's threads share).
    let weights = &CONV_WEIGHTS.view();
    let b = thread::block_idx();
    let t = thread::thread_idx();
    let image = Image::new(image, width, height);
    if image.past(b) {
        return;
    }
    load_tile(image, channels, radius, tile, Place { t, b });
    thread::sync_threads();
    filter(image, out, weights, channels, radius, tile, Place { t, b });
}

/// Where a filter's weights are: a slice, or the constant table.
trait Weights {
    /// The first `taps` weights (one bounds check for a slice, so that indexing them needs
    /// none).
    fn taps(self, taps: usize) -> Self;
    /// Weight `tap`.
    fn weight(&self, tap: usize) -> f32;
}

impl Weights for &[f32] {
    #[inline(always)]
    fn taps(self, taps: usize) -> Self {
        &self[..taps]
    }
    #[inline(always)]
    fn weight(&self, tap: usize) -> f32 {
        self[tap]
    }
}

impl Weights for &ConstView<f32, CONV_MAX_TAPS> {
    #[inline(always)]
    fn taps(self, _taps: usize) -> Self {
        self
    }
    #[inline(always)]
    fn weight(&self, tap: usize) -> f32 {
        self.get(tap)
    }
}

/// Calls `$f::<R, C>($args)` for `R = $radius` and `C = $channels` (radius 0 to 2, 1 to 3
/// channels), so that the tap loops unroll with the weights in registers; panics for others.
macro_rules! with_shape {
    ($radius:expr, $channels:expr, $f:ident($($arg:expr),*)) => {
        match ($radius, $channels) {
            (0, 1) => $f::<0, 1>($($arg),*),
            (0, 2) => $f::<0, 2>($($arg),*),
            (0, 3) => $f::<0, 3>($($arg),*),
            (1, 1) => $f::<1, 1>($($arg),*),
            (1, 2) => $f::<1, 2>($($arg),*),
            (1, 3) => $f::<1, 3>($($arg),*),
            (2, 1) => $f::<2, 1>($($arg),*),
            (2, 2) => $f::<2, 2>($($arg),*),
            (2, 3) => $f::<2, 3>($($arg),*),
            _ => panic!("convolve_2d takes radius 0 to 2 and 1 to 3 channels"),
        }
    };
}

/// Loads the block's tile and its halo into `tile`: the instance of [`load_tile_of`] for
/// `radius` and `channels`. Every thread of a block whose tile corner is inside the image calls
/// it, then `sync_threads()`, then [`filter`].
#[inline(always)]
fn load_tile(image: Image<'_>, channels: u32, radius: u32, tile: Shared<f32>, place: Place) {
    with_shape!(radius, channels, load_tile_of(image, tile, place))
}

/// Filters this thread's pixel from the loaded `tile` into `out`: the instance of
/// [`filter_of`] for `radius` and `channels`.
#[inline(always)]
fn filter(
    image: Image<'_>,
    out: Out<f32>,
    weights: impl Weights,
    channels: u32,
    radius: u32,
    tile: Shared<f32>,
    place: Place,
) {
    with_shape!(
        radius,
        channels,
        filter_of(image, out, weights, tile, place)
    )
}

/// The input image: `w × h` pixels of interleaved channels, `w·h·channels ≤ u32::MAX` floats,
/// `w` and `h` below 2^31.
#[derive(Clone, Copy)]
struct Image<'a> {
    pixels: &'a [f32],
    w: u32,
    h: u32,
}

impl<'a> Image<'a> {
    /// The image, its sides checked.
    #[inline(always)]
    fn new(pixels: &'a [f32], w: u32, h: u32) -> Self {
        assert!(
            w >= 1 && h >= 1 && (w | h) < 1 << 31,
            "convolve_2d: width and height must be 1 to 2^31 - 1"
        );
        Image { pixels, w, h }
    }

    /// Whether block `b`'s tile lies past the image: its threads have nothing to write and all
    /// return (the same decision in every thread of the block, so no barrier is left
    /// half-reached). Otherwise the tile's corner is inside the image.
    #[inline(always)]
    fn past(&self, b: ferrocuda_std::Dim3) -> bool {
        b.x >= self.w.div_ceil(CONV_TILE_X as u32) || b.y >= self.h.div_ceil(CONV_TILE_Y as u32)
    }
}

/// The load of [`convolve_2d`]'s tile for radius `R` and `C` channels, in a block whose tile
/// corner is inside the image: consecutive threads take consecutive floats of a tile row, which
/// are consecutive floats of an image row (channels interleaved) except where clamped at the
/// borders.
#[inline(always)]
fn load_tile_of<const R: u32, const C: u32>(image: Image<'_>, tile: Shared<f32>, place: Place) {
    let TileGeometry {
        pitch,
        rows: tile_rows,
        tx,
        ty,
        x0,
        y0,
    } = TileGeometry::of::<R, C>(place);
    let mut i = ty * CONV_TILE_X as u32 + tx;
    while i < tile_rows * pitch {
        let (row, in_row) = (i / pitch, i % pitch);
        let (column, channel) = (in_row / C, in_row % C);
        // (x0 + column) - R and (y0 + row) - R, clamped into the image (no u32 wraps: x0 and
        // y0 are below 2^31, column and row below 48).
        let x = (x0 + column).saturating_sub(R).min(image.w - 1);
        let y = (y0 + row).saturating_sub(R).min(image.h - 1);
        // SAFETY: x < w, y < h and channel < C, so (y·w + x)·C + channel < w·h·C, which is
        // image.pixels.len() ≤ u32::MAX (`len(image = width * height * channels)`): no u32
        // wraps and the index is in bounds.
        tile.set(i as usize, unsafe {
            *image
                .pixels
                .get_unchecked(((y * image.w + x) * C + channel) as usize)
        });
        i += (CONV_TILE_X * CONV_TILE_Y) as u32;
    }
}

/// This thread's pixel of [`convolve_2d`] for radius `R` and `C` channels, from the loaded
/// `tile`: each channel's taps multiplied and added in row-major order.
#[inline(always)]
fn filter_of<const R: u32, const C: u32>(
    image: Image<'_>,
    out: Out<f32>,
    weights: impl Weights,
    tile: Shared<f32>,
    place: Place,
) {
    let TileGeometry {
        pitch,
        tx,
        ty,
        x0,
        y0,
        ..
    } = TileGeometry::of::<R, C>(place);
    let side = 2 * R + 1;
    let (x, y) = (x0 + tx, y0 + ty);
    if x < image.w && y < image.h {
        let (side, pitch) = (side as usize, pitch as usize);
        let (tx, ty, c) = (tx as usize, ty as usize, C as usize);
        let weights = weights.taps(side * side);
        let mut w = [0.0f32; CONV_MAX_TAPS];
        for (tap, weight) in w.iter_mut().enumerate().take(side * side) {
            *weight = weights.weight(tap);
        }
        for channel in 0..c {
            let mut sum = 0.0f32;
            for dy in 0..side {
                for dx in 0..side {
                    let value = tile.get((ty + dy) * pitch + (tx + dx) * c + channel);
                    sum = crate::fma(w[dy * side + dx], value, sum);
                }
            }
            // SAFETY: x < w, y < h and channel < C, so the index is below w·h·C ≤ u32::MAX (no
            // u32 wraps), the image's length, which is out.len() (`same_len(image, out)`).
            unsafe { out.set_unchecked(((y * image.w + x) * C + channel as u32) as usize, sum) };
        }
    }
}

/// This thread's index in its block and its block's in the grid, read in the kernel's body and
/// passed down: in the body, on the CPU's split path, they are the region loop's own variables
/// (the block's index a block-uniform `let`), where a helper's `thread::thread_idx()` is a
/// thread-local read per thread (on the GPU the same special registers either way).
#[derive(Clone, Copy)]
struct Place {
    t: ferrocuda_std::Dim3,
    b: ferrocuda_std::Dim3,
}

/// The shared tile's shape for radius `R` and `C` channels, and this thread's place in it.
struct TileGeometry {
    /// Floats per row of the shared tile.
    pitch: u32,
    /// Rows of the shared tile.
    rows: u32,
    /// This thread's column and row in the block's output tile.
    tx: u32,
    ty: u32,
    /// The output tile's corner in the image (below w and h, checked by `Image::past`, so
    /// below 2^31).
    x0: u32,
    y0: u32,
}

impl TileGeometry {
    #[inline(always)]
    fn of<const R: u32, const C: u32>(Place { t, b }: Place) -> Self {
        const TILE_X: u32 = CONV_TILE_X as u32;
        const TILE_Y: u32 = CONV_TILE_Y as u32;
        TileGeometry {
            pitch: (TILE_X + 2 * R) * C,
            rows: TILE_Y + 2 * R,
            // The masks change nothing (the launch checked the block shape) but let the
            // compiler see that the shared indices are in bounds.
            tx: t.x & (TILE_X - 1),
            ty: t.y & (TILE_Y - 1),
            x0: b.x * TILE_X,
            y0: b.y * TILE_Y,
        }
    }
}
