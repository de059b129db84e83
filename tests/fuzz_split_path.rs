//! Issue 29's differential test: every generated kernel of `fuzz-kernels` (tools/fuzz/
//! gen_kernels.py: barriers in straight code, loops and branches, shadowing, `let` without a
//! value, SCREAMING_CASE locals, early returns, `break`/`continue`, shared arrays, warp
//! operations, tensor-core `mma` statements) gives the same bits on the CPU executor's split path, its coroutine path (both in
//! checked mode) and a GPU (the PTX emulator in CI). The split path and the coroutine path must
//! never disagree: R1-R3 were three ways they did. `make fuzz SEED=n COUNT=m` runs the same test
//! on another corpus.
//!
//! An `mma` statement (`let d = mma(..);`, `d = mma(..);`) is a block-level step of the split
//! path, consecutive independent ones one step (issue 32); on the coroutine path each is a warp
//! rendezvous, on the emulator `mma.sync`. The generated ones are integer-valued (i8/u8 with i32
//! accumulators, f16 holding small integers), so exact everywhere. A warp's `mma_tiles` of two
//! `shared!` windows (the tiles staged by the block before a barrier, the windows warp-uniform)
//! is such a step too (grouped with neighbouring `mma`s); elsewhere a warp rendezvous, on the
//! emulator fragment loads and `mma.sync`.

mod support;

use ferrocuda::{launch, CpuOptions, CpuPath, Device, Module, Ptx};
use fuzz_kernels::{FuzzKernel, FOUND, GENERATED, WITH_MMA, WITH_MMA_TILES};
use std::sync::OnceLock;

/// The fuzz kernels' PTX, built once per test binary into `target/fuzz-kernels-ptx`, for sm_80
/// (the oldest target with `mma.sync`; the emulator is an sm_90).
fn fuzz_ptx() -> &'static Ptx {
    static PTX: OnceLock<Ptx> = OnceLock::new();
    PTX.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let built = ferrocuda_builder::PtxBuilder::new(root.join("fuzz-kernels"))
            .target_dir(root.join("target").join("fuzz-kernels-ptx"))
            .arch("sm_80")
            .warn_cpu_fallbacks(false)
            .build()
            .unwrap_or_else(|e| panic!("building fuzz-kernels to PTX failed:\n{e}"));
        Ptx::new("fuzz-kernels", Box::leak(built.ptx.into_boxed_str()))
    })
}

/// The executor, checked, on the split path or the coroutines. With 1 MiB stacks: a generated
/// kernel's own frames take up to 240 KiB in a debug build (near the default 256 KiB, where one
/// overflowed now and then); this test compares machines, `cpu_limits` tests the stack.
fn cpu(coroutines: bool) -> Module {
    let options = CpuOptions {
        checked: true,
        force_coroutines: coroutines,
        stack_bytes: 1 << 20,
        ..CpuOptions::default()
    };
    Device::cpu_with(options).unwrap().load(fuzz_ptx()).unwrap()
}

#[test]
fn every_generated_kernel_gives_the_same_bits_on_the_split_path_the_coroutine_path_and_the_gpu() {
    let test = "every_generated_kernel_gives_the_same_bits_on_the_split_path_the_coroutine_path_and_the_gpu";
    // Compared with the coroutine path only where it is split: most of them must be (a barrier
    // in an `if` or a shadowing loop body keeps the others on coroutines).
    let mut fallbacks: Vec<String> = GENERATED
        .iter()
        .filter_map(|k| match k.info().cpu_path {
            CpuPath::Coroutines(why) => Some(why.to_string()),
            _ => None,
        })
        .collect();
    fallbacks.sort();
    let mut reasons: Vec<(usize, &String)> = Vec::new();
    for why in &fallbacks {
        match reasons.last_mut() {
            Some((count, last)) if *last == why => *count += 1,
            _ => reasons.push((1, why)),
        }
    }
    println!(
        "{} of {} generated kernels on coroutines: {reasons:?}",
        fallbacks.len(),
        GENERATED.len()
    );
    assert!(
        fallbacks.len() * 4 <= GENERATED.len(),
        "more than a quarter of the generated kernels on coroutines: {reasons:?}"
    );
    assert!(
        !fallbacks
            .iter()
            .any(|why| why.contains("`break`") || why.contains("`let` without a value")),
        "a generated `break`/`continue` or `let` without a value fell back: {reasons:?}"
    );
    // The `mma` and `mma_tiles` statements must be the split path's steps in most kernels that
    // have them (else the generator no longer tests them).
    // Fewer `mma_tiles` kernels (a sixth to a quarter), so more variance: two thirds split.
    mostly_split("mma", WITH_MMA, 4, (3, 4));
    mostly_split("mma_tiles", WITH_MMA_TILES, 8, (2, 3));
    let mut machines = vec![("split", cpu(false)), ("coroutines", cpu(true))];
    if let Some(gpu) = support::gpu_or_skip(test) {
        machines.push(("GPU", gpu.load(fuzz_ptx()).unwrap()));
    }
    // Two blocks of 64 threads (two warps each); x shorter than the grid, so x[i % len] wraps.
    let x: Vec<u32> = (0..100u32)
        .map(|k| k.wrapping_mul(2_654_435_761) ^ 0x5bd1e995)
        .collect();
    let mut disagreements = Vec::new();
    for (k, &kernel) in GENERATED.iter().chain(FOUND).enumerate() {
        for n in [0u32, 5, 13] {
            let mut results = Vec::new();
            for (name, module) in &machines {
                let mut out = vec![0u32; 128];
                let outcome = launch!(module, kernel[2, 64](&x, n, &mut out)).map(|()| out);
                results.push((*name, outcome.map_err(|e| e.to_string())));
            }
            let (first, want) = &results[0];
            for (name, got) in &results[1..] {
                if got != want {
                    disagreements.push(format!(
                        "{} (#{k}) with n = {n}: {}",
                        kernel.info().name,
                        difference((first, want), (name, got))
                    ));
                }
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} runs disagree (each is a bug: keep its kernel, reduced, in fuzz-kernels/src/found.rs):\n{}",
        disagreements.len(),
        (GENERATED.len() + FOUND.len()) * 3,
        disagreements.join("\n")
    );
}

/// Asserts that `kernels` (those of the corpus with a `what` statement) are at least one in
/// `share` of the corpus and that at least `num / den` of them are on the split path.
fn mostly_split(what: &str, kernels: &[FuzzKernel], share: usize, (num, den): (usize, usize)) {
    let split = kernels
        .iter()
        .filter(|k| matches!(k.info().cpu_path, CpuPath::Regions))
        .count();
    println!(
        "{split} of {} generated kernels with `{what}` on the split path",
        kernels.len()
    );
    assert!(
        kernels.len() * share >= GENERATED.len() && split * den >= kernels.len() * num,
        "too few generated kernels with `{what}` ({}) or too few of them split ({split})",
        kernels.len()
    );
}

/// The first difference of two machines' outcomes, in a line.
fn difference(
    (a, x): (&str, &Result<Vec<u32>, String>),
    (b, y): (&str, &Result<Vec<u32>, String>),
) -> String {
    match (x, y) {
        (Ok(x), Ok(y)) => {
            let i = x.iter().zip(y).position(|(p, q)| p != q).unwrap_or(0);
            format!("out[{i}] is {} on {a}, {} on {b}", x[i], y[i])
        }
        (Err(e), _) => format!("{a} failed ({e}), {b} did not"),
        (_, Err(e)) => format!("{b} failed ({e}), {a} did not"),
    }
}
