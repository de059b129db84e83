//! Block-shared memory: [`Shared`] arrays declared with [`shared!`](crate::shared!) or taken
//! from the launch's dynamic shared memory with [`dynamic_shared`].
//!
//! Shared memory is one array per block that all its threads read and write: on a GPU it sits on
//! the multiprocessor and is as fast as a register file, which is what tiled and reduction
//! kernels are built on. Threads see each other's writes after a `sync_threads()`.

//! Each element access is one call to `backend::shared` (`ld.shared`/`st.shared` on the GPU,
//! plain loads and stores on the host). The `cfg(target_arch)`s left here are the CPU
//! executor's checked mode (an allocation id and a flag in the handle, each access recorded),
//! a feature of the language on the host, not a machine primitive; and the handle's
//! constructors, which differ by those fields.

use crate::backend::shared::{self as machine, Window};
use crate::index::{checked_index, ElementIndex};
use core::marker::PhantomData;

/// A block's shared-memory array of `T`: a handle every thread of the block holds, with indexed
/// [`get`](Shared::get) and [`set`](Shared::set) instead of a `&mut` (which thousands of threads
/// cannot share), and atomics.
///
/// Make one with [`shared!`](crate::shared!) (size fixed in the kernel) or [`dynamic_shared`]
/// (size given at launch). Indices are checked: past the end traps on the GPU and panics on the
/// CPU, where checked mode also reports races between threads of the block and reads of elements
/// no thread has written.
///
/// ```ignore
/// let tile = shared!([f32; 256]);
/// tile.set(t, x[i]);
/// sync_threads();
/// let left = tile.get((t + 255) % 256);
/// ```
///
/// The lifetime `'b` is the block's: `#[kernel]` lends each run of the kernel body a
/// [`BlockScope`] and every `Shared` borrows it, so a handle cannot outlive the block that owns
/// the memory (kept in a `static` or a `thread_local!`, it would read another block's or a freed
/// arena later). Helper functions write `Shared<T>` (the lifetime elided) or `Shared<'_, T>`:
///
/// ```compile_fail
/// use ferrocuda_std::{kernel, shared, Shared};
/// std::thread_local! {
///     static KEPT: core::cell::Cell<Option<Shared<'static, u32>>> = const { core::cell::Cell::new(None) };
/// }
/// #[kernel]
/// pub fn keeps_its_tile(out: ferrocuda_std::Out<u32>) {
///     let tile = shared!([u32; 32]);
///     KEPT.with(|k| k.set(Some(tile))); // error: borrowed data escapes the kernel body
/// }
/// ```
///
/// Nor can a handle leave the OS thread that runs its block: `Shared` is neither `Send` nor
/// `Sync`, which is what makes the CPU executor's plain (non-atomic) loads and stores of shared
/// memory sound:
///
/// ```compile_fail
/// use ferrocuda_std::{kernel, shared, Out};
/// #[kernel]
/// pub fn shares_its_tile_with_an_os_thread(out: Out<u32>) {
///     let tile = shared!([u32; 32]);
///     std::thread::scope(|s| {
///         s.spawn(|| tile.set(0, 1)); // error: `Shared` cannot be shared between threads
///     });
/// }
/// ```
pub struct Shared<'b, T> {
    ptr: *mut T,
    len: usize,
    /// Borrows the block's [`BlockScope`].
    _block: PhantomData<&'b BlockScope>,
    /// `ptr` in the machine's shared window (on the GPU, its 32-bit address, computed once where
    /// the `Shared` is made; nothing on the host).
    window: Window,
    /// Which allocation of the block's arena (CPU checked mode).
    #[cfg(not(target_arch = "nvptx64"))]
    id: u32,
    /// Whether accesses are checked (CPU checked mode).
    #[cfg(not(target_arch = "nvptx64"))]
    checked: bool,
}

impl<T> Clone for Shared<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Shared<'_, T> {}

/// The block a kernel body runs for, as a lifetime: `#[kernel]`'s entries (PTX and CPU) make one
/// in their own frame and lend `&BlockScope` to each run of the body; [`Shared`] handles and the
/// kernel's slices and outputs borrow it, so none of them outlives the block. Not for kernel
/// authors: `#[kernel]` passes it where it is needed ([`dynamic_shared`]).
#[derive(Debug)]
pub struct BlockScope {
    _private: (),
}

impl BlockScope {
    /// A scope; made by `#[kernel]`'s entries only.
    ///
    /// # Safety
    /// Only while a block of a kernel runs, in a frame that ends before the block does (the
    /// entry's own), and lent only to that block's kernel body: handles made from it are then
    /// valid for as long as they can live.
    #[doc(hidden)]
    #[inline(always)]
    pub const unsafe fn new() -> Self {
        BlockScope { _private: () }
    }
}

