//! `#[kernel]`: one Rust function, two compilations.
//!
//! On `nvptx64` the function becomes a PTX `.entry` whose parameters are explicit
//! (pointer, length) pairs for slices and values for scalars. On the host it becomes a constant
//! `ferrocuda_std::abi::Kernel` handle of the same name: the PTX entry name, the parameter list, and a
//! CPU entry that rebuilds the arguments from the same PTX parameters and runs the body once per
//! thread of a block. See `ferrocuda_std::abi` for the parameter mapping. A generic kernel
//! (`instances(...)`, generics.rs) is one such entry per instance, and on the host a generic
//! function `name::<T>()` giving the instance's handle.

#![warn(missing_docs)]

mod cpu_features;
mod cpu_path;
mod expand;
mod generics;
mod grid;
mod instance;
mod kernel;
mod math_methods;
mod options;
mod owned_outputs;
mod owned_outputs_rewrite;
mod param_tokens;
mod pod;
mod regions;
mod rematerialize;
mod shared;
mod signature;
#[cfg(test)]
mod tests;

use options::KernelOptions;
use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use syn::spanned::Spanned;
use syn::ItemFn;

/// Marks a function as a GPU kernel.
///
/// Parameters: `&[T]` for inputs, `ferrocuda_std::Out<T>` for outputs, any `T: bytemuck::Pod` by value,
/// and the views that carry a shape: `Array2<T>`/`Array3<T>` inputs, `Out2<T>`/`Out3<T>` outputs;
/// and, last, `grid: ferrocuda_std::Grid` for a kernel that calls `grid.sync()` (it is then
/// cooperative: `launch_cooperative!` passes the grid, the caller does not).
/// The function returns nothing.
///
/// `#[kernel(same_len(a, b, out))]` makes every launch check that those slices and outputs have
/// equal lengths, and fail with an error naming them otherwise. The kernel is compiled knowing
/// they are equal, so `b[i]` needs no bounds check once `i < a.len()` held: launch it only through
/// ferrocuda's checked launch (`launch!`, `Module::launch`), which makes that check.
///
/// ```ignore
/// #[kernel(same_len(x, y))]
/// pub fn saxpy(a: f32, x: &[f32], y: Out<f32>) {
///     let i = thread::index_1d();
///     if i < y.len() {
///         y.set(i, a * x[i] + y.get(i));
///     }
/// }
/// ```
///
/// `len(x = rows * cols)` makes every launch check that `x` (a `&[T]` or `Out<T>`) has as many
/// elements as the product of those `u32` parameters, and that the product is at most
/// `u32::MAX`, so the kernel may index `x` with 32-bit arithmetic and skip bounds checks it can
/// prove from `row < rows`, `col < cols` (in a `SAFETY` comment). `block(32, 8)` (up to three
/// constant sizes, missing ones 1) makes every launch check the block shape, for a kernel that
/// is only correct with one. `index32(a, out)` makes every launch check that those 2D or 3D
/// views have at most `u32::MAX` elements of memory and extents of at most `u32::MAX`, and the
/// views then compute their offsets in 32 bits (as CUDA C's `unsigned` indices); such a launch
/// also runs at most 2^32 threads along each axis, so the kernel may compute its grid index in
/// 32 bits. `transposed(out, a)` (two 2D views) makes every launch check that `out`'s shape is
/// `a`'s reversed (`out.rows() == a.cols()`, `out.cols() == a.rows()`), so a transpose's
/// `out.set((x, y), ..)` needs no bounds check of its own once `a[(y, x)]`'s holds. All are
/// told to the compiler like `same_len`.
///
/// A kernel is generic only with `instances(...)`, which lists the types it is built for (a PTX
/// entry has one concrete signature): `#[kernel(instances(f32, f64))] fn scale<T: Number>(...)`
/// builds the entries `scale_f32` and `scale_f64` (the kernel's name, `_`, each type's name with
/// other characters than letters and digits made `_`), and `instances((f32, u32), (f64, u64))`
/// those of a kernel with two type parameters (`scale_f32_u32`, ...). `f32 as name` names an
/// entry itself. On the host `scale::<f64>()` is the instance's handle, and
/// `launch!(m, scale::<f64>[grid, block](...))` or `launch!(m, scale[grid, block](...))` (the
/// arguments' types pick the instance) launch it; an instance not listed does not compile, and
/// the error lists those that are.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let options = syn::parse_macro_input!(attr as KernelOptions);
    let function = syn::parse_macro_input!(item as ItemFn);
    match kernel::expand(options, function) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

/// Makes a `#[repr(C)]` struct a plain-data kernel parameter (or shared-memory element) without a
/// bytemuck dependency of the user's own: adds `#[derive(Clone, Copy, Pod, Zeroable)]` through
/// ferrocuda-std's bytemuck. Write it above `#[repr(C)]`:
///
/// ```ignore
/// #[ferrocuda_std::pod]
/// #[repr(C)]
/// pub struct Particle { pub position: [f32; 3], pub mass: f32 }
/// ```
///
/// `#[repr(C)]` is required (the field order and padding Rust picks otherwise may differ
/// between the host and the GPU compilation), and bytemuck's derive refuses structs with
/// padding bytes, which would reach the GPU uninitialized.
#[proc_macro_attribute]
pub fn pod(attr: TokenStream, item: TokenStream) -> TokenStream {
    if !attr.is_empty() {
        let error = syn::Error::new(
            TokenStream2::from(attr).span(),
            "`#[pod]` takes no arguments",
        );
        return error.to_compile_error().into();
    }
    let item = syn::parse_macro_input!(item as syn::DeriveInput);
    match pod::expand(item) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}
