//! The embedded PTX: every kernel is an `.entry` whose parameters match what the host packs, and
//! ptxas assembles it for sm_70, sm_80 and sm_90 with no spills.

mod support;

use ferrocuda::kernels::convolution::{convolve_2d, convolve_2d_const};
use ferrocuda::kernels::finance::black_scholes;
use ferrocuda::kernels::group_by::{
    group_by_finish, group_by_global, group_by_owned, group_by_owned_finish, group_by_shared,
};
use ferrocuda::kernels::histogram::histogram;
use ferrocuda::kernels::matmul::{matmul_blocked, matmul_naive, matmul_tiled};
use ferrocuda::kernels::monte_carlo::{monte_carlo_option, monte_carlo_pi};
use ferrocuda::kernels::reduce::{dot_partial, sum_partial};
use ferrocuda::kernels::statistics::{statistics_merge, statistics_partial};
use ferrocuda::kernels::transpose::{
    transpose_naive, transpose_naive_wide, transpose_tiled, transpose_tiled_wide,
};
use ferrocuda::kernels::transpose_2d::{transpose_2d_naive, transpose_2d_tiled};
use ferrocuda::kernels::{matrix_add, saxpy, vector_add};
use ferrocuda::KernelInfo;
use support::ptx::{assemble_everywhere, packed};

/// Every kernel of `ferrocuda-kernels`, each instance of the generic ones;
/// `every_ptx_entry_has_a_host_handle` fails if one is missing.
fn all_kernels() -> Vec<KernelInfo> {
    vec![
        *vector_add.info(),
        *saxpy.info(),
        *matrix_add.info(),
        *dot_partial::<f32>().info(),
        *dot_partial::<f64>().info(),
        *sum_partial::<f32>().info(),
        *sum_partial::<f64>().info(),
        *statistics_partial::<f32>().info(),
        *statistics_partial::<f64>().info(),
        *statistics_merge::<f32>().info(),
        *statistics_merge::<f64>().info(),
        *histogram.info(),
        *group_by_shared.info(),
        *group_by_global.info(),
        *group_by_owned.info(),
        *group_by_owned_finish.info(),
        *group_by_finish.info(),
        *matmul_naive::<f32>().info(),
        *matmul_naive::<f64>().info(),
        *matmul_tiled::<f32>().info(),
        *matmul_tiled::<f64>().info(),
        *matmul_blocked.info(),
        *convolve_2d.info(),
        *convolve_2d_const.info(),
        *transpose_naive::<f32>().info(),
        *transpose_naive::<f64>().info(),
        *transpose_tiled::<f32>().info(),
        *transpose_tiled::<f64>().info(),
        *transpose_naive_wide::<f32>().info(),
        *transpose_naive_wide::<f64>().info(),
        *transpose_tiled_wide::<f32>().info(),
        *transpose_tiled_wide::<f64>().info(),
        *transpose_2d_naive.info(),
        *transpose_2d_tiled.info(),
        *black_scholes.info(),
        *monte_carlo_pi.info(),
        *monte_carlo_option.info(),
    ]
}

#[test]
fn every_ptx_entry_has_a_host_handle_and_vice_versa() {
    let info = ferrocuda::KERNELS.info();
    let mut in_ptx: Vec<&str> = info.entries.iter().map(|e| e.name.as_str()).collect();
    let mut on_host: Vec<&str> = all_kernels().iter().map(|k| k.name).collect();
    in_ptx.sort();
    on_host.sort();
    assert_eq!(in_ptx, on_host);
    assert_eq!(info.target.as_deref(), Some("sm_70"));
    assert_eq!(info.version, Some((6, 0)));
    for entry in &info.entries {
        assert!(
            ferrocuda::KERNELS
                .source()
                .contains(&format!(".visible .entry {}(", entry.name)),
            "{} is not a visible .entry",
            entry.name
        );
    }
}

