//! 2D filtering of images (blur, edge detection) with small square filters.

use super::checks::{check_len, checked_product, to_u32};
use super::launch::grid_2d;
use crate::kernels::convolution::{
    convolve_2d_const, CONV_MAX_CHANNELS, CONV_MAX_RADIUS, CONV_MAX_TAPS, CONV_TILE_X, CONV_TILE_Y,
    CONV_WEIGHTS,
};
use crate::{Error, InputData, LaunchConfig, Module, OutputData, Result};

/// Largest radius of a [`Filter`]: 2, a 5 × 5 filter (the kernel's shared tile has room for a
/// halo that wide).
pub const MAX_FILTER_RADIUS: usize = CONV_MAX_RADIUS;

/// A square filter of odd side `2·radius + 1` (1, 3 or 5), weights row-major, for
/// [`convolve_2d`]. Weight `(dy + r)·(2r + 1) + (dx + r)` multiplies the pixel `dx` to the right
/// and `dy` below the output pixel (a cross-correlation: the filter is not flipped).
#[derive(Clone, Debug, PartialEq)]
pub struct Filter {
    radius: usize,
    weights: Vec<f32>,
}

impl Filter {
    /// A filter of the given row-major weights, whose count must be the square of an odd side
    /// of at most `2·MAX_FILTER_RADIUS + 1` (1, 9 or 25 weights).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for any other count of weights.
    pub fn new(weights: &[f32]) -> Result<Filter> {
        let side = weights.len().isqrt();
        let problem = if side * side != weights.len() || side.is_multiple_of(2) {
            Some(format!(
                "{} weights are not a square filter of odd side (1, 9 or 25 weights)",
                weights.len()
            ))
        } else if side / 2 > MAX_FILTER_RADIUS {
            Some(format!(
                "a {side} × {side} filter (radius {}) is larger than the largest the kernel \
                 takes, {max} × {max} (radius {MAX_FILTER_RADIUS})",
                side / 2,
                max = 2 * MAX_FILTER_RADIUS + 1
            ))
        } else {
            None
        };
        match problem {
            Some(detail) => Err(Error::InvalidInput {
                op: "Filter::new",
                detail,
            }),
            None => Ok(Filter {
                radius: side / 2,
                weights: weights.to_vec(),
            }),
        }
    }

    /// The outer product `column · rowᵀ` of two odd-length vectors of equal length (a separable
    /// filter), in f64 then rounded once.
    fn outer(column: &[f64], row: &[f64]) -> Filter {
        let weights: Vec<f32> = column
            .iter()
            .flat_map(|c| row.iter().map(move |r| (c * r) as f32))
            .collect();
        Filter::new(&weights).expect("the built-in filters are 3 × 3 or 5 × 5")
    }

    /// 3 × 3 Gaussian blur: binomial weights `[1 2 1]ᵀ[1 2 1] / 16`, summing to 1 (each weight
    /// exact in f32).
    pub fn gaussian_3x3() -> Filter {
        let b = [1.0 / 4.0, 2.0 / 4.0, 1.0 / 4.0];
        Filter::outer(&b, &b)
    }

    /// 5 × 5 Gaussian blur: binomial weights `[1 4 6 4 1]ᵀ[1 4 6 4 1] / 256`, summing to 1 (each
    /// weight exact in f32).
    pub fn gaussian_5x5() -> Filter {
        let b = [1.0 / 16.0, 4.0 / 16.0, 6.0 / 16.0, 4.0 / 16.0, 1.0 / 16.0];
        Filter::outer(&b, &b)
    }

    /// Sobel derivative along x, `[-1 0 1; -2 0 2; -1 0 1]`: positive where the image gets
    /// brighter to the right (8 × the slope on a linear ramp).
    pub fn sobel_x() -> Filter {
        Filter::outer(&[1.0, 2.0, 1.0], &[-1.0, 0.0, 1.0])
    }

    /// Sobel derivative along y, `[-1 -2 -1; 0 0 0; 1 2 1]`: positive where the image gets
    /// brighter downwards (towards higher rows).
    pub fn sobel_y() -> Filter {
        Filter::outer(&[-1.0, 0.0, 1.0], &[1.0, 2.0, 1.0])
    }

    /// The radius `r`: the filter is `(2r + 1) × (2r + 1)`.
    pub fn radius(&self) -> usize {
        self.radius
    }

