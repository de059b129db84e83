//! The launch arguments for 2D and 3D kernel parameters ([`Array2`], [`Array3`] for a kernel's
//! `Array2<T>`/`Array3<T>` inputs, [`Out2`], [`Out3`] for its `Out2<T>`/`Out3<T>` outputs): host
//! data or a device buffer with a shape, checked against the memory when made and again at every
//! launch.

use crate::args::{InputArg, InputData, OutputArg, OutputData};
use crate::error::{Error, Result};
use bytemuck::Pod;

/// The most axes a view has.
pub(crate) const MAX_DIMS: usize = 3;

/// A view's extents and strides (in elements, outermost axis first; the last stride is 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) dims: usize,
    extents: [usize; MAX_DIMS],
    strides: [usize; MAX_DIMS],
}

impl Shape {
    pub(crate) fn new<const D: usize>(extents: [usize; D], strides: [usize; D]) -> Shape {
        const { assert!(D >= 2 && D <= MAX_DIMS) };
        let mut shape = Shape {
            dims: D,
            extents: [0; MAX_DIMS],
            strides: [0; MAX_DIMS],
        };
        shape.extents[..D].copy_from_slice(&extents);
        shape.strides[..D].copy_from_slice(&strides);
        shape
    }

    pub(crate) fn extents(&self) -> &[usize] {
        &self.extents[..self.dims]
    }

    fn strides(&self) -> &[usize] {
        &self.strides[..self.dims]
    }

    /// What is wrong with this shape over `len` elements, if anything: the last axis must be
    /// contiguous, each stride must step over a whole item of the next axis (so no two indices
    /// share an element: a write to one never lands on another), and the largest offset must be
    /// below `len`, all without overflow. A shape with a zero extent has no elements to reach.
    pub(crate) fn check(&self, len: usize) -> core::result::Result<(), String> {
        let (extents, strides) = (self.extents(), self.strides());
        let text = |values: &[usize]| {
            values
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(" × ")
        };
        let overflow = || {
            format!(
                "a shape of {} with strides {:?} overflows the address space",
                text(extents),
                strides
            )
        };
        if strides[self.dims - 1] != 1 {
            return Err(format!(
                "the last axis must be contiguous (stride 1), not stride {}",
                strides[self.dims - 1]
            ));
        }
        for k in 0..self.dims - 1 {
            let item = extents[k + 1]
                .checked_mul(strides[k + 1])
                .ok_or_else(overflow)?;
            if strides[k] < item {
                return Err(format!(
                    "axis {k} has a stride of {} elements, less than the {item} of one item of \
                     axis {} ({} × stride {}): its items would overlap",
                    strides[k],
                    k + 1,
                    extents[k + 1],
                    strides[k + 1]
                ));
            }
        }
        if extents.contains(&0) {
            return Ok(());
        }
        let mut last = 0usize;
        for (&extent, &stride) in extents.iter().zip(strides) {
            last = (extent - 1)
                .checked_mul(stride)
                .and_then(|step| last.checked_add(step))
                .ok_or_else(overflow)?;
        }
        let needed = last.checked_add(1).ok_or_else(overflow)?;
        if needed > len {
            return Err(format!(
                "a shape of {} with strides {:?} reaches element {last}, so it needs {needed} \
                 elements, but the memory has {len}",
                text(extents),
                strides
            ));
        }
        Ok(())
    }

    /// The values of the PTX parameters after the view's (pointer, length): the extents, then
    /// the strides of all but the last axis.
    pub(crate) fn ptx_values(&self) -> impl Iterator<Item = u64> + '_ {
        let strides = &self.strides()[..self.dims - 1];
        self.extents()
            .iter()
            .chain(strides)
            .map(|&value| value as u64)
    }
}

/// Row-major strides of a contiguous `extents` (the last axis contiguous); `None` on overflow.
fn contiguous_strides<const D: usize>(extents: [usize; D]) -> Option<[usize; D]> {
    let mut strides = [1usize; D];
    for k in (0..D - 1).rev() {
        strides[k] = strides[k + 1].checked_mul(extents[k + 1])?;
    }
    Some(strides)
}