#[test]
fn host_packing_matches_every_ptx_entry() {
    let info = ferrocuda::KERNELS.info();
    let (a, b, mut out) = (vec![0.0f32; 3], vec![0.0f32; 3], vec![0.0f32; 3]);
    let (a64, b64, mut out64) = (vec![0.0f64; 3], vec![0.0f64; 3], vec![0.0f64; 3]);
    // keys, values, then count, sum, lowest, highest (one per key) and rejected (2).
    let (keys, values) = (vec![0u32; 3], vec![0.0f32; 3]);
    let (mut count, mut sum) = (vec![0u32; 3], vec![0.0f32; 3]);
    let (mut lowest, mut highest, mut rejected) = (vec![0u32; 3], vec![0u32; 3], vec![0u64; 2]);
    let cases = [
        ("vector_add", packed(&vector_add, (&a, &b, &mut out))),
        ("saxpy", packed(&saxpy, (1.0f32, &a, &mut out))),
        ("matrix_add", packed(&matrix_add, (&a, &b, &mut out, 3u32))),
        ("dot_partial", packed(&dot_partial, (&a, &b, &mut out))),
        ("sum_partial", packed(&sum_partial, (&a, &mut out))),
        (
            "statistics_partial",
            packed(&statistics_partial, (&a, &mut vec![0.0f64; 5])),
        ),
        (
            "statistics_merge",
            packed(
                &statistics_merge::<f32>,
                (&vec![0.0f64; 5], &mut vec![0.0f64; 5]),
            ),
        ),
        // The f64 instances: the arguments' types pick them.
        (
            "dot_partial_f64",
            packed(&dot_partial, (&a64, &b64, &mut out64)),
        ),
        ("sum_partial_f64", packed(&sum_partial, (&a64, &mut out64))),
        (
            "statistics_partial_f64",
            packed(&statistics_partial, (&a64, &mut vec![0.0f64; 5])),
        ),
        (
            "statistics_merge_f64",
            packed(
                &statistics_merge::<f64>,
                (&vec![0.0f64; 5], &mut vec![0.0f64; 5]),
            ),
        ),
        (
            "matmul_naive_f64",
            packed(&matmul_naive, (&a64, &b64, &mut out64, 1u32, 3u32, 1u32)),
        ),
        (
            "matmul_tiled_f64",
            packed(&matmul_tiled, (&a64, &b64, &mut out64, 1u32, 3u32, 1u32)),
        ),
        (
            "transpose_naive_f64",
            packed(&transpose_naive, (&a64, &mut out64, 1u32, 3u32)),
        ),
        (
            "transpose_tiled_f64",
            packed(&transpose_tiled, (&a64, &mut out64, 1u32, 3u32)),
        ),
        (
            "transpose_naive_wide_f64",
            packed(&transpose_naive_wide, (&a64, &mut out64, 1u32, 3u32)),
        ),
        (
            "transpose_tiled_wide_f64",
            packed(&transpose_tiled_wide, (&a64, &mut out64, 1u32, 3u32)),
        ),
        (
            "histogram",
            packed(&histogram, (&a, &mut vec![0u32; 3], 0.0f32, 1.0f32)),
        ),
        (
            "group_by_shared",
            packed(
                &group_by_shared,
                (
                    &keys,
                    &values,
                    &mut count,
                    &mut sum,
                    &mut lowest,
                    &mut highest,
                    &mut rejected,
                ),
            ),
        ),
        (
            "group_by_global",
            packed(
                &group_by_global,
                (
                    &keys,
                    &values,
                    &mut count,
                    &mut sum,
                    &mut lowest,
                    &mut highest,
                    &mut rejected,
                ),
            ),
        ),
        (
            "group_by_owned",
            packed(
                &group_by_owned,
                (&keys, &values, &mut vec![0u32; 12], &mut rejected),
            ),
        ),
        (
            "group_by_owned_finish",
            packed(
                &group_by_owned_finish,
                (
                    &vec![0u32; 12],
                    &mut vec![0u32; 3],
                    &mut out,
                    &mut vec![0.0f32; 3],
                    &mut vec![0.0f32; 3],
                ),
            ),
        ),
        (
            "group_by_finish",
            packed(
                &group_by_finish,
                (
                    &vec![0u32; 3],
                    &vec![0u32; 3],
                    &mut out,
                    &mut vec![0.0f32; 3],
                ),
            ),
        ),
        (
            "matmul_naive",
            packed(&matmul_naive, (&a, &b, &mut out, 1u32, 3u32, 1u32)),
        ),
        (
            "matmul_tiled",
            packed(&matmul_tiled, (&a, &b, &mut out, 1u32, 3u32, 1u32)),
        ),
        (
            "matmul_blocked",
            packed(&matmul_blocked, (&a, &b, &mut out, 1u32, 3u32, 1u32)),
        ),
        (
            "convolve_2d",
            packed(
                &convolve_2d,
                (&a, &mut out, &[1.0f32], 3u32, 1u32, 1u32, 0u32),
            ),
        ),
        (
            "convolve_2d_const",
            packed(&convolve_2d_const, (&a, &mut out, 3u32, 1u32, 1u32, 0u32)),
        ),
        (
            "transpose_naive",
            packed(&transpose_naive, (&a, &mut out, 1u32, 3u32)),
        ),
        (
            "transpose_tiled",
            packed(&transpose_tiled, (&a, &mut out, 1u32, 3u32)),
        ),
        (
            "transpose_naive_wide",
            packed(&transpose_naive_wide, (&a, &mut out, 1u32, 3u32)),
        ),
        (
            "transpose_tiled_wide",
            packed(&transpose_tiled_wide, (&a, &mut out, 1u32, 3u32)),
        ),
        // A 2D view: (pointer, length), then 2 extents and the row stride.
        (
            "transpose_2d_naive",
            packed(
                &transpose_2d_naive,
                (
                    ferrocuda::Array2::new(&a, 1, 3).unwrap(),
                    ferrocuda::Out2::new(&mut out, 3, 1).unwrap(),
                ),
            ),
        ),
        (
            "transpose_2d_tiled",
            packed(
                &transpose_2d_tiled,
                (
                    ferrocuda::Array2::new(&a, 3, 1).unwrap(),
                    ferrocuda::Out2::new(&mut out, 1, 3).unwrap(),
                ),
            ),
        ),
        (
            "black_scholes",
            packed(
                &black_scholes,
                (&a, &b, &a, 0.05f32, 0.2f32, &mut out, &mut vec![0.0f32; 3]),
            ),
        ),
        (
            "monte_carlo_pi",
            packed(&monte_carlo_pi, (10u64, 1u64, &mut vec![0u64; 1])),
        ),
        (
            "monte_carlo_option",
            packed(
                &monte_carlo_option,
                (
                    10u64,
                    1u64,
                    100.0f32,
                    100.0f32,
                    0.03f32,
                    0.2f32,
                    &mut vec![0.0f64; 4],
                ),
            ),
        ),
    ];
    assert_eq!(
        cases.len(),
        all_kernels().len(),
        "a kernel has no packing case"
    );
    for (name, host) in cases {
        let entry = info
            .entry(name)
            .unwrap_or_else(|| panic!("{name} not in PTX"));
        assert_eq!(
            host, entry.param_sizes,
            "{name}: host packing vs PTX .entry"
        );
    }
    for kernel in all_kernels() {
        let declared: Vec<usize> = kernel.ptx_param_sizes().collect();
        assert_eq!(
            declared,
            info.entry(kernel.name).unwrap().param_sizes,
            "{}",
            kernel.name
        );
    }
}

