//! What [`launch!`](crate::launch!) takes for the kernel: a [`Kernel`] handle (a plain
//! `#[kernel]`), or a generic kernel's instance function (`scale::<f64>`, or `scale` with the
//! instance left to the arguments' types).

use ferrocuda_std::abi::Kernel;

/// A kernel to launch: a [`Kernel`], or a function giving one (the host side of a generic
/// kernel, `#[kernel(instances(f32, f64))] fn scale<T: Number>(...)`, is `fn scale<T>() ->
/// Kernel<...>`). A handle can only be made by `#[kernel]` (its constructor is `unsafe`), so
/// implementing this for any such function is sound.
///
/// ```
/// use ferrocuda_host::KernelHandle;
/// use ferrocuda_std::{kernel, thread, Number, Out};
///
/// #[kernel]
/// pub fn clear(out: Out<u32>) {
///     out.set(thread::index_1d(), 0);
/// }
///
/// #[kernel(instances(f32, f64))]
/// pub fn fill<T: Number>(out: Out<T>) {
///     out.set(thread::index_1d(), T::ONE);
/// }
///
/// assert_eq!(KernelHandle::kernel(&clear).name(), "clear");
/// assert_eq!(KernelHandle::kernel(&fill::<f64>).name(), "fill_f64");
/// ```
pub trait KernelHandle<P> {
    /// The handle.
    fn kernel(&self) -> Kernel<P>;
}

impl<P> KernelHandle<P> for Kernel<P> {
    fn kernel(&self) -> Kernel<P> {
        *self
    }
}

impl<P, F: Fn() -> Kernel<P>> KernelHandle<P> for F {
    fn kernel(&self) -> Kernel<P> {
        self()
    }
}
