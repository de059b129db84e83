//! The project's CUDA C versions of the seed workloads (`src/workloads/cuda_c/*.cu`) compile
//! with NVRTC, for the oldest and the newest architecture we build for, and each kernel has the
//! name and the parameter sizes of the Rust kernel it stands for (which is what lets the main job
//! launch it through the same checked launch). On a GPU (the PTX emulator in CI) every workload
//! runs its CUDA C through its usual `ops` call and passes the reference check ours passes, and
//! a wrong CUDA C kernel fails it. NVRTC needs no GPU: the tests use the system's, or pip's
//! `nvidia-cuda-nvrtc-cu12` where they find it (FERROCUDA_NVRTC, CUDA_TOOLS_DIR,
//! ~/.cache/sass-tools, Python's site-packages; `make setup` installs it), and skip saying why
//! when there is none.

mod support;

use ferrocuda::nvrtc::{self, NVRTC_ENV};
use ferrocuda::workloads::{self, cuda_c, Scale};
use ferrocuda::Device;
use std::sync::Once;

/// Whether NVRTC is there (pointing FERROCUDA_NVRTC at pip's where the system has none); if
/// not, says that `test` skipped and why. Every test calls it first.
fn nvrtc_or_skip(test: &str) -> bool {
    static FIND: Once = Once::new();
    FIND.call_once(|| {
        if std::env::var_os(NVRTC_ENV).is_none() {
            if let Some(path) = support::nvrtc::pip_nvrtc() {
                // Before any NVRTC call; the other tests wait on `FIND` before reading it.
                std::env::set_var(NVRTC_ENV, &path);
            }
        }
    });
    match nvrtc::nvrtc_available() {
        Ok(()) => true,
        Err(why) => {
            assert!(
                !support::on_ci(),
                "CI installs NVRTC (scripts/setup.sh): {why}"
            );
            support::say_skipped(test, &why.to_string());
            false
        }
    }
}

#[test]
fn the_cuda_c_sources_compile_with_nvrtc_and_match_the_rust_kernels_parameters() {
    if !nvrtc_or_skip("the_cuda_c_sources_compile_with_nvrtc_and_match_the_rust_kernels_parameters")
    {
        return;
    }
    let ours = ferrocuda::KERNELS.info();
    let ours_tensor = ferrocuda::TENSOR_KERNELS.info();
    // Every row of the main job has a CUDA C version.
    let mut kernels: Vec<&str> = Vec::new();
    for recipe in workloads::all(Scale::Tiny) {
        let theirs = recipe.build().kernels();
        assert!(!theirs.is_empty(), "{} has no CUDA C", recipe.name());
        kernels.extend(theirs);
    }
    // The matrix products the main job leaves out (it has only the fast one) are there too.
    kernels.extend(["matmul_naive", "matmul_tiled"]);
    kernels.sort();
    kernels.dedup();
    for compute in [(7, 0), (8, 0), (9, 0)] {
        let ptx = nvrtc::compile_cuda_c("ferrocuda CUDA C", &cuda_c::source(), compute)
            .unwrap_or_else(|e| panic!("compute_{}{}: {e}", compute.0, compute.1));
        let info = ptx.info();
        // (The tensor-core twins are in every module from sm_80 on: below.)
        for name in kernels.iter().filter(|name| !TENSOR_TWINS.contains(name)) {
            assert!(info.entry(name).is_some(), "no {name} in the CUDA C module");
        }
        // The tensor-core twins from sm_80 on (mma.sync, ldmatrix, cp.async), and only there:
        // an older target's PTX leaves them out rather than failing to compile.
        for name in TENSOR_TWINS {
            let has = info.entry(name).is_some();
            assert_eq!(
                has,
                compute >= (8, 0),
                "{name} at compute_{}{}",
                compute.0,
                compute.1
            );
            if has {
                let body = ptx.source();
                for instruction in [
                    "mma.sync.aligned.m16n8k16",
                    "mma.sync.aligned.m16n8k8.row.col.f32.tf32",
                    "ldmatrix.sync",
                    "cp.async.cg",
                ] {
                    assert!(
                        body.contains(instruction),
                        "no {instruction} in the twins' PTX"
                    );
                }
            }
        }
        // Every CUDA C kernel our PTX has too (any a workload may launch) takes our parameters.
        for theirs in &info.entries {
            let rust = ours
                .entry(&theirs.name)
                .or_else(|| ours_tensor.entry(&theirs.name));
            if let Some(rust) = rust {
                let name = &theirs.name;
                assert_eq!(theirs.param_sizes, rust.param_sizes, "{name}'s parameters");
            }
        }
        // convolve_2d_const's constant table: the 5 × 5 filter's weights, as ours where our PTX
        // declares it.
        let taps = (2 * ferrocuda::kernels::convolution::CONV_MAX_RADIUS + 1).pow(2);
        assert_eq!(const_bytes(ptx.source(), "CONV_WEIGHTS"), Some(4 * taps));
        if let Some(rust) = const_bytes(ferrocuda::KERNELS.source(), "CONV_WEIGHTS") {
            assert_eq!(rust, 4 * taps);
        }
    }
    // A source error comes back as NVRTC's log, not a crash.
    let error = nvrtc::compile_cuda_c(
        "broken.cu",
        "extern \"C\" __global__ void k() { nope; }",
        (9, 0),
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("broken.cu") && error.contains("nope"),
        "{error}"
    );
}