#[test]
fn ptxas_assembles_the_kernels_for_sm_70_80_90_without_spills() {
    for (arch, report) in assemble_everywhere("ferrocuda-kernels", ferrocuda::KERNELS.source()) {
        for kernel in all_kernels() {
            let resources = report.kernel(kernel.name).unwrap_or_else(|| {
                panic!("{arch}: ptxas report has no {}:\n{report}", kernel.name)
            });
            assert_eq!(
                resources.spill_store_bytes + resources.spill_load_bytes,
                0,
                "{arch} {}",
                kernel.name
            );
            assert!(resources.registers > 0, "{arch} {}", kernel.name);
        }
        // The tiled kernels keep their tiles in shared memory and wait at a barrier; the
        // histogram's bins are dynamic shared memory, which ptxas does not count.
        let shared = |name: &str| report.kernel(name).unwrap().shared_bytes;
        let barriers = |name: &str| report.kernel(name).unwrap().barriers;
        assert_eq!(shared("matmul_tiled"), 2 * 16 * 16 * 4, "{arch}");
        assert_eq!(shared("transpose_tiled"), 32 * 33 * 4, "{arch}");
        assert_eq!(shared("transpose_2d_tiled"), 32 * 33 * 4, "{arch}");
        assert_eq!(shared("dot_partial"), 32 * 4, "{arch}");
        // Per warp `Σ(x − c)`, `Σ(x − c)²` (f64) and min, max (f32), and the block's count and
        // `Σx` (f64), which thread 0 shares; the merge: one state per warp, count, mean, M2 (f64)
        // and min, max (f32).
        assert_eq!(
            shared("statistics_partial"),
            32 * (2 * 8 + 2 * 4) + 2 * 8,
            "{arch}"
        );
        assert_eq!(shared("statistics_merge"), 32 * (3 * 8 + 2 * 4), "{arch}");
        // The f64 instances: the same tiles of 8-byte elements (min and max f64 too).
        assert_eq!(shared("matmul_tiled_f64"), 2 * 16 * 16 * 8, "{arch}");
        assert_eq!(shared("transpose_tiled_f64"), 32 * 33 * 8, "{arch}");
        assert_eq!(shared("dot_partial_f64"), 32 * 8, "{arch}");
        assert_eq!(shared("sum_partial_f64"), 32 * 8, "{arch}");
        assert_eq!(
            shared("statistics_partial_f64"),
            32 * 4 * 8 + 2 * 8,
            "{arch}"
        );
        assert_eq!(shared("statistics_merge_f64"), 32 * 5 * 8, "{arch}");
        // Two buffers each of a transposed A tile (8 k-rows of 33 quads: 32 + 1 of padding) and
        // a B tile (8 rows of 32 quads), quads of 16 bytes.
        assert_eq!(
            shared("matmul_blocked"),
            2 * (8 * 33 + 8 * 32) * 16,
            "{arch}"
        );
        // The 32 × 8 output tile with a halo of the largest radius, 2, for 3 channels.
        assert_eq!(shared("convolve_2d"), 3 * (32 + 4) * (8 + 4) * 4, "{arch}");
        assert_eq!(
            shared("convolve_2d_const"),
            3 * (32 + 4) * (8 + 4) * 4,
            "{arch}"
        );
        // What the H200 runs (the driver compiles the sm_70 PTX for sm_90): at most 128
        // registers, so that two blocks of 256 threads fit on a multiprocessor.
        if arch == "sm_90" {
            let registers = report.kernel("matmul_blocked").unwrap().registers;
            assert!(
                registers <= 128,
                "{arch} matmul_blocked: {registers} registers"
            );
        }
        for name in [
            "matmul_tiled",
            "matmul_blocked",
            "convolve_2d",
            "convolve_2d_const",
            "transpose_tiled",
            "transpose_2d_tiled",
            "dot_partial",
            "sum_partial",
            "statistics_partial",
            "statistics_merge",
            "histogram",
            "group_by_shared",
            "matmul_tiled_f64",
            "transpose_tiled_f64",
            "dot_partial_f64",
            "sum_partial_f64",
            "statistics_partial_f64",
            "statistics_merge_f64",
        ] {
            assert_eq!(barriers(name), 1, "{arch} {name}");
        }
        for name in [
            "matmul_naive",
            "transpose_naive",
            "matmul_naive_f64",
            "transpose_naive_f64",
            "transpose_2d_naive",
            "vector_add",
            "group_by_global",
            "group_by_owned",
            "group_by_owned_finish",
            "group_by_finish",
            "black_scholes",
        ] {
            assert_eq!((shared(name), barriers(name)), (0, 0), "{arch} {name}");
        }
        // The Monte Carlo kernels reduce through one shared value per warp (u64 hit counts; four
        // f64 payoff sums) and keep their samples in registers, not in local memory.
        assert_eq!(shared("monte_carlo_pi"), 32 * 8, "{arch}");
        assert_eq!(shared("monte_carlo_option"), 4 * 32 * 8, "{arch}");
        for name in ["monte_carlo_pi", "monte_carlo_option", "black_scholes"] {
            let kernel = report.kernel(name).unwrap();
            assert_eq!(kernel.stack_frame_bytes, 0, "{arch} {name}");
        }
        for name in ["monte_carlo_pi", "monte_carlo_option"] {
            assert_eq!(barriers(name), 1, "{arch} {name}");
        }
    }
}