/// The extents' product, for the exact-length constructors.
fn element_count(view: &'static str, extents: &[usize]) -> Result<usize> {
    extents
        .iter()
        .try_fold(1usize, |n, &e| n.checked_mul(e))
        .ok_or_else(|| Error::BadShape {
            view,
            detail: format!("a shape of {extents:?} has more elements than the address space"),
        })
}

/// `shape` over `len` elements, or the error naming `view`.
fn checked_shape(view: &'static str, shape: Shape, len: usize) -> Result<Shape> {
    shape
        .check(len)
        .map(|()| shape)
        .map_err(|detail| Error::BadShape { view, detail })
}

/// A shape that holds exactly `len` contiguous elements.
pub(crate) fn exact_shape<const D: usize>(
    view: &'static str,
    extents: [usize; D],
    len: usize,
) -> Result<Shape> {
    let count = element_count(view, &extents)?;
    if count != len {
        return Err(Error::BadShape {
            view,
            detail: format!(
                "a shape of {} has {count} elements, but the data has {len}",
                extents.map(|e| e.to_string()).join(" × ")
            ),
        });
    }
    let strides = contiguous_strides(extents).expect("the element count did not overflow");
    Ok(Shape::new(extents, strides))
}

/// A `D`-dimensional input for a kernel's `Array2<T>`/`Array3<T>` parameter: memory a kernel
/// reads ([`InputData`]: a slice, `Vec`, [`DeviceBuffer`](crate::DeviceBuffer)...) with a shape.
/// Pass it by value: `launch!(m, k[grid, block](Array2::new(&a, rows, cols)?, ...))`.
///
/// ```no_run
/// use ferrocuda_std::{kernel, thread, Array2, Out2};
/// #[kernel]
/// pub fn copy_2d(a: Array2<f32>, out: Out2<f32>) {
///     let (x, y) = thread::index_2d();
///     if y < a.rows() && x < a.cols() {
///         out.set((y, x), a[(y, x)]);
///     }
/// }
/// # fn main() -> ferrocuda_host::Result<()> {
/// # static PTX: ferrocuda_host::Ptx = ferrocuda_host::Ptx::new("doc", "");
/// let module = ferrocuda_host::Device::cpu().load(&PTX)?;
/// let (a, mut out) = (vec![1.0f32; 6], vec![0.0f32; 6]);
/// let (input, output) = (ferrocuda_host::Array2::new(&a, 2, 3)?, ferrocuda_host::Out2::new(&mut out, 2, 3)?);
/// ferrocuda_host::launch!(module, copy_2d[1, (3, 2)](input, output))?;
/// # Ok(())
/// # }
/// ```
///
/// A plain slice (no shape) for a 2D parameter does not compile:
///
/// ```compile_fail
/// use ferrocuda_std::{kernel, thread, Array2, Out2};
/// #[kernel]
/// pub fn copy_2d(a: Array2<f32>, out: Out2<f32>) {
///     let (x, y) = thread::index_2d();
///     if y < a.rows() && x < a.cols() {
///         out.set((y, x), a[(y, x)]);
///     }
/// }
/// # fn main() -> ferrocuda_host::Result<()> {
/// # static PTX: ferrocuda_host::Ptx = ferrocuda_host::Ptx::new("doc", "");
/// let module = ferrocuda_host::Device::cpu().load(&PTX)?;
/// let (a, mut out) = (vec![1.0f32; 6], vec![0.0f32; 6]);
/// let output = ferrocuda_host::Out2::new(&mut out, 2, 3)?;
/// ferrocuda_host::launch!(module, copy_2d[1, (3, 2)](&a, output))?;
/// # Ok(())
/// # }
/// ```
pub struct ArrayArg<'a, T, const D: usize> {
    pub(crate) view: InputArg<'a, T>,
    pub(crate) shape: Shape,
}