/// The bytes of the `.const .b8 NAME[bytes]` that `ptx` declares, if it does.
fn const_bytes(ptx: &str, name: &str) -> Option<usize> {
    let line = ptx
        .lines()
        .find(|l| l.contains(".const") && l.contains(&format!(" {name}[")))?;
    let count = line.split_once('[')?.1.split_once(']')?.0;
    assert!(line.contains(".b8"), "{line}");
    count.parse().ok()
}

/// The CUDA C module on GPU 0, or `None` after saying why the test skipped.
fn cuda_c_on_gpu(test: &str) -> Option<(Device, ferrocuda::Module)> {
    if !nvrtc_or_skip(test) {
        return None;
    }
    let gpu = support::gpu_or_skip(test)?;
    let module = cuda_c::load(&gpu).unwrap_or_else(|why| panic!("loading the CUDA C: {why}"));
    Some((gpu, module))
}

#[test]
fn every_workload_runs_its_cuda_c_on_the_gpu_and_passes_the_reference_check() {
    let test = "every_workload_runs_its_cuda_c_on_the_gpu_and_passes_the_reference_check";
    let Some((gpu, for_this_gpu)) = cuda_c_on_gpu(test) else {
        return;
    };
    // Also the oldest architecture's PTX, which the driver JIT-compiles for this GPU.
    let ptx = nvrtc::compile_cuda_c("ferrocuda CUDA C", &cuda_c::source(), (7, 0)).unwrap();
    let for_sm_70 = gpu.load(ptx).unwrap();
    // The main job's test sizes (Tiny): small enough for the PTX emulator.
    let mut all = workloads::all(Scale::Tiny);
    all.extend(workloads::matmul_variants(Scale::Tiny));
    for (module, arch) in [(&for_this_gpu, "this GPU"), (&for_sm_70, "compute_70")] {
        for recipe in &all {
            let (name, workload) = (recipe.name(), recipe.build());
            if arch == "compute_70" && workload.kernels().iter().all(|k| TENSOR_TWINS.contains(k)) {
                // sm_80 and newer only: not in compute_70's PTX (checked in the test above).
                continue;
            }
            assert!(cuda_c::runs(module, workload.kernels()), "{name}");
            let verdict = (|| {
                let mut on_gpu = workload.on_device(module)?;
                on_gpu.run()?;
                on_gpu.check()
            })()
            .unwrap_or_else(|e| panic!("{name} ({arch}): {e}"));
            assert_eq!(verdict, Ok(()), "{name}'s CUDA C result ({arch})");
            println!("{name} ({arch}): the CUDA C result passed the reference check");
        }
    }
}