#[test]
fn the_finance_kernels_use_the_default_math_tier_and_no_other_approximation() {
    // Black-Scholes and the Monte Carlo kernels use ferrocuda-std's default math tier (CUDA's
    // accuracy): fused multiply-adds, correctly rounded division and square root, and of the
    // approximate instructions only `ex2.approx.ftz` (exp) and `rcp.approx.ftz` (the normal CDF's
    // reciprocals, the quotient corrected from its exact residual), which alone flush
    // subnormals; no calls but to the bounds checks' panics.
    let source = ferrocuda::KERNELS.source();
    for name in ["black_scholes", "monte_carlo_option", "monte_carlo_pi"] {
        let start = source
            .find(&format!(".entry {name}("))
            .unwrap_or_else(|| panic!("{name} not in PTX"));
        let body = &source[start..];
        let body = &body[..body.find("\n}").unwrap()];
        for line in body
            .lines()
            .filter(|l| l.contains(".approx") || l.contains(".ftz"))
        {
            assert!(
                line.contains("ex2.approx.ftz.f32") || line.contains("rcp.approx.ftz.f32"),
                "{name}: {line}"
            );
        }
        if name != "monte_carlo_pi" {
            assert!(
                body.contains("ex2.approx.ftz.f32"),
                "{name} lacks exp's ex2.approx"
            );
        }
        for call in body.lines().filter(|l| l.contains("call.uni")) {
            assert!(
                call.contains("panic") || call.contains("out_of_bounds"),
                "{name}: {call}"
            );
        }
        if name != "monte_carlo_pi" {
            for op in ["fma.rn.f32", "sqrt.rn.f32"] {
                assert!(body.contains(op), "{name} lacks {op}");
            }
        }
    }
}

