//! The seed's workloads as benchmarks, shared by the main job (`ferrocuda run`) and the criterion
//! benches: for each, fixed inputs, the plain single-threaded loop a Rust programmer would write,
//! a hand-written rayon version, the kernels through [`crate::ops`] on any device, and a check of
//! every result against an independent reference before any time is reported.
//!
//! ```
//! use ferrocuda::workloads::{self, Scale};
//! use ferrocuda::Device;
//!
//! let kernels = Device::cpu().load(&ferrocuda::KERNELS)?;
//! // The list costs nothing: only the workload built draws its inputs.
//! let recipes = workloads::all(Scale::Tiny);
//! let mut dot = recipes.iter().find(|r| r.name() == "dot product").unwrap().build();
//! dot.run_loop();
//! dot.check_loop().unwrap();
//! let mut on_cpu = dot.on_device(&kernels)?;
//! on_cpu.run()?;
//! on_cpu.check()?.unwrap();
//! # Ok::<(), ferrocuda::Error>(())
//! ```

mod convolution;
pub mod cublas;
pub mod cuda_c;
mod dot;
mod finance;
mod group_by;
mod matmul;
mod matmul_tensor;
mod statistics;
mod streamed;
mod transpose;
mod vector_add;

pub use streamed::{
    run_streamed, run_streamed_devices, streamed_size, SpreadRun, Streamed, StreamedDevices,
    StreamedRun,
};

use crate::ops::{Filter, Matmul, Transpose};
use crate::{Module, Result};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// How large the inputs are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// The seed's sizes (matrix product 1024², 4K image, 10M options, ...).
    Full,
    /// About a sixteenth of the work: for CI-sized machines (`--quick`).
    Quick,
    /// Small enough for tests in debug builds.
    Tiny,
}

impl Scale {
    /// `full` at [`Scale::Full`], `quick` at [`Scale::Quick`], `tiny` at [`Scale::Tiny`].
    pub fn pick<T>(self, full: T, quick: T, tiny: T) -> T {
        match self {
            Scale::Full => full,
            Scale::Quick => quick,
            Scale::Tiny => tiny,
        }
    }
}

/// What one run of a workload's kernels costs at the least: what rates are computed from.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Work {
    /// Bytes that must cross device memory: inputs read once plus outputs written once.
    pub bytes: u64,
    /// Floating-point operations (a fused multiply-add counts two); 0 where not meaningful.
    pub flops: u64,
}

/// The outcome of checking a result: `Err` says which element is wrong and by how much.
pub type Verdict = std::result::Result<(), String>;

/// One benchmark workload. Every implementation computes the same result; the `check_*`
/// methods compare it with a reference computed independently (in f64 where rounding matters).
pub trait Workload {
    /// Its size, e.g. "1024×1024×1024".
    fn size(&self) -> String;
    /// Bytes and flops of one run.
    fn work(&self) -> Work;
    /// Runs the plain single-threaded loop.
    fn run_loop(&mut self);
    /// Runs the hand-written rayon version (all cores).
    fn run_rayon(&mut self);
    /// Checks the result of the last [`Workload::run_loop`] or [`Workload::run_rayon`].
    fn check_loop(&self) -> Verdict;
    /// Uploads the inputs to `kernels`' device and allocates the outputs there, for timing the
    /// kernels with the data already in place.
    ///
    /// # Errors
    /// Allocation or copy failures (e.g. [`crate::Error::OutOfMemory`]).
    fn on_device<'a>(&'a self, kernels: &'a Module) -> Result<Box<dyn DeviceRun + 'a>>;
    /// The kernels [`Workload::on_device`]'s run launches, for running it on another module
    /// with kernels of the same names (the CUDA C versions, [`cuda_c`]); empty if it has none.
    fn kernels(&self) -> &'static [&'static str] {
        &[]
    }
    /// The matrix product the workload is, for [`cublas`] to compute beside our kernels, the
    /// GPU column's ceiling; `None` for the workloads that are not one.
    fn gemm(&self) -> Option<&dyn cublas::Gemm> {
        None
    }
}