#[test]
fn a_wrong_cuda_c_kernel_fails_its_workloads_check() {
    let Some((gpu, _)) = cuda_c_on_gpu("a_wrong_cuda_c_kernel_fails_its_workloads_check") else {
        return;
    };
    // vector_add with a subtraction: the same name and parameters, a wrong result.
    let wrong = cuda_c::source().replace("out[i] = a[i] + b[i]", "out[i] = a[i] - b[i]");
    assert_ne!(
        wrong,
        cuda_c::source(),
        "the planted bug must change the source"
    );
    let ptx = nvrtc::compile_cuda_c("wrong vector_add", &wrong, (9, 0)).unwrap();
    let module = gpu.load(ptx).unwrap();
    let workload = workloads::all(Scale::Tiny)
        .iter()
        .map(|recipe| recipe.build())
        .find(|w| w.kernels() == ["vector_add"])
        .unwrap();
    let mut on_gpu = workload.on_device(&module).unwrap();
    on_gpu.run().unwrap();
    let verdict = on_gpu.check().unwrap();
    assert!(
        verdict
            .as_ref()
            .is_err_and(|why| why.starts_with("element ")),
        "{verdict:?}"
    );
}

ferrocuda_std::constant! {
    /// The table CUDA C's `convolve_2d_const` reads: `(2·radius + 1)²` weights first.
    static CONV_WEIGHTS: [f32; 25];
}

/// A host-side handle for CUDA C's `convolve_2d_const` (the Rust kernel of that name is
/// sass-layout's): launched here only on the CUDA C module, so its body never runs.
#[ferrocuda_std::kernel(same_len(image, out))]
fn convolve_2d_const(
    image: &[f32],
    out: ferrocuda_std::Out<f32>,
    width: u32,
    height: u32,
    channels: u32,
    radius: u32,
) {
    let _ = (image, out, width, height, channels, radius);
    unreachable!("convolve_2d_const runs only as CUDA C on a GPU");
}

#[test]
fn cuda_c_convolve_2d_const_filters_with_the_weights_set_in_constant_memory() {
    use ferrocuda::ops::{self, Filter};
    let test = "cuda_c_convolve_2d_const_filters_with_the_weights_set_in_constant_memory";
    let Some((_gpu, module)) = cuda_c_on_gpu(test) else {
        return;
    };
    let cpu = Device::cpu().load(&ferrocuda::KERNELS).unwrap();
    let (mut rng, seed) = support::rng();
    let (width, height) = (37, 11);
    for (filter, channels) in [
        (Filter::gaussian_5x5(), 3),
        (Filter::sobel_x(), 1),
        (Filter::gaussian_3x3(), 2),
    ] {
        let image = support::random_f32(&mut rng, width * height * channels);
        // Our kernel on the CPU executor: the same fused multiply-adds in the same order, so
        // the same bits.
        let mut want = vec![0.0f32; image.len()];
        ops::convolve_2d(&cpu, &image, &mut want, width, height, channels, &filter).unwrap();
        let mut table = [0.0f32; 25];
        table[..filter.weights().len()].copy_from_slice(filter.weights());
        module.set_constant(&CONV_WEIGHTS, &table).unwrap();
        let mut got = vec![f32::NAN; image.len()];
        let grid = (width.div_ceil(32) as u32, height.div_ceil(8) as u32);
        let (w, h, c, r) = (
            width as u32,
            height as u32,
            channels as u32,
            filter.radius() as u32,
        );
        ferrocuda::launch!(module, convolve_2d_const[grid, (32, 8)](&image, &mut got, w, h, c, r))
            .unwrap();
        let same = got
            .iter()
            .zip(&want)
            .all(|(g, w)| g.to_bits() == w.to_bits());
        assert!(same, "{filter:?}, {channels} channels, seed {seed}");
    }
}

/// The CUDA C twins of the tensor-core matrix products (`cuda_c/tensor_cores.cu`).
const TENSOR_TWINS: [&str; 3] = ["matmul_tc_f16", "matmul_tc_bf16", "matmul_tc_f32"];