/// The PTX of one `.entry`, from its name to its closing brace.
fn entry_source(name: &str) -> &'static str {
    let source = ferrocuda::KERNELS.source();
    let start = source
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no .entry {name}"));
    let end = source[start..].find("\n}\n").expect("an entry ends with }") + start;
    &source[start..end]
}

#[test]
fn group_by_updates_min_and_max_with_one_integer_atomic_not_a_cas_loop() {
    // Min and max are kept as order-preserving u32 keys so that a native `atom.max.u32` updates
    // them; a float compare-and-swap loop would serialise on a hot key in shared memory.
    for (name, scope) in [
        ("group_by_shared", "cta.shared"),
        ("group_by_global", "gpu.global"),
    ] {
        let body = entry_source(name);
        assert!(
            body.contains(&format!("atom.relaxed.{scope}.max.u32")),
            "{name}"
        );
        assert!(
            body.contains(&format!("atom.relaxed.{scope}.add.f32")),
            "{name}"
        );
        assert!(
            !body.contains(".cas."),
            "{name} has a compare-and-swap loop"
        );
    }
    // The CPU executor's kernel for many keys: its state is 4 u32 per key (one cache line per
    // row), so the sum is a compare-and-swap loop there, and every update of the state has block
    // scope (only the rejected rows' counters are device-wide, u64).
    let body = entry_source("group_by_owned");
    for op in ["max.u32", "add.u32", "cas.b32"] {
        assert!(
            body.contains(&format!("atom.relaxed.cta.global.{op}")),
            "group_by_owned: {op}"
        );
    }
    assert!(
        !body.contains("gpu.global.max.u32") && !body.contains("gpu.global.add.u32"),
        "group_by_owned updates its state with device-scope atomics"
    );
}

#[test]
fn the_register_blocked_matmul_uses_fma_and_128_bit_shared_accesses_without_local_memory() {
    let body = entry_source("matmul_blocked");
    // The 8 × 8 fused multiply-adds of each of the 8 steps of a tile, unrolled as nvcc does.
    // Rust never fuses `a * b + c` itself.
    assert_eq!(
        body.matches("fma.rn.f32").count(),
        8 * 64,
        "8 k-steps of 8 × 8"
    );
    assert!(!body.contains("mul.rn.f32"), "every product is fused");
    // Per k-step: two quads of A and two of B; per tile: one quad each stored.
    assert_eq!(body.matches("ld.shared.v4.").count(), 8 * 4);
    assert_eq!(
        body.matches("st.shared.v4.").count(),
        4,
        "the first tiles, then each next tile"
    );
    // The accumulators stay in registers (an array indexed by a rolled loop goes to .local).
    assert!(!body.contains(".local"), "matmul_blocked uses local memory");
    assert!(!entry_source("convolve_2d").contains(".local"));
}

