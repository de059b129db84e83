//! Shared helpers of the integration tests.
#![allow(dead_code)]

pub mod nvrtc;
pub mod ptx;

use ferrocuda::{CpuOptions, Device, Module, Ptx};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::OnceLock;

/// A random generator with a fresh seed, and the seed (put it in assertion messages).
pub fn rng() -> (StdRng, u64) {
    let seed = rand::rng().random();
    (StdRng::seed_from_u64(seed), seed)
}

/// `n` random f32 in `[-100, 100)`.
pub fn random_f32(rng: &mut StdRng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-100.0f32..100.0)).collect()
}

/// C = A·B (row-major, of `s`) summed in f64 in order of `k`, and Σₚ|aᵢₚ·bₚⱼ| per element (the
/// scale of a sum's rounding error).
pub fn matmul_reference(
    a: &[f64],
    b: &[f64],
    s: ferrocuda::ops::MatmulShape,
) -> (Vec<f64>, Vec<f64>) {
    let mut c = vec![0.0f64; s.m * s.n];
    let mut magnitude = vec![0.0f64; s.m * s.n];
    for i in 0..s.m {
        for p in 0..s.k {
            for j in 0..s.n {
                let term = a[i * s.k + p] * b[p * s.n + j];
                c[i * s.n + j] += term;
                magnitude[i * s.n + j] += term.abs();
            }
        }
    }
    (c, magnitude)
}

/// Says that a test skipped, where the person running the tests sees it: libtest captures
/// `println!`, but not writes to the stderr handle itself.
pub fn say_skipped(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{test}: skipped: {why}");
}

/// Whether CI runs this (CI=true): checks that may skip on a developer's machine must run there.
pub fn on_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// The PTX of the `test-kernels` crate (kernels with planted faults), built once per test binary
/// with ferrocuda-builder into `target/test-kernels-ptx`; or, where `FERROCUDA_TEST_KERNELS_PTX` names a
/// file, that PTX (the GPU machine has no Rust toolchain: scripts/device-bundle.sh builds it here).
pub fn test_kernels() -> &'static Ptx {
    static PTX: OnceLock<Ptx> = OnceLock::new();
    PTX.get_or_init(|| test_kernels_built("test-kernels", "FERROCUDA_TEST_KERNELS_PTX", None))
}

/// The test kernels on the CPU executor: checked or not, split at their barriers or forced onto
/// coroutines.
pub fn cpu_test_kernels(checked: bool, coroutines: bool) -> Module {
    let options = CpuOptions {
        checked,
        force_coroutines: coroutines,
        ..CpuOptions::default()
    };
    Device::cpu_with(options)
        .unwrap()
        .load(test_kernels())
        .unwrap()
}

/// The test kernels on every (checked, coroutines) combination of the CPU executor, each with
/// its name for assertion messages.
pub fn cpu_test_kernels_every_path() -> Vec<(String, Module)> {
    let mut all = Vec::new();
    for checked in [false, true] {
        for coroutines in [false, true] {
            let name = format!("checked={checked} coroutines={coroutines}");
            all.push((name, cpu_test_kernels(checked, coroutines)));
        }
    }
    all
}

/// `test-kernels` with its `sm80` feature (the tensor-core kernels), built to PTX for sm_80 into
/// `target/test-kernels-sm80-ptx`, or the file `FERROCUDA_TEST_KERNELS_SM80_PTX` names.
pub fn test_kernels_sm80() -> &'static Ptx {
    static PTX: OnceLock<Ptx> = OnceLock::new();
    PTX.get_or_init(|| {
        test_kernels_built(
            "test-kernels-sm80",
            "FERROCUDA_TEST_KERNELS_SM80_PTX",
            Some(("sm_80", "sm80")),
        )
    })
}