impl<'b, T: bytemuck::Pod> Shared<'b, T> {
    /// A `Shared` over `len` elements at a shared-memory address. `#[kernel]` calls it for each
    /// `shared!`; kernels do not.
    ///
    /// # Safety
    /// `ptr` must be the generic address of at least `len` elements of `T` of this block's shared
    /// memory, aligned for `T`, and `scope` the scope of the block running (lent by the entry).
    #[cfg(target_arch = "nvptx64")]
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(_scope: &'b BlockScope, ptr: *mut T, len: usize) -> Self {
        Shared {
            ptr,
            len,
            window: Window::of(ptr),
            _block: PhantomData,
        }
    }

    /// As [`from_raw_parts`](Shared::from_raw_parts), with `window`, the array's shared-window
    /// address as its declaration gives it (`mov.u32 w, SYMBOL`): `#[kernel]` calls it for each
    /// `shared!`. ptxas turns the conversion of a generic address back into the window into
    /// three more instructions (and keeps the generic address's upper half in a register) than
    /// the symbol's own 32-bit address, which is what nvcc uses.
    ///
    /// # Safety
    /// As [`from_raw_parts`](Shared::from_raw_parts), and `window` is `ptr`'s shared-window
    /// address.
    #[cfg(target_arch = "nvptx64")]
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts_in_window(
        _scope: &'b BlockScope,
        ptr: *mut T,
        window: u32,
        len: usize,
    ) -> Self {
        Shared {
            ptr,
            len,
            window: Window::from_address(window),
            _block: PhantomData,
        }
    }

    /// # Safety
    /// `ptr` must be valid for `len` elements of `T`, aligned, for `'b`, and used only through
    /// `Shared` handles by the threads of the current block.
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub(crate) unsafe fn from_host_parts(
        _scope: &'b BlockScope,
        ptr: *mut T,
        len: usize,
        id: u32,
        checked: bool,
    ) -> Self {
        Shared {
            ptr,
            len,
            window: Window::of(ptr),
            _block: PhantomData,
            id,
            checked,
        }
    }

    crate::index::len_methods!();

    /// Reads element `index` (a `usize`, or any [`ElementIndex`]: `u32`, `i32`, ...).
    ///
    /// # Panics
    /// If `index >= self.len()` (on the GPU: traps). In CPU checked mode, also on a race or a read
    /// of an element no thread of the block has written.
    #[inline(always)]
    #[track_caller]
    pub fn get<I: ElementIndex>(&self, index: I) -> T {
        let index = self.checked(index, Access::Read);
        // SAFETY: `index` is in bounds, checked just above.
        unsafe { machine::load(self.ptr, self.window, index) }
    }

    /// Writes `value` at element `index` (any [`ElementIndex`]).
    ///
    /// # Panics
    /// If `index >= self.len()` (on the GPU: traps). In CPU checked mode, also on a race.
    #[inline(always)]
    #[track_caller]
    pub fn set<I: ElementIndex>(&self, index: I, value: T) {
        let index = self.checked(index, Access::Write);
        // SAFETY: `index` is in bounds, checked just above.
        unsafe { machine::store(self.ptr, self.window, index, value) }
    }

    /// Element `index`'s shared-window address (no bounds check), for the GPU instructions that
    /// take one (`ldmatrix`); only the GPU has a shared window.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub(crate) fn window_at(&self, index: usize) -> u32 {
        machine::element::<T>(self.window, index)
    }

    /// The array's start and its shared window, for the machine's operations that take an
    /// element (`backend::async_copy::start`).
    #[inline(always)]
    pub(crate) fn machine_parts(&self) -> (*mut T, Window) {
        (self.ptr, self.window)
    }

    /// Element `index` as the machine's shared-memory operations take it (on the GPU its
    /// shared-window address carried in the pointer, on the host its address), no checks.
    ///
    /// # Safety
    /// `index < self.len()`.
    #[inline(always)]
    pub(crate) unsafe fn element_address(&self, index: usize) -> *mut T {
        // SAFETY: the caller's contract.
        unsafe { machine::element_address(self.ptr, self.window, index) }
    }

    /// The first element's address, for raw access in `unsafe` code (not checked for races).
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }

    /// Bounds-checks `index` (and, in checked mode, the access); it as a `usize`.
    #[inline(always)]
    #[track_caller]
    fn checked<I: ElementIndex>(&self, index: I, access: Access) -> usize {
        let index = checked_index(index, self.len, "a shared array");
        self.check_part::<T>(index, access);
        index
    }
}