#[test]
fn ptxas_assembles_every_atomic_and_warp_operation() {
    // test-kernels uses every atomic on every type, in global and shared memory, every
    // shuffle, vote and warp sync, printing and the grid barrier.
    let source = support::test_kernels().source();
    for op in [
        "atom.relaxed.gpu.global.add.f64",
        "atom.relaxed.gpu.global.min.s64",
        "atom.relaxed.cta.shared.add.u32",
        "atom.relaxed.gpu.global.cas.b32",
        "atom.relaxed.gpu.global.exch.b64",
        "shfl.sync.up.b32",
        "shfl.sync.bfly.b32",
        "vote.sync.ballot.b32",
        "vote.sync.all.pred",
        "bar.warp.sync",
        "bar.red.popc.u32",
        // `println!` (print_mixed): CUDA's printf.
        "call.uni (retval0), vprintf,",
        // `grid.sync()` (grid_sum): the device-scope fence around the grid barrier.
        "fence.acq_rel.gpu;",
    ] {
        assert!(source.contains(op), "test-kernels PTX lacks {op}");
    }
    let reports = assemble_everywhere("test-kernels", source);
    for (arch, report) in reports {
        let atomics = report.kernel("atomics_every_type").unwrap();
        assert_eq!(
            atomics.spill_store_bytes + atomics.spill_load_bytes,
            0,
            "{arch}"
        );
        assert!(report.kernel("warp_ops").is_some(), "{arch}");
        assert!(report.kernel("print_mixed").is_some(), "{arch}");
        assert!(report.kernel("grid_sum").is_some(), "{arch}");
    }
}

#[test]
fn ptxas_assembles_every_math_function() {
    // test-kernels' math_functions calls every function of ferrocuda_std::math: the fast ones are
    // the special function unit's instructions, the accurate ones plain arithmetic with fused
    // multiply-adds and correctly rounded division and square root (and no calls: PTX has no
    // libm to call).
    let source = support::test_kernels().source();
    let start = source
        .find(".entry math_functions(")
        .expect("math_functions in test-kernels");
    let body = &source[start..];
    let body = &body[..body.find("\n}").unwrap()];
    for op in [
        "ex2.approx.ftz.f32",
        "lg2.approx.ftz.f32",
        "fma.rn.f32",
        "sqrt.rn.f32",
        "div.rn.f32",
    ] {
        assert!(body.contains(op), "math_functions lacks {op}");
    }
    for absent in [
        "call",
        "sin.approx",
        "cos.approx",
        "rcp.approx",
        "div.approx",
    ] {
        assert!(!body.contains(absent), "math_functions has {absent}");
    }
    // Only the fast functions flush subnormals; the coefficients are immediates, not loads.
    for line in body.lines().filter(|l| l.contains(".ftz")) {
        assert!(
            line.contains("ex2.approx.ftz.f32") || line.contains("lg2.approx.ftz.f32"),
            "math_functions flushes subnormals in {line}"
        );
    }
    assert_eq!(
        body.matches("ld.global").count(),
        1,
        "math_functions loads only its input"
    );
    for (arch, report) in assemble_everywhere("test-kernels-math", source) {
        let math = report.kernel("math_functions").unwrap();
        assert_eq!(math.spill_store_bytes + math.spill_load_bytes, 0, "{arch}");
    }
}