/// A workload's data on a device, ready to run its kernels.
pub trait DeviceRun {
    /// Launches the kernels (queued on a GPU: time it with [`crate::Device::time`]).
    ///
    /// # Errors
    /// Launch errors.
    fn run(&mut self) -> Result<()>;
    /// Copies the result back and checks it.
    ///
    /// # Errors
    /// Copy errors; a wrong result is the inner `Err`.
    fn check(&mut self) -> Result<Verdict>;
}

/// A workload not built yet: its name, and how to build it. Building draws its inputs (tens of
/// megabytes at [`Scale::Full`], seconds of work), so a list of recipes costs nothing and only
/// the workloads picked from it by name pay for theirs.
pub struct Recipe {
    name: &'static str,
    build: Box<dyn Fn() -> Box<dyn Workload>>,
}

impl Recipe {
    /// The workload `build` makes, named `name`: what it computes, e.g. "matrix product".
    pub fn new(name: &'static str, build: impl Fn() -> Box<dyn Workload> + 'static) -> Self {
        Recipe {
            name,
            build: Box::new(build),
        }
    }

    /// What the workload computes, e.g. "matrix product": its row of the main job's table.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The workload with its inputs (and their reference results) drawn: a new one on every call.
    pub fn build(&self) -> Box<dyn Workload> {
        (self.build)()
    }
}

impl std::fmt::Debug for Recipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recipe").field("name", &self.name).finish()
    }
}

/// Every workload of the main job's table, in its order, not built: nothing is drawn until a
/// [`Recipe::build`].
pub fn all(scale: Scale) -> Vec<Recipe> {
    // The name also seeds a convolution's image.
    let convolution = |name, channels, filter: fn() -> Filter| {
        Recipe::new(name, move || {
            Box::new(convolution::Convolution::new(
                scale,
                name,
                channels,
                filter(),
            ))
        })
    };
    let many_keys = scale.pick(1 << 20, 1 << 20, 5000);
    vec![
        Recipe::new("vector add", move || {
            Box::new(vector_add::VectorAdd::new(scale))
        }),
        Recipe::new("dot product", move || Box::new(dot::Dot::new(scale))),
        matmul(scale, Matmul::RegisterBlocked),
        Recipe::new("matrix product, f16 tensor cores", move || {
            Box::new(matmul_tensor::MatmulTensor::new(scale))
        }),
        convolution("blur 3×3", 1, Filter::gaussian_3x3),
        convolution("blur 5×5", 3, Filter::gaussian_5x5),
        convolution("Sobel x", 1, Filter::sobel_x),
        Recipe::new("transpose, naive", move || {
            Box::new(transpose::TransposeWorkload::new(scale, Transpose::Naive))
        }),
        Recipe::new("transpose, coalesced", move || {
            Box::new(transpose::TransposeWorkload::new(
                scale,
                Transpose::Coalesced,
            ))
        }),
        Recipe::new("Black-Scholes", move || {
            Box::new(finance::BlackScholes::new(scale))
        }),
        Recipe::new("Monte Carlo π", move || {
            Box::new(finance::MonteCarloPi::new(scale))
        }),
        Recipe::new("Monte Carlo option", move || {
            Box::new(finance::MonteCarloOption::new(scale))
        }),
        Recipe::new("statistics", move || {
            Box::new(statistics::Statistics::new(scale))
        }),
        Recipe::new("group-by, few keys", move || {
            Box::new(group_by::GroupBy::new(scale, 16))
        }),
        Recipe::new("group-by, many keys", move || {
            Box::new(group_by::GroupBy::new(scale, many_keys))
        }),
    ]
}

