//! Plain (vectorisable) output stores on the CPU executor's elementwise path: which kernels
//! `#[kernel]` proves touch only `out[index_1d()]` (`KernelInfo::owned_outputs`), their results in
//! 1D launches (plain stores) and 2D ones (atomic stores: threads then share an index, a race with
//! a winner), and the run-time check that stops a thread whose index is not its own. Under Miri
//! (scripts/miri.sh) the launches also show that no two OS threads race on an element.
//!
//! The kernels are defined here for the host only; the PTX module declares their entries by
//! hand, as `tests/launch_validation.rs` does.

mod support;

use ferrocuda_host::{Dim3, Error, LaunchConfig, Module, Ptx};
use ferrocuda_std::{kernel, thread, Out};

/// `out[i] += 2·x[i]`: every use of `out` is at `i = index_1d()`; the grid may have more
/// threads than elements.
#[kernel(same_len(x, out))]
pub fn owned_axpy(x: &[f32], out: Out<f32>) {
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, out.get(i) + 2.0 * x[i]);
    }
}

/// `out[index_1d()] = threadIdx.y + 1`: owned in a 1D launch; with blocks of two rows, the two
/// threads of each column share an element.
#[kernel]
pub fn own_row_number(out: Out<u32>) {
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, thread::thread_idx().y + 1);
    }
}

/// The index halved after it was taken: threads 2k and 2k+1 both write element k.
#[kernel]
pub fn shadowed_index(out: Out<u32>) {
    let i = thread::index_1d();
    let i = i / 2;
    if i < out.len() {
        out.set(i, thread::index_1d() as u32);
    }
}

/// The index of the thread in its block: every block writes the same elements.
#[kernel]
pub fn index_from_elsewhere(out: Out<u32>) {
    let i = thread::thread_idx().x as usize;
    if i < out.len() {
        out.set(i, thread::block_idx().x);
    }
}

/// `out` handed to a function, which could write any element.
#[kernel]
pub fn out_passed_on(out: Out<u32>) {
    let i = thread::index_1d();
    write_one(out, i);
}

fn write_one(out: Out<u32>, i: usize) {
    if i < out.len() {
        out.set(i, 1);
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
    pub fn rebound_by_a_macro(out: Out<u32>) {
        #[allow(unused_variables)]
        let i = thread::index_1d();
        println!(i);
        if i < out.len() {
            out.set(i, 7);
        }
    }
}
use rebinding::rebound_by_a_macro;

static PTX: Ptx = Ptx::new(
    "owned-outputs",
    ".version 6.0\n.target sm_70\n.address_size 64\n\
     .visible .entry owned_axpy(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d) { ret; }\n\
     .visible .entry own_row_number(.param .u64 a, .param .u64 b) { ret; }\n\
     .visible .entry shadowed_index(.param .u64 a, .param .u64 b) { ret; }\n\
     .visible .entry index_from_elsewhere(.param .u64 a, .param .u64 b) { ret; }\n\
     .visible .entry out_passed_on(.param .u64 a, .param .u64 b) { ret; }\n\
     .visible .entry rebound_by_a_macro(.param .u64 a, .param .u64 b) { ret; }\n",
);

/// The executor with or without checked mode (which keeps the atomic stores).
fn module(checked: bool) -> Module {
    support::cpu_module(&PTX, checked)
}

fn n() -> usize {
    support::elements(10_000)
}

#[test]
fn the_macro_proves_only_own_index_kernels() {
    assert_eq!(owned_axpy.info().owned_outputs, ["out"]);
    assert_eq!(own_row_number.info().owned_outputs, ["out"]);
    assert_eq!(rebound_by_a_macro.info().owned_outputs, ["out"]);
    for info in [
        shadowed_index.info(),
        index_from_elsewhere.info(),
        out_passed_on.info(),
    ] {
        assert!(info.owned_outputs.is_empty(), "{}", info.name);
    }
}

#[test]
fn an_owned_output_is_right_in_1d_launches_checked_or_not() {
    let n = n();
    let x: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.25).collect();
    let start: Vec<f32> = (0..n).map(|i| (i % 13) as f32 - 6.0).collect();
    // Exact in f32: small multiples of 0.25.
    let expected: Vec<f32> = (0..n)
        .map(|i| (f64::from(start[i]) + 2.0 * f64::from(x[i])) as f32)
        .collect();
    for checked in [false, true] {
        let module = module(checked);
        for block in [32u32, 64, 256] {
            let mut out = start.clone();
            let grid = (n as u32).div_ceil(block);
            module
                .launch(&owned_axpy, LaunchConfig::new(grid, block), (&x, &mut out))
                .unwrap();
            assert_eq!(out, expected, "checked {checked}, block {block}");
        }
    }
}