#[test]
fn the_version_and_target_parser_reads_the_built_ptx_and_hand_written_samples() {
    // The built PTX, against its `.version` / `.target` lines read here word by word.
    let source = ferrocuda::KERNELS.source();
    let word_after = |directive: &str| -> String {
        let line = source
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with(directive))
            .unwrap_or_else(|| panic!("no {directive} in the PTX"));
        line[directive.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    let info = ferrocuda::KERNELS.info();
    assert_eq!(info.version_string(), word_after(".version"));
    assert_eq!(info.target.clone().unwrap(), word_after(".target"));
    assert_eq!(info.target.as_deref(), Some(ferrocuda::KERNEL_BUILD.arch));
    assert_eq!(
        info.target_compute_capability(),
        Some((7, 0)),
        "built for sm_70"
    );
    assert_eq!(
        info.min_cuda_version(),
        Some((9, 0)),
        "PTX ISA 6.0 is CUDA 9.0's"
    );

    // Hand-written headers: comments, extra target options, newer architectures.
    let samples = [
        (
            "//\n// Generated by NVIDIA NVVM Compiler\n//\n.version 8.5\n.target sm_90a\n.address_size 64\n",
            Some((8, 5)),
            Some("sm_90a"),
            Some((9, 0)),
            Some((12, 5)),
        ),
        (
            "/* block\n comment */ .version 7.8\n.target sm_80, debug\n",
            Some((7, 8)),
            Some("sm_80"),
            Some((8, 0)),
            Some((11, 8)),
        ),
        (
            ".version 8.7\n.target sm_120\n",
            Some((8, 7)),
            Some("sm_120"),
            Some((12, 0)),
            Some((12, 8)),
        ),
        (
            "// .version 9.9 in a comment does not count\n.target sm_75\n",
            None,
            Some("sm_75"),
            Some((7, 5)),
            None,
        ),
    ];
    for (text, version, target, capability, cuda) in samples {
        let info = ferrocuda::ptx::parse(text);
        assert_eq!(info.version, version, "{text}");
        assert_eq!(info.target.as_deref(), target, "{text}");
        assert_eq!(info.target_compute_capability(), capability, "{text}");
        assert_eq!(info.min_cuda_version(), cuda, "{text}");
    }
}

#[test]
fn ferrocuda_kernels_prints_every_kernels_resources_for_the_asked_architectures() {
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ferrocuda"))
            .arg("kernels")
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let built = run(&[]);
    assert!(built.contains("ptxas resources for sm_70"), "{built}");
    assert!(built.contains("ptxas resources for sm_80"), "{built}");
    for kernel in all_kernels() {
        let line = built
            .lines()
            .find(|l| l.split_whitespace().next() == Some(kernel.name))
            .unwrap_or_else(|| panic!("{} missing from:\n{built}", kernel.name));
        let registers: u32 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        assert!(registers > 0, "{line}");
    }
    if ferrocuda_builder::find_ptxas("sm_80").is_some()
        && ferrocuda_builder::find_ptxas("sm_90").is_some()
    {
        let now = run(&["--arch", "sm_80", "--arch", "sm_90"]);
        assert!(now.contains("ptxas resources for sm_80"), "{now}");
        assert!(now.contains("ptxas resources for sm_90"), "{now}");
        // The tensor-core kernels are assembled for both, and not for a GPU without tensor
        // cores' mma.sync, which says so.
        for kernel in ferrocuda::TENSOR_KERNELS.info().entries.iter() {
            let rows = now
                .lines()
                .filter(|l| l.split_whitespace().next() == Some(kernel.name.as_str()));
            assert_eq!(rows.count(), 2, "{}: {now}", kernel.name);
        }
        let old = run(&["--arch", "sm_70"]);
        assert!(
            old.contains("(ferrocuda-kernels-tc: needs sm_80 or newer, not assembled for sm_70)"),
            "{old}"
        );
    } else {
        assert!(
            !support::on_ci(),
            "CI must have ptxas (make setup installs it)"
        );
        support::say_skipped("ferrocuda_kernels --arch", "no ptxas for sm_80/sm_90");
    }
}

#[test]
fn shared_memory_is_read_and_written_with_ld_shared_and_st_shared() {
    // A generic `ld`/`st` that happens to reach shared memory costs more than `ld.shared` (and
    // ptxas does not trace `cvta.shared` addresses back), so `Shared::get/set` use the shared
    // forms; global data is read with `ld.global`. No kernel should have a generic access left.
    let source = ferrocuda::KERNELS.source();
    let generic: Vec<&str> = source
        .lines()
        .map(str::trim)
        .filter(|l| {
            ["ld.", "st."].iter().any(|op| {
                l.strip_prefix(op).is_some_and(|rest| {
                    !["shared", "global", "param", "local", "const"]
                        .iter()
                        .any(|space| rest.starts_with(space))
                })
            })
        })
        .collect();
    assert!(generic.is_empty(), "generic accesses: {generic:?}");
    for name in [
        "matmul_tiled",
        "matmul_blocked",
        "convolve_2d",
        "transpose_tiled",
    ] {
        let body = entry_source(name);
        assert!(body.contains("ld.shared."), "{name}");
        assert!(body.contains("st.shared."), "{name}");
    }
}