/// `test-kernels` as PTX named `name` (also its target directory's), from the file `env` names
/// or built, with `(arch, feature)` where given.
fn test_kernels_built(name: &'static str, env: &str, sm: Option<(&str, &str)>) -> Ptx {
    if let Some(path) = std::env::var_os(env) {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{env}={path:?}: {e}"));
        return Ptx::new(name, Box::leak(text.into_boxed_str()));
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut builder = ferrocuda_builder::PtxBuilder::new(root.join("test-kernels"))
        .target_dir(root.join("target").join(format!("{name}-ptx")));
    if let Some((arch, feature)) = sm {
        builder = builder.arch(arch).features([feature]);
    }
    let built = builder
        .build()
        .unwrap_or_else(|e| panic!("building {name} to PTX failed:\n{e}"));
    Ptx::new(name, Box::leak(built.ptx.into_boxed_str()))
}

/// The CPU executor's paths for `ptx`, named: split (checked and not) and coroutines (checked).
pub fn cpu_modules(ptx: &'static Ptx) -> Vec<(String, ferrocuda::Module)> {
    let mut all = Vec::new();
    for (checked, coroutines) in [(false, false), (true, false), (true, true)] {
        let options = ferrocuda::CpuOptions {
            checked,
            force_coroutines: coroutines,
            ..ferrocuda::CpuOptions::default()
        };
        let name = format!("cpu checked={checked} coroutines={coroutines}");
        all.push((name, Device::cpu_with(options).unwrap().load(ptx).unwrap()));
    }
    all
}

/// The tests of one binary share each GPU's context, and a kernel that faults on purpose makes it
/// unusable for every test then using it (until the host replaces it). In a binary with such a
/// test, each GPU test holds [`gpu_shared`] for its whole run and the faulting one [`gpu_alone`]
/// (a binary may also run all its GPU tests alone).
static GPU_TURNS: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// A turn on the GPUs beside other well-behaved tests (see [`GPU_TURNS`]).
pub fn gpu_shared() -> std::sync::RwLockReadGuard<'static, ()> {
    GPU_TURNS.read().unwrap_or_else(|e| e.into_inner())
}

/// The GPUs alone, for a test whose kernel faults on purpose (see [`GPU_TURNS`]).
pub fn gpu_alone() -> std::sync::RwLockWriteGuard<'static, ()> {
    GPU_TURNS.write().unwrap_or_else(|e| e.into_inner())
}

/// GPU 0, or `None` after saying (for `test`) why it was skipped. Under `FERROCUDA_EXPECT_GPU`
/// (the GPU machine's script) a missing GPU fails the test instead.
pub fn gpu_or_skip(test: &str) -> Option<Device> {
    match Device::cuda(0) {
        Ok(gpu) => Some(gpu),
        Err(error) => {
            assert!(
                std::env::var_os("FERROCUDA_EXPECT_GPU").is_none(),
                "FERROCUDA_EXPECT_GPU is set but {error}"
            );
            say_skipped(test, &format!("no CUDA device ({error})"));
            None
        }
    }
}

/// Every GPU, or `None` (skipped) with fewer than two. On the PTX emulator a test binary gets
/// two (`FERROCUDA_EMU_DEVICES=2`, unless set already): the variable is set before the driver is
/// first loaded, so every test of a binary that calls this must call it before any other GPU
/// use. On hardware with one GPU the test skips.
pub fn two_gpus_or_skip(test: &str) -> Option<Vec<Device>> {
    static ENV: std::sync::Once = std::sync::Once::new();
    ENV.call_once(|| {
        if std::env::var_os("FERROCUDA_EMU_DEVICES").is_none() {
            // Only the emulator reads it, when it is loaded.
            std::env::set_var("FERROCUDA_EMU_DEVICES", "2");
        }
    });
    gpu_or_skip(test)?;
    let all = Device::all().unwrap();
    if all.len() < 2 {
        assert!(
            !all[0].properties().is_emulator(),
            "the emulator was asked for 2 devices"
        );
        say_skipped(test, &format!("{} GPU, two needed", all.len()));
        return None;
    }
    Some(all)
}

