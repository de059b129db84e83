//! `ndarray` views as 2-D and 3-D kernel arguments (the `ndarray` feature): an
//! [`ArrayView2`](ndarray::ArrayView2)/[`ArrayView3`](ndarray::ArrayView3) becomes an
//! [`Array2`](crate::Array2)/[`Array3`](crate::Array3) input and an
//! [`ArrayViewMut2`](ndarray::ArrayViewMut2)/[`ArrayViewMut3`](ndarray::ArrayViewMut3) an
//! [`Out2`](crate::Out2)/[`Out3`](crate::Out3) output, with the view's shape and without a copy.
//!
//! Only views in standard layout (row-major and contiguous, what `Array2::zeros` makes) convert:
//! the kernel's view is a pointer and row-major strides over one slice. Any other layout (a
//! transposed view, a column-major array, a slice with a step or of some columns) is
//! [`Error::BadShape`] saying so. For an input, `view.as_standard_layout()` makes the one copy
//! that fixes it (and none when the view is already standard); for an output, write into an
//! array in standard layout and `assign` it where it belongs. Views of some columns are not lent
//! in place even though their rows are contiguous: the memory between their rows may be lent
//! mutably to someone else (`ndarray`'s `split_at` and `multi_slice_mut` hand out such
//! interleaved views), and a slice over it would alias that.

use crate::args::{InputData, OutputData};
use crate::array::{exact_shape, ArrayArg, OutArrayArg};
use crate::error::{Error, Result};
use bytemuck::Pod;
use ndarray::{ArrayView, ArrayViewMut, Dim, Dimension};

/// The view's extents as an array of `D`.
fn extents<const D: usize>(shape: &[usize]) -> [usize; D] {
    shape
        .try_into()
        .expect("an ndarray view of D axes has D extents")
}

/// [`Error::BadShape`] for a view that is not in standard layout.
fn not_standard(view: &'static str, shape: &[usize], strides: &[isize], fix: &str) -> Error {
    Error::BadShape {
        view,
        detail: format!(
            "an ndarray view of shape {shape:?} with strides {strides:?} is not in standard \
             layout (row-major and contiguous), which a kernel's view needs; {fix}"
        ),
    }
}

/// The name of the conversion for `D` axes, in errors.
fn name<const D: usize>(input: bool) -> &'static str {
    match (input, D) {
        (true, 2) => "Array2::try_from(ArrayView2)",
        (true, _) => "Array3::try_from(ArrayView3)",
        (false, 2) => "Out2::try_from(ArrayViewMut2)",
        (false, _) => "Out3::try_from(ArrayViewMut3)",
    }
}

/// An [`ArrayView2`](ndarray::ArrayView2) or [`ArrayView3`](ndarray::ArrayView3) as a kernel's
/// `Array2<T>`/`Array3<T>` input: its memory, lent without a copy, with its shape (the `ndarray`
/// feature). Only a view in standard layout (row-major and contiguous) converts; any other is
/// [`Error::BadShape`], and `view.as_standard_layout()` is the one copy that fixes it:
///
/// ```
/// use ferrocuda_host::{Array2, Out2};
/// let a = ndarray::Array2::<f32>::zeros((2, 3));
/// let mut out = ndarray::Array2::<f32>::zeros((3, 2));
/// let input = Array2::try_from(a.view())?;
/// assert_eq!((input.shape(), input.strides()), ([2, 3], [3, 1]));
/// let output = Out2::try_from(out.view_mut())?;
/// assert_eq!(output.shape(), [3, 2]);
/// // A transposed view is not row-major: an error, or one copy on purpose.
/// let error = Array2::try_from(a.t()).err().unwrap();
/// assert!(error.to_string().contains("standard layout"));
/// let standard = a.t().as_standard_layout().into_owned();
/// assert_eq!(Array2::try_from(standard.view())?.shape(), [3, 2]);
/// # Ok::<(), ferrocuda_host::Error>(())
/// ```
impl<'a, T: Pod, const D: usize> TryFrom<ArrayView<'a, T, Dim<[usize; D]>>> for ArrayArg<'a, T, D>
where
    Dim<[usize; D]>: Dimension,
{
    type Error = Error;

    /// # Errors
    /// [`Error::BadShape`] unless the view is in standard layout.
    fn try_from(view: ArrayView<'a, T, Dim<[usize; D]>>) -> Result<Self> {
        let shape = extents::<D>(view.shape());
        let Some(data) = view.to_slice() else {
            return Err(not_standard(
                name::<D>(true),
                view.shape(),
                view.strides(),
                "`view.as_standard_layout()` copies it into one that is (once; no copy if it \
                 already is)",
            ));
        };
        let shape = exact_shape(name::<D>(true), shape, data.len())?;
        Ok(ArrayArg {
            view: data.input_arg(),
            shape,
        })
    }
}

/// An [`ArrayViewMut2`](ndarray::ArrayViewMut2) or [`ArrayViewMut3`](ndarray::ArrayViewMut3)
/// as a kernel's `Out2<T>`/`Out3<T>` output: written in place (on a GPU, copied back into it
/// after the launch), with its shape (the `ndarray` feature). Only a view in standard layout
/// converts: any other is [`Error::BadShape`]; write into an array in standard layout and
/// `assign` it where it belongs.
impl<'a, T: Pod, const D: usize> TryFrom<ArrayViewMut<'a, T, Dim<[usize; D]>>>
    for OutArrayArg<'a, T, D>
where
    Dim<[usize; D]>: Dimension,
{
    type Error = Error;

    /// # Errors
    /// [`Error::BadShape`] unless the view is in standard layout.
    fn try_from(view: ArrayViewMut<'a, T, Dim<[usize; D]>>) -> Result<Self> {
        let shape = extents::<D>(view.shape());
        if !view.is_standard_layout() {
            return Err(not_standard(
                name::<D>(false),
                view.shape(),
                view.strides(),
                "write into an array in standard layout (`Array::zeros`) and `assign` it to \
                 this view",
            ));
        }
        let data = view
            .into_slice()
            .expect("a view in standard layout is one slice");
        let shape = exact_shape(name::<D>(false), shape, data.len())?;
        Ok(OutArrayArg {
            view: data.output_arg(),
            shape,
        })
    }
}