/// The slower matrix products, [`Matmul::Naive`] and [`Matmul::Tiled`], as workloads: not rows
/// of the main job (it has the fast one), but checked the same way, and with CUDA C versions.
pub fn matmul_variants(scale: Scale) -> Vec<Recipe> {
    [Matmul::Naive, Matmul::Tiled]
        .map(|kernel| matmul(scale, kernel))
        .into()
}

/// The matrix product with `kernel`, named after it.
fn matmul(scale: Scale, kernel: Matmul) -> Recipe {
    let name = match kernel {
        Matmul::Naive => "matrix product, naive",
        Matmul::Tiled => "matrix product, tiled",
        Matmul::RegisterBlocked => "matrix product",
    };
    Recipe::new(name, move || Box::new(matmul::Matmul::new(scale, kernel)))
}

/// The generator every workload draws its inputs from: fixed, so runs are comparable.
fn inputs_rng(workload: &str) -> StdRng {
    let seed = workload.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    StdRng::seed_from_u64(seed)
}

/// `n` values uniform in `range`.
fn uniform(rng: &mut StdRng, n: usize, range: std::ops::Range<f32>) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(range.clone())).collect()
}

/// `Ok` if every `got[i]` is within `tolerance(i)` of `want(i)`, else the first that is not.
fn check_close(
    got: &[f32],
    expected_len: usize,
    want: impl Fn(usize) -> f64,
    tolerance: impl Fn(usize) -> f64,
) -> Verdict {
    if got.len() != expected_len {
        return Err(format!("{} elements, expected {expected_len}", got.len()));
    }
    for (i, &g) in got.iter().enumerate() {
        let (w, tol) = (want(i), tolerance(i));
        if !within(g as f64, w, tol) {
            return Err(format!("element {i} is {g}, expected {w} (± {tol:.3e})"));
        }
    }
    Ok(())
}

/// Whether `got` is within `tolerance` of `want`; never for a NaN.
fn within(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance
}

/// `Ok` if `got` is within `tolerance` of `want`.
fn check_scalar(what: &str, got: f64, want: f64, tolerance: f64) -> Verdict {
    if within(got, want, tolerance) {
        Ok(())
    } else {
        Err(format!(
            "{what} is {got}, expected {want} (± {tolerance:.3e})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_name_the_first_wrong_element_and_reject_nan_and_wrong_lengths() {
        let want = |i: usize| i as f64;
        let tolerance = |_| 0.5;
        assert_eq!(check_close(&[0.0, 1.2, 2.0], 3, want, tolerance), Ok(()));
        let wrong = check_close(&[0.0, 1.0, 2.6], 3, want, tolerance).unwrap_err();
        assert!(wrong.starts_with("element 2 is 2.6, expected 2"), "{wrong}");
        assert!(check_close(&[0.0, f32::NAN], 2, want, tolerance).is_err());
        assert!(check_close(&[0.0], 2, want, tolerance)
            .unwrap_err()
            .contains("expected 2"));
        assert!(check_scalar("x", f64::NAN, 1.0, 1.0).is_err());
        assert!(check_scalar("x", 1.5, 1.0, 0.5).is_ok());
    }

    #[test]
    fn every_workload_checks_its_loop_and_rayon_results() {
        for recipe in all(Scale::Tiny) {
            let (mut workload, name) = (recipe.build(), recipe.name());
            workload.run_loop();
            assert_eq!(workload.check_loop(), Ok(()), "{name}");
            workload.run_rayon();
            assert_eq!(workload.check_loop(), Ok(()), "{name}");
            assert!(workload.work().bytes > 0, "{name}");
        }
    }

    #[test]
    fn inputs_are_the_same_on_every_run() {
        let draw = || uniform(&mut inputs_rng("w"), 4, 0.0..1.0);
        assert_eq!(draw(), draw());
        assert_ne!(draw(), uniform(&mut inputs_rng("v"), 4, 0.0..1.0));
    }
}
