//! [`OwnedOut`]: an [`Out`] whose every element belongs to one simulated thread, written with
//! plain stores that LLVM can vectorise (host only; `#[kernel]`'s elementwise loop uses it).
//!
//! `Out::set` is a relaxed atomic store on the host because two threads of a launch may write
//! one element, which must be a race with a winner, never undefined behaviour; and LLVM does not
//! vectorise atomic stores. When `#[kernel]` sees that a kernel only ever touches
//! `out[index_1d()]` (every use of the output is `out.set(i, v)`, `out.get(i)`, `out.len()` or
//! `out.is_empty()` with `i` its one `let i = thread::index_1d();`), then in a 1D launch thread
//! (b, t) touches only element b·blockDim.x + t: no two simulated threads share an element, so
//! no element is ever accessed from two OS threads, and plain accesses are sound. The macro's
//! syntactic proof is what makes the choice; what makes it sound whatever the macro saw is
//! checked here, at run time:
//!
//! - [`OwnedOut::new`] gives a handle only for a 1D launch (grid and block with y = z = 1), in
//!   which `own` = blockIdx.x·blockDim.x + threadIdx.x differs between any two threads;
//! - every access compares its index with the running thread's `own` (the elementwise loop's
//!   own variable, out of reach of the kernel's code), and a different index panics before it
//!   touches memory; when the index is `index_1d()`, LLVM folds the comparison away;
//! - the kernel's own name for the output is shadowed in the loop by [`OutHeldByTheLoop`], so no
//!   code the macro did not see (a procedural macro's expansion) can reach the buffer by another
//!   path, atomic or not.
//!
//! The second shape is a grid-stride loop: every use of the output with an index is inside one
//! top-level `for i in thread::grid_stride(p.len()) { .. }` of the body, at its `i`, with `p` a
//! parameter. `p.len()` is then one value `n` for every thread of the launch (the parameters
//! are the launch's), each thread runs the loop at most once, and on the CPU thread `t` takes
//! the `t`-th contiguous run of `0..n` ([`GridStrideRun`]), which no other thread's run
//! overlaps. The accesses ([`OwnedOut::set_in`], [`OwnedOut::get_in`]) check their index
//! against the running thread's run, which the macro's copy of the loop computes from the
//! loop's own variables, out of the kernel code's reach.

use super::Out;
use crate::cpu::elementwise::GridStrideRun;
use crate::Dim3;
use core::marker::PhantomData;

/// The output of a kernel that `#[kernel]` proved touches only its own element, for one block
/// of a 1D launch: each access checks that its index is the running thread's own (`own`), then
/// is a plain load or store.
#[doc(hidden)]
pub struct OwnedOut<'a, T> {
    ptr: *mut T,
    len: usize,
    _buffer: PhantomData<&'a [core::cell::Cell<T>]>,
}

/// What the kernel's name for an output held by an [`OwnedOut`] means inside the elementwise
/// loop: nothing (no method, no field), so that code `#[kernel]` could not see, which might
/// write another thread's element, does not compile.
#[doc(hidden)]
pub struct OutHeldByTheLoop;

impl<'a, T: bytemuck::Pod> OwnedOut<'a, T> {
    /// The handle for `out` in a launch of `grid` blocks of `block` threads: `None` unless the
    /// launch is 1D, and `None` in checked mode (whose race check of `out` stays in `Out`).
    ///
    /// # Safety
    /// `grid` and `block` are the running launch's; for the whole launch, every access to
    /// `out`'s buffer is made through an `OwnedOut` of it, by the block's own OS thread, and
    /// either every one with `own` = blockIdx.x·blockDim.x + threadIdx.x of the simulated
    /// thread making it ([`OwnedOut::set`]), or every one with that thread's
    /// [`GridStrideRun`] of one `n`, the same for the whole launch ([`OwnedOut::set_in`]).
    #[inline(always)]
    pub unsafe fn new(out: Out<'a, T>, grid: Dim3, block: Dim3) -> Option<Self> {
        let one_dimensional = grid.y == 1 && grid.z == 1 && block.y == 1 && block.z == 1;
        (one_dimensional && out.check.is_null()).then_some(OwnedOut {
            ptr: out.ptr,
            len: out.len,
            _buffer: PhantomData,
        })
    }

