//! Launch validation on the CPU executor: random grids, blocks, dynamic shared memory, argument
//! lengths and element types either fail with an error that names the problem or run correctly;
//! never a panic, crash or hang. And a kernel handle whose parameter list disagrees with the
//! memory passed is refused before anything runs, in release builds too.
//!
//! The kernels are defined here for the host only; the PTX module declares their entries by
//! hand, with the parameter sizes `#[kernel]` gives them, as a built module would.

mod support;

use ferrocuda_host::{Device, Dim3, Error, LaunchConfig, Module, Ptx};
use ferrocuda_std::abi::{Kernel, Output, Param, Slice};
use ferrocuda_std::{kernel, thread, Out};
use proptest::prelude::*;

/// The linear index of this thread in the whole grid, and the grid's thread count: a 3D grid of
/// 3D blocks, x fastest.
fn global_thread() -> (usize, usize) {
    let (t, b) = (thread::thread_idx(), thread::block_idx());
    let (bd, gd) = (thread::block_dim(), thread::grid_dim());
    let in_block = (t.z as usize * bd.y as usize + t.y as usize) * bd.x as usize + t.x as usize;
    let block = (b.z as usize * gd.y as usize + b.y as usize) * gd.x as usize + b.x as usize;
    let per_block = bd.count() as usize;
    (
        block * per_block + in_block,
        gd.count() as usize * per_block,
    )
}

/// `copy_<T>(x, out)`: every element of `x` into `out` (a grid-stride loop over any grid), and
/// one byte of dynamic shared memory written per block, so its size is exercised too.
macro_rules! copy_kernel {
    ($name:ident, $t:ty) => {
        #[kernel(same_len(x, out))]
        pub fn $name(x: &[$t], out: Out<$t>) {
            let (mut i, total) = global_thread();
            let scratch = ferrocuda_std::dynamic_shared::<u8>();
            if !scratch.is_empty() && thread::thread_idx() == Dim3::new(0, 0, 0) {
                scratch.set(scratch.len() - 1, 1);
            }
            while i < x.len() {
                out.set(i, x[i]);
                i += total;
            }
        }
    };
}
copy_kernel!(copy_u8, u8);
copy_kernel!(copy_u64, u64);
copy_kernel!(copy_triple, [f32; 3]);

/// Entries for the kernels above: a slice and an output are each a `.u64` pointer and length.
static PTX: Ptx = Ptx::new(
    "launch-validation",
    ".version 6.0\n.target sm_70\n.address_size 64\n\
     .visible .entry copy_u8(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d) { ret; }\n\
     .visible .entry copy_u64(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d) { ret; }\n\
     .visible .entry copy_triple(.param .u64 a, .param .u64 b, .param .u64 c, .param .u64 d) { ret; }\n",
);

fn module() -> Module {
    Device::cpu()
        .load(&PTX)
        .expect("the CPU executor loads any PTX text")
}

/// A launch size: mostly small (so valid launches run quickly), sometimes zero or past the
/// device's limits.
fn dim(max_valid: u32) -> impl Strategy<Value = u32> {
    prop_oneof![
        8 => 1..=max_valid,
        1 => Just(0),
        1 => max_valid + 1..=u32::MAX,
    ]
}

fn dims(max_x: u32, max_y: u32, max_z: u32) -> impl Strategy<Value = Dim3> {
    (dim(max_x), dim(max_y), dim(max_z)).prop_map(|(x, y, z)| Dim3::new(x, y, z))
}

/// Whether the CPU device must accept `config` (what `check_config` is specified to allow).
fn valid_config(device: &Device, config: &LaunchConfig) -> bool {
    let p = device.properties();
    let fits = |d: Dim3, max: Dim3| d.x <= max.x && d.y <= max.y && d.z <= max.z;
    config.grid.count() > 0
        && config.block.count() > 0
        && config.block.count() <= u64::from(p.max_threads_per_block)
        && fits(config.block, p.max_block_dim)
        && fits(config.grid, p.max_grid_dim)
        && config.shared_mem_bytes <= p.max_shared_memory_per_block
}

/// Launches `kernel` on `x` into an output of `out_len` elements; the outcome must be an error
/// exactly when the launch is invalid, and the copy otherwise.
fn check_launch<T: bytemuck::Pod + PartialEq + core::fmt::Debug>(
    module: &Module,
    kernel: &Kernel<(Slice<T>, Output<T>)>,
    config: LaunchConfig,
    x: &[T],
    out_len: usize,
) -> Result<(), TestCaseError> {
    let mut out = vec![T::zeroed(); out_len];
    let result = module.launch(kernel, config, (x, &mut out));
    let valid = valid_config(module.device(), &config) && x.len() == out_len;
    match result {
        Ok(()) => {
            prop_assert!(
                valid,
                "an invalid launch ran: {config:?}, {} vs {out_len}",
                x.len()
            );
            prop_assert_eq!(&out[..], x);
        }
        Err(error) => {
            prop_assert!(!valid, "a valid launch failed: {error}");
            // Nothing ran: the output is untouched.
            prop_assert!(out.iter().all(|v| *v == T::zeroed()));
            let expected_kind = matches!(
                error,
                Error::ZeroSize { .. }
                    | Error::BlockTooLarge { .. }
                    | Error::GridTooLarge { .. }
                    | Error::SharedMemoryTooLarge { .. }
                    | Error::LengthMismatch { .. }
            );
            prop_assert!(expected_kind, "unexpected error: {error}");
        }
    }
    Ok(())
}