    /// The side, `2·radius + 1`.
    pub fn side(&self) -> usize {
        2 * self.radius + 1
    }

    /// The row-major weights.
    pub fn weights(&self) -> &[f32] {
        &self.weights
    }
}

/// Filters `image` into `output` with `filter`, borders clamped (the edge pixels repeat
/// outwards). Both are row-major `width × height` pixels of `channels` interleaved floats (1:
/// grey, 3: RGB; at most 3), each channel filtered on its own:
///
/// ```text
/// output[y][x][c] = Σ_{dy,dx ∈ -r..=r} w[(dy + r)·(2r + 1) + (dx + r)] · image[clamp(y + dy)][clamp(x + dx)][c]
/// ```
///
/// This is a cross-correlation (the filter is not flipped), as in image-processing libraries;
/// for the symmetric Gaussians it equals a convolution. Each output is accumulated in f32 with
/// fused multiply-adds, taps in row-major order.
///
/// ```
/// use ferrocuda::ops::{self, Filter};
/// let kernels = ferrocuda::Device::cpu().load(&ferrocuda::KERNELS)?;
/// // A 4 × 1 grey ramp: Sobel x is 8 × the slope inside, 4 × at the clamped ends.
/// let image = [0.0f32, 1.0, 2.0, 3.0];
/// let mut edges = [0.0f32; 4];
/// ops::convolve_2d(&kernels, &image, &mut edges, 4, 1, 1, &Filter::sobel_x())?;
/// assert_eq!(edges, [4.0, 8.0, 8.0, 4.0]);
/// # Ok::<(), ferrocuda::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidInput`] before anything runs if `width` or `height` is zero or at least 2^31,
/// `channels` is not 1 to 3, `width·height·channels` is above `u32::MAX`, `image` or `output`
/// is not that long, or the image needs more blocks than the device's grid allows (65,535 in y
/// on CUDA GPUs: more than 524,280 rows); launch errors.
pub fn convolve_2d(
    kernels: &Module,
    image: &(impl InputData<f32> + ?Sized),
    output: &mut (impl OutputData<f32> + ?Sized),
    width: usize,
    height: usize,
    channels: usize,
    filter: &Filter,
) -> Result<()> {
    const OP: &str = "convolve_2d";
    if width == 0 || height == 0 {
        return Err(Error::InvalidInput {
            op: OP,
            detail: format!("width and height must be at least 1, got {width} × {height}"),
        });
    }
    if !(1..=CONV_MAX_CHANNELS).contains(&channels) {
        return Err(Error::InvalidInput {
            op: OP,
            detail: format!(
                "channels must be 1 to {CONV_MAX_CHANNELS} (grey to RGB), got {channels}"
            ),
        });
    }
    let (w, h) = (to_u32(OP, "width", width)?, to_u32(OP, "height", height)?);
    let pixels = checked_product(OP, "width·height", width, height)?;
    let len = checked_product(OP, "width·height·channels", pixels, channels)?;
    // The kernel indexes in 32 bits (`len(image = width * height * channels)`) and clamps
    // coordinates of sides below 2^31.
    to_u32(OP, "width·height·channels", len)?;
    if (width | height) >= 1 << 31 {
        return Err(Error::InvalidInput {
            op: OP,
            detail: format!("width and height must be below 2^31, got {width} × {height}"),
        });
    }
    let why = format!("{width} × {height} pixels of {channels} channels");
    check_len(OP, "image", image.len(), len, &why)?;
    check_len(OP, "output", output.len(), len, &why)?;
    let tile = (CONV_TILE_X, CONV_TILE_Y);
    let grid = grid_2d(OP, kernels, (width, "columns"), (height, "rows"), tile)?;
    let block = (CONV_TILE_X as u32, CONV_TILE_Y as u32);
    let (c, r) = (channels as u32, filter.radius as u32);
    // The weights go to constant memory (the kernel's multiply-adds read them from there, and
    // need 8 registers fewer than holding them), carried by the launch, so that concurrent
    // calls with other filters each get their own; the table's unused taps are zeros.
    let mut weights = [0.0f32; CONV_MAX_TAPS];
    weights[..filter.weights.len()].copy_from_slice(&filter.weights);
    let config = LaunchConfig::try_new(grid, block)?;
    let kernel = &convolve_2d_const;
    kernels.launch_with_constant(
        kernel,
        config,
        &CONV_WEIGHTS,
        &weights,
        (image, output, w, h, c, r),
    )
}