/// A `D`-dimensional output for a kernel's `Out2<T>`/`Out3<T>` parameter: memory borrowed
/// mutably ([`OutputData`]) with a shape.
pub struct OutArrayArg<'a, T, const D: usize> {
    pub(crate) view: OutputArg<'a, T>,
    pub(crate) shape: Shape,
}

/// A row-major `rows × cols` input, optionally with a row pitch:
///
/// ```
/// use ferrocuda_host::Array2;
/// let data = vec![0.0f32; 6];
/// assert!(Array2::new(&data, 2, 3).is_ok());
/// let error = Array2::new(&data, 2, 4).err().unwrap();
/// assert_eq!(error.to_string(), "Array2::new: a shape of 2 × 4 has 8 elements, but the data has 6");
/// // Rows of 2 elements, 3 apart: the last row's end is element 5.
/// assert_eq!(Array2::with_pitch(&data, 2, 2, 3).unwrap().shape(), [2, 2]);
/// ```
pub type Array2<'a, T> = ArrayArg<'a, T, 2>;
/// A row-major `planes × rows × cols` input.
pub type Array3<'a, T> = ArrayArg<'a, T, 3>;
/// A row-major `rows × cols` output (see [`Array2`]).
pub type Out2<'a, T> = OutArrayArg<'a, T, 2>;
/// A row-major `planes × rows × cols` output.
pub type Out3<'a, T> = OutArrayArg<'a, T, 3>;

/// The constructors, for inputs and outputs alike.
macro_rules! view_constructors {
    ($view:ident, $data:ident, $borrow:ty, $lend:ident, [$in2:literal, $in3:literal], [$ws2:literal, $ws3:literal]) => {
        impl<'a, T: Pod, const D: usize> $view<'a, T, D> {
            /// A view with explicit `extents` and `strides` (in elements, outermost axis first;
            /// the last stride must be 1).
            ///
            /// # Errors
            /// [`Error::BadShape`] if the last stride is not 1, if items of an axis would overlap,
            /// or if the largest offset is not below the memory's length.
            pub fn with_strides<M: $data<T> + ?Sized>(
                data: $borrow,
                extents: [usize; D],
                strides: [usize; D],
            ) -> Result<Self> {
                let view = data.$lend();
                let shape = checked_shape(
                    if D == 2 { $ws2 } else { $ws3 },
                    Shape::new(extents, strides),
                    view.len(),
                )?;
                Ok($view { view, shape })
            }

            /// The extents, outermost axis first.
            pub fn shape(&self) -> [usize; D] {
                core::array::from_fn(|k| self.shape.extents[k])
            }

            /// The strides in elements, outermost axis first.
            pub fn strides(&self) -> [usize; D] {
                core::array::from_fn(|k| self.shape.strides[k])
            }
        }

        impl<'a, T: Pod> $view<'a, T, 2> {
            /// `rows × cols` contiguous elements, row after row.
            ///
            /// # Errors
            /// [`Error::BadShape`] unless the memory has exactly `rows × cols` elements.
            pub fn new<M: $data<T> + ?Sized>(
                data: $borrow,
                rows: usize,
                cols: usize,
            ) -> Result<Self> {
                let view = data.$lend();
                let shape = exact_shape($in2, [rows, cols], view.len())?;
                Ok($view { view, shape })
            }

            /// `rows` rows of `cols` elements, each row `row_pitch` elements after the previous
            /// (CUDA's pitched layout; `row_pitch ≥ cols`).
            ///
            /// # Errors
            /// [`Error::BadShape`] if `row_pitch < cols` or the rows do not fit the memory.
            pub fn with_pitch<M: $data<T> + ?Sized>(
                data: $borrow,
                rows: usize,
                cols: usize,
                row_pitch: usize,
            ) -> Result<Self> {
                Self::with_strides(data, [rows, cols], [row_pitch, 1])
            }
        }

        impl<'a, T: Pod> $view<'a, T, 3> {
            /// `planes × rows × cols` contiguous elements, row-major.
            ///
            /// # Errors
            /// [`Error::BadShape`] unless the memory has exactly `planes × rows × cols` elements.
            pub fn new<M: $data<T> + ?Sized>(
                data: $borrow,
                planes: usize,
                rows: usize,
                cols: usize,
            ) -> Result<Self> {
                let view = data.$lend();
                let shape = exact_shape($in3, [planes, rows, cols], view.len())?;
                Ok($view { view, shape })
            }
        }
    };
}
view_constructors!(
    ArrayArg,
    InputData,
    &'a M,
    input_arg,
    ["Array2::new", "Array3::new"],
    ["Array2::with_strides", "Array3::with_strides"]
);
view_constructors!(
    OutArrayArg,
    OutputData,
    &'a mut M,
    output_arg,
    ["Out2::new", "Out3::new"],
    ["Out2::with_strides", "Out3::with_strides"]
);

