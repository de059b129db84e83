//! Plain (vectorisable) output stores in grid-stride loops on the CPU executor's elementwise
//! path: `#[kernel]` proves an output owned when every indexed use of it is at the variable of
//! one top-level `for i in thread::grid_stride(p.len())` (`p` a buffer parameter), and the
//! plain-store copy runs each thread's run of the loop in chunks. Checked here: which kernels
//! qualify (`KernelInfo::owned_outputs`), their results against a reference for grids with fewer
//! and more threads than elements, checked mode or not, 2D launches (the atomic path), and the
//! run-time check that stops a thread whose index left its run. Under Miri (scripts/miri.sh)
//! the launches also show that no two OS threads race on an element.
//!
//! The kernels are defined here for the host only; the PTX module declares their entries by
//! hand, as `tests/owned_outputs.rs` does.

mod support;

use ferrocuda_host::{Dim3, Error, LaunchConfig, Module, Ptx};
use ferrocuda_std::{kernel, thread, Out};

/// `out[i] += 2·x[i]` and `twice[i] = 2·out[i]` over a grid-stride loop: both outputs owned.
#[kernel(same_len(x, out, twice))]
pub fn stride_axpy(x: &[f32], out: Out<f32>, twice: Out<f32>) {
    for i in thread::grid_stride(out.len()) {
        let v = out.get(i) + 2.0 * x[i];
        out.set(i, v);
        twice.set(i, 2.0 * v);
    }
}

/// Two grid-stride loops of different counts over one output: thread t's runs of `x.len()` and
/// of `out.len()` are different elements, so the output is not owned.
#[kernel]
pub fn two_counts(x: &[f32], out: Out<f32>) {
    for i in thread::grid_stride(x.len()) {
        if i < out.len() {
            out.set(i, x[i]);
        }
    }
    for i in thread::grid_stride(out.len()) {
        if i >= x.len() {
            out.set(i, -1.0);
        }
    }
}

/// A loop left with `break`, which the chunked copy would not leave: not owned.
#[kernel]
pub fn stride_with_break(x: &[f32], out: Out<f32>) {
    for i in thread::grid_stride(out.len()) {
        if i >= x.len() {
            break;
        }
        out.set(i, x[i]);
    }
}

mod rebinding {
    use ferrocuda_std::{kernel, thread, Out};

    /// A `println!` of this module's own that binds its argument to 0: `#[kernel]` trusts the
    /// standard `println!` to bind nothing, so only the run-time check sees the index change.
    macro_rules! println {
        ($name:ident) => {
            let $name = 0usize;
        };
    }

    /// Every thread writes element 0 (the index was rebound by the macro).
    #[kernel]
    #[allow(unused_variables)]
    pub fn stride_rebound_by_a_macro(out: Out<u32>) {
        for i in thread::grid_stride(out.len()) {
            println!(i);
            out.set(i, 7);
        }
    }
}
use rebinding::stride_rebound_by_a_macro;

static PTX: Ptx = Ptx::new(
    "owned-grid-stride",
    ".version 6.0\n.target sm_70\n.address_size 64\n\
     .visible .entry stride_axpy(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d, \
     .param .u64 e, .param .u64 f) { ret; }\n\
     .visible .entry two_counts(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d) { ret; }\n\
     .visible .entry stride_with_break(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d) { ret; }\n\
     .visible .entry stride_rebound_by_a_macro(.param .u64 a, .param .u64 b) { ret; }\n",
);

/// The executor with or without checked mode (which keeps the atomic stores).
fn module(checked: bool) -> Module {
    support::cpu_module(&PTX, checked)
}

fn n() -> usize {
    support::elements(10_007)
}

#[test]
fn the_macro_proves_only_single_loop_buffer_length_kernels() {
    assert_eq!(stride_axpy.info().owned_outputs, ["out", "twice"]);
    assert_eq!(stride_rebound_by_a_macro.info().owned_outputs, ["out"]);
    for info in [two_counts.info(), stride_with_break.info()] {
        assert!(info.owned_outputs.is_empty(), "{}", info.name);
    }
}

#[test]
fn owned_grid_stride_outputs_are_right_for_any_grid_checked_or_not() {
    let n = n();
    let x: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.25).collect();
    let start: Vec<f32> = (0..n).map(|i| (i % 13) as f32 - 6.0).collect();
    // Exact in f32: small multiples of 0.25.
    let expected: Vec<f32> = (0..n)
        .map(|i| (f64::from(start[i]) + 2.0 * f64::from(x[i])) as f32)
        .collect();
    let doubled: Vec<f32> = expected.iter().map(|v| 2.0 * v).collect();
    for checked in [false, true] {
        let module = module(checked);
        // One thread for all, a few long runs, runs shorter than a chunk, more threads than
        // elements.
        for (grid, block) in [
            (1, 1),
            (3, 32),
            (40, 128),
            ((n as u32).div_ceil(64) + 5, 64),
        ] {
            let (mut out, mut twice) = (start.clone(), vec![0.0f32; n]);
            let config = LaunchConfig::new(grid, block);
            module
                .launch(&stride_axpy, config, (&x, &mut out, &mut twice))
                .unwrap();
            assert_eq!(out, expected, "checked {checked}, {grid}×{block}");
            assert_eq!(twice, doubled, "checked {checked}, {grid}×{block}");
        }
    }
}

#[test]
fn a_2d_launch_keeps_the_atomic_path_and_the_other_kernels_are_right() {
    let n = n();
    let module = module(false);
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    // Two rows per block: threads (x, 0) and (x, 1) share a run, and each adds 2·x to `out`
    // once: reads and writes race, so every element ends at 2x or 4x (a race with a winner).
    let (mut out, mut twice) = (vec![0.0f32; n], vec![0.0f32; n]);
    let config = LaunchConfig::new(4, Dim3::new(32, 2, 1));
    module
        .launch(&stride_axpy, config, (&x, &mut out, &mut twice))
        .unwrap();
    for (i, &got) in out.iter().enumerate() {
        let v = i as f32;
        assert!(got == 2.0 * v || got == 4.0 * v, "element {i}: {got}");
    }
    let config = LaunchConfig::new(3, 64);
    let mut out = vec![0.0f32; n + 5];
    module.launch(&two_counts, config, (&x, &mut out)).unwrap();
    assert_eq!(&out[..n], &x[..]);
    assert!(out[n..].iter().all(|&v| v == -1.0), "{:?}", &out[n..]);
    let mut out = vec![0.0f32; n + 5];
    module
        .launch(&stride_with_break, config, (&x, &mut out))
        .unwrap();
    assert_eq!(&out[..n], &x[..]);
}

#[test]
fn an_index_rebound_behind_the_macro_stops_the_thread() {
    let module = module(false);
    let mut out = vec![0u32; 640];
    let error = module
        .launch(
            &stride_rebound_by_a_macro,
            LaunchConfig::new(2, 32),
            (&mut out,),
        )
        .unwrap_err();
    let Error::KernelPanicked { message, .. } = &error else {
        panic!("not a panic: {error}");
    };
    // A thread other than thread 0 of block 0 (whose run starts at 0) writes element 0.
    assert!(
        message.contains(
            "only written at the index of its grid-stride loop, but the access is \
                          at index 0, not one of this thread's"
        ),
        "{message}"
    );
}