/// Checks a pipeline run over `x` that failed in chunk `k` (chunks of `chunk_len`): the error is
/// `ChunkFailed` naming the chunk, its elements and the kernel's fault, the outputs of the chunks
/// before it are written (`out` equals `x` there, as `assert_non_negative` copies) and the rest
/// still hold `untouched`.
pub fn assert_failed_in_chunk(
    error: &ferrocuda::Error,
    k: usize,
    chunk_len: usize,
    x: &[f32],
    out: &[f32],
    untouched: f32,
) {
    use ferrocuda::Error;
    let (n, message) = (x.len(), error.to_string());
    match error {
        Error::ChunkFailed {
            chunk,
            chunks,
            source,
            ..
        } => {
            assert_eq!((*chunk, *chunks), (k, n.div_ceil(chunk_len)), "{message}");
            assert!(
                matches!(
                    **source,
                    Error::KernelFailed { .. } | Error::KernelPanicked { .. }
                ),
                "{message}"
            );
        }
        other => panic!("expected ChunkFailed, got {other}"),
    }
    let elements = format!(
        "chunk {k} of {} (elements {} to {})",
        n.div_ceil(chunk_len),
        k * chunk_len,
        ((k + 1) * chunk_len).min(n)
    );
    assert!(message.contains(&elements), "{message}");
    let written = k * chunk_len;
    assert_eq!(&out[..written], &x[..written], "chunks before k written");
    assert!(
        out[written..].iter().all(|&v| v == untouched),
        "chunk k and later untouched"
    );
}

/// `full` on a GPU, `emulated` on the PTX emulator (ptx-emu/driver, docs/emulator.md): an
/// interpreter takes minutes where a GPU takes milliseconds, so GPU tests shrink their largest
/// inputs there. The same kernels and code paths run; the test's output says which size ran.
pub fn size_for<T: std::fmt::Debug>(device: &Device, full: T, emulated: T) -> T {
    if device.properties().is_emulator() {
        println!("on the PTX emulator: {emulated:?} instead of {full:?}");
        emulated
    } else {
        full
    }
}

/// The `ferrocuda` binary, without `FERROCUDA_DEVICE`: `FERROCUDA_BIN` (the GPU machine, where the
/// binary lives in the bundle), else the one cargo built for this test.
pub fn ferrocuda() -> std::process::Command {
    let bin =
        std::env::var_os("FERROCUDA_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_ferrocuda").into());
    let mut command = std::process::Command::new(bin);
    command.env_remove(ferrocuda::DEVICE_ENV);
    command
}

/// Runs `command`, expecting success; returns its stdout.
pub fn stdout_of(command: &mut std::process::Command) -> String {
    let std::process::Output {
        status,
        stdout,
        stderr,
    } = command.output().expect("the command runs");
    let stdout = String::from_utf8(stdout).expect("UTF-8 output");
    assert!(
        status.success(),
        "{command:?} exited with {status}\nstdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&stderr)
    );
    stdout
}

/// A cargo command for a user's crates outside this workspace (examples/own-kernels, the README's
/// quick start), as a user would run it: without this build's flags, in one target directory
/// shared by those tests (their dependencies are the same, built once).
pub fn cargo_for_user_crates(args: &[&str]) -> std::process::Command {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = std::process::Command::new(cargo);
    command
        .args(args)
        .arg("--target-dir")
        .arg(root.join("target/user-crates"))
        // A user's crate has no `.cargo/config.toml` of ours (x86-64-v3), but cargo finds ours
        // from any directory under this repository. An empty RUSTFLAGS takes precedence over
        // every config's rustflags, so the crate builds for plain x86-64 as a user's would, and
        // the CPU executor's run-time AVX2/FMA dispatch is what gives it speed.
        .env("RUSTFLAGS", "")
        // No debug info: it changes nothing a test looks at and took most of the user crates'
        // gigabyte of target directory.
        .env("CARGO_PROFILE_DEV_DEBUG", "false")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    command
}

/// `ptx` loaded on the CPU executor in checked mode, and on GPU 0 when there is one (else `test`
/// says it skipped its GPU half): a test runs its body once per module.
pub fn on_every_device(test: &str, ptx: &'static Ptx) -> Vec<ferrocuda::Module> {
    let cpu = Device::cpu_checked(true);
    assert!(cpu.checks_enabled());
    let mut modules = vec![cpu.load(ptx).unwrap()];
    if let Some(gpu) = gpu_or_skip(test) {
        modules.push(gpu.load(ptx).unwrap());
    }
    modules
}