/// A grid small enough to run in microseconds when valid, or one the device refuses.
fn config() -> impl Strategy<Value = LaunchConfig<'static>> {
    let device = Device::cpu();
    let limit = device.properties().max_shared_memory_per_block;
    (
        prop_oneof![
            9 => dims(3, 3, 2),
            1 => dims(i32::MAX as u32, 65535, 65535),
        ],
        dims(64, 16, 4),
        prop_oneof![3 => Just(0), 3 => 0..=limit, 1 => limit..=u32::MAX],
    )
        .prop_filter("valid launches stay small", |(grid, block, _)| {
            u128::from(grid.count()) * u128::from(block.count()) <= 1 << 16
        })
        .prop_map(|(grid, block, shared)| {
            LaunchConfig::new(grid, block).with_shared_mem_bytes(shared)
        })
}

/// An input length and an output length, equal half of the time.
fn lengths() -> impl Strategy<Value = (usize, usize)> {
    prop_oneof![
        (0..300usize).prop_map(|n| (n, n)),
        (0..300usize, 0..300usize),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(256), ..ProptestConfig::default() })]

    #[test]
    fn random_launches_are_an_error_or_a_correct_run(
        config in config(),
        (x_len, out_len) in lengths(),
        element in 0..3u8,
        seed in any::<u64>(),
    ) {
        let module = module();
        let value = |i: usize| seed.wrapping_mul(i as u64 + 1);
        match element {
            0 => {
                let x: Vec<u8> = (0..x_len).map(|i| value(i) as u8).collect();
                check_launch(&module, &copy_u8, config, &x, out_len)?
            }
            1 => {
                let x: Vec<u64> = (0..x_len).map(value).collect();
                check_launch(&module, &copy_u64, config, &x, out_len)?
            }
            _ => {
                let x: Vec<[f32; 3]> = (0..x_len)
                    .map(|i| [i as f32, value(i) as u16 as f32, -(i as f32)])
                    .collect();
                check_launch(&module, &copy_triple, config, &x, out_len)?
            }
        }
    }
}

/// A kernel handle whose parameter list says 8-byte elements for what its marker types (and so
/// the memory passed) say are 4-byte `f32`s: the kernel would read and write twice the bytes it
/// was lent. Only `unsafe` code can make such a handle, but the launch refuses it all the same,
/// before the CPU entry runs.
#[test]
fn a_parameter_list_that_disagrees_with_the_memory_is_refused_before_anything_runs() {
    use std::sync::atomic::{AtomicBool, Ordering};
    static RAN: AtomicBool = AtomicBool::new(false);
    // SAFETY (of the fn): it touches none of its parameters.
    unsafe fn records_that_it_ran(_: &[*const u8], _: &ferrocuda_std::cpu::BlockContext) {
        RAN.store(true, Ordering::SeqCst);
    }
    static PARAMS: [Param; 2] = [
        Param::slice::<f64>("x", "f64"),
        Param::output::<f64>("out", "f64"),
    ];
    // SAFETY: deliberately broken (the test's point): `PARAMS` describes f64 elements while the
    // markers say f32; the entry reads nothing, so running it would still be harmless.
    let lying: Kernel<(Slice<f32>, Output<f32>)> =
        unsafe { Kernel::new("copy_u64", &PARAMS, &[], records_that_it_ran) };
    let x = vec![1.0f32; 16];
    let mut out = vec![0.0f32; 16];
    let result = module().launch(&lying, LaunchConfig::new(1, 16), (&x, &mut out));
    assert!(!RAN.load(Ordering::SeqCst), "the entry ran: {result:?}");
    match result {
        Err(Error::InvalidArgument {
            kernel,
            param,
            detail,
        }) => {
            assert_eq!((kernel, param), ("copy_u64", "x"));
            assert!(
                detail.contains("(4 bytes) were passed for `f64` (8 bytes)"),
                "{detail}"
            );
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

/// Read-only memory passed where the parameter list says `Out<T>`: refused (the kernel would
/// write memory it was only lent to read).
#[test]
fn read_only_memory_for_an_output_parameter_is_refused() {
    static PARAMS: [Param; 2] = [
        Param::slice::<u64>("x", "u64"),
        Param::output::<u64>("out", "u64"),
    ];
    // SAFETY: deliberately broken: the second marker is `Slice` where `PARAMS` says output.
    let lying: Kernel<(Slice<u64>, Slice<u64>)> =
        unsafe { Kernel::new("copy_u64", &PARAMS, &[], copy_u64.cpu_entry()) };
    let x = vec![7u64; 4];
    let table = vec![0u64; 4];
    let result = module().launch(&lying, LaunchConfig::new(1, 4), (&x, &table));
    match result {
        Err(Error::InvalidArgument { param, detail, .. }) => {
            assert_eq!(param, "out");
            assert!(detail.contains("read-only slice"), "{detail}");
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
    assert_eq!(table, [0; 4], "the read-only memory was written");
}