    crate::index::len_methods!();

    /// `out.set(index, value)` by the thread whose own element is `own`.
    ///
    /// # Panics
    /// If `index` is not `own`, or past the end.
    ///
    /// # Safety
    /// `own` is the running simulated thread's (see [`OwnedOut::new`]).
    #[inline(always)]
    #[track_caller]
    pub unsafe fn set(&self, own: usize, index: usize, value: T) {
        let element = self.element(own, index);
        // SAFETY: `element` is in bounds and is `own`'s, which no other simulated thread of
        // this 1D launch touches (`new`'s contract), so no other OS thread accesses it.
        unsafe { element.write(value) }
    }

    /// `out.get(index)` by the thread whose own element is `own`.
    ///
    /// # Panics
    /// If `index` is not `own`, or past the end.
    ///
    /// # Safety
    /// As [`OwnedOut::set`].
    #[inline(always)]
    #[track_caller]
    pub unsafe fn get(&self, own: usize, index: usize) -> T {
        let element = self.element(own, index);
        // SAFETY: as in `set`.
        unsafe { element.read() }
    }

    /// `out.set(index, value)` in a grid-stride loop, by the thread whose run of the loop is
    /// `run`.
    ///
    /// # Panics
    /// If `index` is not in `run`, or past the end.
    ///
    /// # Safety
    /// `run` is the running simulated thread's (see [`OwnedOut::new`]).
    #[inline(always)]
    #[track_caller]
    pub unsafe fn set_in(&self, run: &GridStrideRun, index: usize, value: T) {
        if !run.contains(index) {
            not_in_run(index);
        }
        let element = self.in_bounds(index);
        // SAFETY: `element` is in bounds and in the running thread's run of a loop whose `n`
        // every thread shares, which no other thread's run overlaps (`new`'s contract), so no
        // other OS thread accesses it.
        unsafe { element.write(value) }
    }

    /// `out.get(index)` in a grid-stride loop, by the thread whose run of the loop is `run`.
    ///
    /// # Panics
    /// If `index` is not in `run`, or past the end.
    ///
    /// # Safety
    /// As [`OwnedOut::set_in`].
    #[inline(always)]
    #[track_caller]
    pub unsafe fn get_in(&self, run: &GridStrideRun, index: usize) -> T {
        if !run.contains(index) {
            not_in_run(index);
        }
        let element = self.in_bounds(index);
        // SAFETY: as in `set_in`.
        unsafe { element.read() }
    }

    #[inline(always)]
    #[track_caller]
    fn element(&self, own: usize, index: usize) -> *mut T {
        if index != own {
            not_own(index, own);
        }
        self.in_bounds(index)
    }

    #[inline(always)]
    #[track_caller]
    fn in_bounds(&self, index: usize) -> *mut T {
        if index >= self.len {
            crate::mem::out_of_bounds("an output", index, self.len);
        }
        // SAFETY: `index < len`, checked just above, and `ptr` is valid for `len` elements.
        unsafe { self.ptr.add(index) }
    }
}

/// A kernel that `#[kernel]` saw touch only `out[index_1d()]` touched another element: only
/// code the macro could not see (a procedural macro's expansion rebinding the index) gets here.
#[cold]
#[inline(never)]
#[track_caller]
fn not_own(index: usize, own: usize) -> ! {
    panic!(
        "#[kernel] proved this output is only written at thread::index_1d() ({own}), but the \
         access is at index {index}: a macro rebound the index? Write `out.set(i, ..)` with \
         `let i = thread::index_1d();` bound once, or use another name for other indices"
    )
}

/// As [`not_own`], for a grid-stride loop's variable.
#[cold]
#[inline(never)]
#[track_caller]
fn not_in_run(index: usize) -> ! {
    panic!(
        "#[kernel] proved this output is only written at the index of its grid-stride loop, but \
         the access is at index {index}, not one of this thread's: a macro rebound the index? \
         Write `out.set(i, ..)` with the `i` of `for i in thread::grid_stride(..)`, or use \
         another name for other indices"
    )
}