/// `a·b` in f64 from the (rounded) inputs, and per element the bound the f32 accumulation of
/// k products keeps to: `k · 2^-24 · Σ|a·b|` (docs of `ferrocuda_std::mma`).
fn product_and_bound(a: &[f64], b: &[f64], (m, n, k): (usize, usize, usize)) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            let products = (0..k).map(|p| a[i * k + p] * b[p * n + j]);
            let magnitude: f64 = products.clone().map(f64::abs).sum();
            out.push((products.sum(), k as f64 * 2f64.powi(-24) * magnitude));
        }
    }
    out
}

/// Runs one twin on `x` and `y` rounded to `T`; gives the rounded inputs widened, and C.
fn twin_case<T: Copy>(
    x: &[f32],
    y: &[f32],
    c_len: usize,
    round: fn(f32) -> T,
    widen: fn(&T) -> f64,
    launch: impl FnOnce(&[T], &[T], &mut [f32]) -> Result<(), ferrocuda::Error>,
) -> (Vec<f64>, Vec<f64>, Vec<f32>) {
    let (a, b): (Vec<T>, Vec<T>) = (
        x.iter().map(|&v| round(v)).collect(),
        y.iter().map(|&v| round(v)).collect(),
    );
    let mut c = vec![f32::NAN; c_len];
    launch(&a, &b, &mut c).unwrap();
    (
        a.iter().map(widen).collect(),
        b.iter().map(widen).collect(),
        c,
    )
}

#[test]
fn cuda_c_tensor_core_twins_multiply_within_the_bound_at_ragged_sizes() {
    let test = "cuda_c_tensor_core_twins_multiply_within_the_bound_at_ragged_sizes";
    let Some((gpu, module)) = cuda_c_on_gpu(test) else {
        return;
    };
    if gpu
        .properties()
        .compute_capability
        .is_some_and(|cc| cc < (8, 0))
    {
        return support::say_skipped(test, "the tensor-core twins need sm_80");
    }
    let (mut rng, seed) = support::rng();
    // Ragged in every dimension (partial tiles, k not a multiple of 8: the element-wise
    // staging), and whole tiles with more than one stage.
    for (m, n, k) in [(1, 1, 1), (17, 33, 9), (65, 64, 70), (64, 128, 96)] {
        let (x, y) = (
            support::random_f32(&mut rng, m * k),
            support::random_f32(&mut rng, k * n),
        );
        // The library's op, on the CUDA C module: it launches whichever module's entry of the
        // input type, with the library kernel's grid and block.
        let shape = ferrocuda::ops::MatmulShape::new(m, n, k);
        // One row a twin: its name (for the failure message), how the f32 inputs are rounded
        // to its type and widened back exactly, and the library op that launches it.
        macro_rules! twins {
            ($($kind:literal: $round:expr, $widen:expr, $op:path;)*) => {[$(
                ($kind, twin_case(&x, &y, m * n, $round, $widen, |a, b, c| {
                    $op(&module, a, b, c, shape)
                })),
            )*]};
        }
        let cases = twins! {
            "f16": ferrocuda::f16::from_f32, |h| h.to_f64(), ferrocuda::ops::matmul_tensor;
            "bf16": ferrocuda::bf16::from_f32, |h| h.to_f64(), ferrocuda::ops::matmul_tensor;
            // tf32: the tensor cores read the 10 high fraction bits of each f32, so the
            // reference multiplies the inputs cut to those (exactly as widened here).
            "tf32": |v| v, |v| f64::from(f32::from_bits(v.to_bits() & !0x1fff)),
                ferrocuda::ops::matmul_tf32;
        };
        for (kind, (a, b, c)) in cases {
            for (at, ((want, bound), got)) in product_and_bound(&a, &b, (m, n, k))
                .into_iter()
                .zip(&c)
                .enumerate()
            {
                let error = (*got as f64 - want).abs();
                assert!(
                    error <= bound,
                    "{kind} {m}×{n}×{k}: c[{}][{}] = {got}, want {want} (error {error:e} > {bound:e}), seed {seed}",
                    at / n,
                    at % n
                );
            }
        }
    }
}