#[test]
fn a_2d_launch_of_an_owned_kernel_is_a_race_with_a_winner() {
    let n = n();
    let module = module(false);
    let mut out = vec![0u32; n];
    let one_d = LaunchConfig::new((n as u32).div_ceil(32), 32);
    module.launch(&own_row_number, one_d, (&mut out,)).unwrap();
    assert!(out.iter().all(|&v| v == 1), "{out:?}");
    // Two rows per block: threads (x, 0) and (x, 1) share index_1d, so the atomic path runs.
    out.fill(0);
    let two_rows = LaunchConfig::new((n as u32).div_ceil(16), Dim3::new(16, 2, 1));
    module
        .launch(&own_row_number, two_rows, (&mut out,))
        .unwrap();
    assert!(out.iter().all(|&v| v == 1 || v == 2), "{out:?}");
    // Two rows of blocks: blocks (b, 0) and (b, 1) share index_1d.
    out.fill(0);
    let grid_rows = LaunchConfig::new(Dim3::new((n as u32).div_ceil(32), 2, 1), 32);
    module
        .launch(&own_row_number, grid_rows, (&mut out,))
        .unwrap();
    assert!(out.iter().all(|&v| v == 1), "{out:?}");
}

#[test]
fn kernels_that_do_not_qualify_keep_their_races_with_a_winner() {
    let n = n();
    let module = module(false);
    let config = LaunchConfig::new((n as u32).div_ceil(32), 32);
    let mut out = vec![u32::MAX; n];
    module.launch(&shadowed_index, config, (&mut out,)).unwrap();
    // Threads 2k and 2k+1 write element k: the first half holds one of the two, the rest is
    // untouched.
    let threads = config.grid.x as usize * 32;
    for (k, &v) in out.iter().enumerate() {
        let written = if k < threads / 2 {
            v as usize / 2 == k
        } else {
            v == u32::MAX
        };
        assert!(written, "element {k}: {v}");
    }
    let mut out = vec![u32::MAX; 32];
    let blocks = 5;
    module
        .launch(
            &index_from_elsewhere,
            LaunchConfig::new(blocks, 32),
            (&mut out,),
        )
        .unwrap();
    assert!(out.iter().all(|&v| v < blocks), "{out:?}");
    let mut out = vec![0u32; n];
    module.launch(&out_passed_on, config, (&mut out,)).unwrap();
    assert!(out.iter().all(|&v| v == 1));
}

#[test]
fn an_index_rebound_behind_the_macro_stops_the_thread_in_a_1d_launch() {
    let module = module(false);
    let mut out = vec![0u32; 64];
    let error = module
        .launch(&rebound_by_a_macro, LaunchConfig::new(2, 32), (&mut out,))
        .unwrap_err();
    let Error::KernelPanicked { message, .. } = &error else {
        panic!("not a panic: {error}");
    };
    // Thread 1 of block 0 or 1 of block 1 (33), whichever block panics first.
    assert!(
        message.contains("only written at thread::index_1d() (")
            && message.contains("), but the access is at index 0"),
        "{message}"
    );
    // In a 2D launch the atomic path runs: every thread writes element 0, a race with a winner.
    let mut out = vec![0u32; 64];
    let config = LaunchConfig::new(Dim3::new(2, 2, 1), 32);
    module
        .launch(&rebound_by_a_macro, config, (&mut out,))
        .unwrap();
    assert_eq!(out[0], 7);
    assert!(out[1..].iter().all(|&v| v == 0));
}