#[cfg(test)]
mod tests {
    use super::{GridStrideRun, Out, OwnedOut};
    use crate::Dim3;

    fn handle(buffer: &mut [f32], grid: Dim3, block: Dim3) -> Option<OwnedOut<'_, f32>> {
        // SAFETY: the `Out` covers the whole local buffer, used only through it; and the
        // tests below make every access with `own` = the index, from this one thread.
        unsafe {
            let out = Out::from_raw_parts(buffer.as_mut_ptr(), buffer.len());
            OwnedOut::new(out, grid, block)
        }
    }

    #[test]
    fn only_a_one_dimensional_launch_gets_a_handle() {
        let mut buffer = [0.0f32; 4];
        let one = Dim3::new(1, 1, 1);
        assert!(handle(&mut buffer, Dim3::new(4, 1, 1), Dim3::new(32, 1, 1)).is_some());
        for (grid, block) in [
            (Dim3::new(4, 2, 1), Dim3::new(32, 1, 1)),
            (Dim3::new(4, 1, 2), Dim3::new(32, 1, 1)),
            (one, Dim3::new(32, 2, 1)),
            (one, Dim3::new(32, 1, 2)),
        ] {
            assert!(
                handle(&mut buffer, grid, block).is_none(),
                "{grid:?} {block:?}"
            );
        }
    }

    #[test]
    fn own_index_round_trips_with_plain_accesses() {
        let mut buffer = [0.0f32; 4];
        let out = handle(&mut buffer, Dim3::new(1, 1, 1), Dim3::new(4, 1, 1)).unwrap();
        for i in 0..out.len() {
            // SAFETY: `i` plays the thread whose own element is `i`.
            unsafe { out.set(i, i, i as f32 * 1.5) };
            assert_eq!(unsafe { out.get(i, i) }, i as f32 * 1.5);
        }
        assert_eq!(buffer, [0.0, 1.5, 3.0, 4.5]);
    }

    #[test]
    #[should_panic(
        expected = "only written at thread::index_1d() (2), but the access is at index 3"
    )]
    fn another_threads_element_panics_before_touching_it() {
        let mut buffer = [0.0f32; 4];
        let out = handle(&mut buffer, Dim3::new(1, 1, 1), Dim3::new(4, 1, 1)).unwrap();
        // SAFETY: `own` = 2 plays thread 2; the access is refused before it is made.
        unsafe { out.set(2, 3, 1.0) };
    }

    #[test]
    fn a_grid_stride_run_round_trips_with_plain_accesses() {
        let mut buffer = [0.0f32; 10];
        let out = handle(&mut buffer, Dim3::new(1, 1, 1), Dim3::new(4, 1, 1)).unwrap();
        for t in 0..4 {
            let run = GridStrideRun::new(out.len(), t, 4);
            for i in run.chunks().flatten() {
                // SAFETY: `run` is thread `t`'s, of one `n` for all four threads.
                unsafe { out.set_in(&run, i, out.get_in(&run, i) + t as f32) };
            }
        }
        assert_eq!(buffer, [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0]);
    }

    #[test]
    #[should_panic(expected = "the access is at index 3, not one of this thread's")]
    fn an_index_outside_the_run_panics_before_touching_it() {
        let mut buffer = [0.0f32; 10];
        let out = handle(&mut buffer, Dim3::new(1, 1, 1), Dim3::new(4, 1, 1)).unwrap();
        // SAFETY: thread 0's run (0..3); the access is refused before it is made.
        unsafe { out.set_in(&GridStrideRun::new(10, 0, 4), 3, 1.0) };
    }

    #[test]
    #[should_panic(expected = "index 4 out of bounds for an output of length 4")]
    fn own_index_past_the_end_panics() {
        let mut buffer = [0.0f32; 4];
        let out = handle(&mut buffer, Dim3::new(1, 1, 1), Dim3::new(8, 1, 1)).unwrap();
        // SAFETY: thread 4 of an 8-thread block over 4 elements.
        unsafe { out.set(4, 4, 1.0) };
    }
}