// Checked mode's controls: the CPU executor's only.
#[cfg(not(target_arch = "nvptx64"))]
impl<T> Shared<'_, T> {
    /// The handle with checked mode's access checks kept only if `checks`: what `#[kernel]` makes
    /// of each `shared!` and `dynamic_shared()` on the host, and of a handle's name at each method
    /// call through it (its `checked` may come through memory there: a closure's capture, a value
    /// carried across a barrier). The split path's copy for unchecked launches passes a
    /// constant `false`, so LLVM drops each access's checked-mode branch and its call (a call,
    /// even on a path never taken, made it keep a hot loop's registers on the stack). Bounds
    /// checks stay.
    #[doc(hidden)]
    #[inline(always)]
    pub fn __checks_if(self, checks: bool) -> Self {
        Shared {
            checked: self.checked && checks,
            ..self
        }
    }

    /// Whether accesses through this handle are checked (CPU checked mode): when not, a caller
    /// that bounds-checked a whole range may read it raw ([`crate::mma::SharedTile`]'s fragments).
    #[inline(always)]
    pub(crate) fn checks_accesses(&self) -> bool {
        self.checked
    }
}

impl<T> Shared<'_, T> {
    /// In CPU checked mode, checks and records an access to the `U` at `index` (in units of
    /// `U`, already bounds-checked), made at the caller's source location; nothing otherwise.
    #[inline(always)]
    #[track_caller]
    fn check_part<U>(&self, index: usize, access: Access) {
        // Checked mode is a feature of the CPU executor (the language there), not a primitive
        // the GPU implements otherwise.
        #[cfg(not(target_arch = "nvptx64"))]
        if self.checked {
            let at = core::panic::Location::caller();
            crate::cpu::check_access(self.id, index, core::mem::size_of::<U>(), access, at);
        }
        #[cfg(target_arch = "nvptx64")]
        let _ = (index, access);
    }
}

/// Two-dimensional access to a `Shared<[T; M]>` (from `shared!([[T; M]; N])`, e.g. the padded
/// `[[f32; 33]; 32]` tile of a transpose): one element at a time, where `get(row)` would copy
/// the whole row. On the CPU, checked mode tracks each element on its own, so threads writing
/// different columns of one row do not race.
impl<T: bytemuck::Pod, const M: usize> Shared<'_, [T; M]> {
    /// Reads element `[row][col]` (each a `usize`, or any [`ElementIndex`]: `u32`, `i32`, ...).
    ///
    /// # Panics
    /// If `row` or `col` is negative, `row >= self.len()` or `col >= M` (on the GPU: traps). In
    /// CPU checked mode, also on a race or a read of an element no thread of the block has
    /// written.
    #[inline(always)]
    #[track_caller]
    pub fn get2<R: ElementIndex, C: ElementIndex>(&self, row: R, col: C) -> T {
        let flat = self.check2(row, col, Access::Read);
        let base = self.ptr as *mut T;
        // SAFETY: `flat` is in bounds, checked just above: the rows are contiguous `[T; M]`s.
        unsafe { machine::load(base, self.window, flat) }
    }

    /// Writes `value` at element `[row][col]` (any [`ElementIndex`]s).
    ///
    /// # Panics
    /// If `row` or `col` is negative, `row >= self.len()` or `col >= M` (on the GPU: traps). In
    /// CPU checked mode, also on a race.
    #[inline(always)]
    #[track_caller]
    pub fn set2<R: ElementIndex, C: ElementIndex>(&self, row: R, col: C, value: T) {
        let flat = self.check2(row, col, Access::Write);
        let base = self.ptr as *mut T;
        // SAFETY: `flat` is in bounds, checked just above.
        unsafe { machine::store(base, self.window, flat, value) }
    }

    /// Bounds-checks `[row][col]` (and, in checked mode, the access); its index among the `T`s.
    #[inline(always)]
    #[track_caller]
    fn check2<R: ElementIndex, C: ElementIndex>(&self, row: R, col: C, access: Access) -> usize {
        let row = checked_index(row, self.len, "the rows of a shared array");
        let col = checked_index(col, M, "a row of a shared array");
        let flat = row * M + col;
        self.check_part::<T>(flat, access);
        flat
    }
}

// What checked mode records of an access: the CPU runtime's kind; on the GPU, which has no
// checked mode, a stand-in that `check_part` drops.
#[cfg(not(target_arch = "nvptx64"))]
use crate::cpu::Access;