#[cfg(test)]
mod tests {
    use super::*;

    fn shape2(extents: [usize; 2], strides: [usize; 2]) -> Shape {
        Shape::new(extents, strides)
    }

    #[test]
    fn the_span_of_a_pitched_shape_is_its_last_offset_plus_one() {
        // 3 rows of 4, pitch 5: the last element is at 2 × 5 + 3 = 13.
        assert!(shape2([3, 4], [5, 1]).check(14).is_ok());
        let detail = shape2([3, 4], [5, 1]).check(13).unwrap_err();
        assert!(
            detail.contains("reaches element 13, so it needs 14 elements, but the memory has 13"),
            "{detail}"
        );
        // Zero rows reach nothing.
        assert!(shape2([0, 4], [5, 1]).check(0).is_ok());
    }

    #[test]
    fn overlapping_rows_a_strided_last_axis_and_overflow_are_refused() {
        let detail = shape2([3, 4], [3, 1]).check(100).unwrap_err();
        assert!(detail.contains("would overlap"), "{detail}");
        let detail = shape2([3, 4], [8, 2]).check(100).unwrap_err();
        assert!(detail.contains("must be contiguous"), "{detail}");
        let detail = shape2([3, usize::MAX / 2], [usize::MAX / 2, 1])
            .check(usize::MAX)
            .unwrap_err();
        assert!(detail.contains("overflows"), "{detail}");
        let huge = Shape::new([2, 1 << 40, 1 << 30], [1 << 62, 1 << 30, 1]);
        assert!(huge.check(usize::MAX).unwrap_err().contains("overflows"));
    }

    #[test]
    fn the_ptx_values_are_the_extents_then_all_but_the_last_stride() {
        let shape = Shape::new([2, 3, 4], [15, 5, 1]);
        assert_eq!(shape.ptx_values().collect::<Vec<_>>(), [2, 3, 4, 15, 5]);
        assert_eq!(contiguous_strides([2, 3, 4]), Some([12, 4, 1]));
    }

    #[test]
    fn the_exact_constructors_want_exactly_the_product() {
        let data = vec![0u8; 24];
        assert_eq!(Array3::new(&data, 2, 3, 4).unwrap().strides(), [12, 4, 1]);
        let error = Array3::new(&data, 2, 3, 5).err().unwrap().to_string();
        assert_eq!(
            error,
            "Array3::new: a shape of 2 × 3 × 5 has 30 elements, but the data has 24"
        );
        let error = Array2::new(&data, usize::MAX, 2).err().unwrap().to_string();
        assert!(
            error.contains("more elements than the address space"),
            "{error}"
        );
        let mut out = vec![0u8; 24];
        assert!(Out2::new(&mut out, 4, 6).is_ok());
        let error = Out2::with_pitch(&mut out, 4, 6, 5)
            .err()
            .unwrap()
            .to_string();
        assert!(error.starts_with("Out2::with_strides: axis 0"), "{error}");
    }
}