#[cfg(target_arch = "nvptx64")]
#[derive(Clone, Copy)]
enum Access {
    Read,
    Write,
    Atomic,
}

impl<T: crate::atomic::Atomic> Shared<'_, T> {
    /// The element the atomics of `Space::Block` work on: on the host its address, on the GPU
    /// its 32-bit shared-window address carried in the pointer (what `atom.shared` takes; see
    /// [`Atomic`](crate::atomic::Atomic)).
    #[inline(always)]
    #[track_caller]
    fn atomic_element(&self, index: usize) -> *mut T {
        let index = self.checked(index, Access::Atomic);
        // SAFETY: `index` is in bounds, checked just above.
        unsafe { self.element_address(index) }
    }

    crate::atomic::atomic_methods!(Block, "the block");
}

/// The launch's dynamic shared memory (`shared_mem_bytes` of the launch config) as an array of
/// `T`: `shared_mem_bytes / size_of::<T>()` elements, 16-byte aligned. Every call in a block
/// returns the same memory, so views of different types alias, as CUDA's `extern __shared__`.
///
/// ```ignore
/// let counts = dynamic_shared::<u32>(); // launched with shared_mem_bytes = 4 * bins
/// ```
///
/// Call it as `dynamic_shared::<T>()`, directly in the body of a `#[kernel]` function:
/// `#[kernel]` passes it the block's scope, which ties the handle to the block ([`Shared`]'s
/// lifetime). Elsewhere (a helper function) there is no scope to pass, so it does not compile;
/// take the handle in the kernel and pass it on:
///
/// ```compile_fail
/// fn helper() -> ferrocuda_std::Shared<'static, u32> {
///     ferrocuda_std::dynamic_shared::<u32>() // error: expects the block's scope
/// }
/// ```
#[inline(always)]
pub fn dynamic_shared<T: bytemuck::Pod>(block: &BlockScope) -> Shared<'_, T> {
    // The handle's constructors differ by checked mode's fields (see the module's doc).
    #[cfg(target_arch = "nvptx64")]
    {
        let (address, bytes) = machine::dynamic_memory();
        let len = bytes as usize / core::mem::size_of::<T>().max(1);
        // SAFETY: the dynamic shared memory of this block, 16-byte aligned, `bytes` long; a
        // `BlockScope` exists only inside a block (see `BlockScope::new`).
        unsafe { Shared::from_raw_parts(block, address as *mut T, len) }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let (ptr, len, id, checked) = crate::cpu::dynamic_memory::<T>();
        // SAFETY: the CPU runtime's dynamic shared memory of this block: 16-byte aligned, at
        // least `len` elements of `T`, kept while the block runs; `block` (a `BlockScope` exists
        // only inside a block) keeps the handle inside it.
        unsafe { Shared::from_host_parts(block, ptr, len, id, checked) }
    }
}

/// Declares a block-shared array: `shared!([T; N])` gives a [`Shared<T>`] of `N` elements, the
/// same memory for every thread of the block (CUDA `__shared__ T name[N]`).
///
/// It must be written directly in a `#[kernel]` function's body, which gives each array its own
/// place in the PTX module; pass the `Shared` on to helper functions. Elsewhere it does not
/// compile:
///
/// ```compile_fail
/// fn helper() -> ferrocuda_std::Shared<f32> {
///     ferrocuda_std::shared!([f32; 64]) // error: `shared!` must be written directly in ... `#[kernel]`
/// }
/// ```
///
/// The element type is plain data (`bytemuck::Pod`, arrays included: `shared!([[f32; 33]; 32])`
/// is a padded 32 × 33 tile, read with [`Shared::get2`]); `N` is a constant: a literal, a `const`
/// of the module, or a `const` declared in the kernel body.
///
/// ```ignore
/// #[kernel]
/// pub fn reverse_block(x: &[f32], out: Out<f32>) {
///     let tile = shared!([f32; 256]);
///     let t = thread::thread_idx().x as usize;
///     tile.set(t, x[thread::index_1d()]);
///     thread::sync_threads();
///     out.set(thread::index_1d(), tile.get(255 - t));
/// }
/// ```
#[macro_export]
macro_rules! shared {
    // What `#[kernel]` leaves behind after replacing a `shared!`.
    (@rewritten_by_kernel) => {};
    ($($tokens:tt)*) => {
        ::core::compile_error!(
            "`shared!` must be written directly in the body of a `#[kernel]` function (not in a \
             helper function): declare the array in the kernel and pass the `Shared` handle on"
        )
    };
}
