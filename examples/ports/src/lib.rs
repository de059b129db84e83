//! Seven CUDA programs nobody here wrote, ported to ferrocuda as a user would port them (issue 30):
//! Rodinia's hotspot, nw, bfs, srad v2, kmeans and lud and PolyBench/GPU's fdtd-2d. The kernels are the
//! `ports-kernels` crate (`kernels/`), built to PTX by `build.rs`; each module here is one
//! program's host side, as its `.cu` file's: a seeded input, the driver loop (the launches and
//! copies of the original, in its order), and an independent CPU reference (f64 where the
//! original computes in `float`, exact for integer programs). The examples (`rodinia_*.rs`,
//! `polybench_*.rs`) and `tests/ports.rs` both run them through [`Port`]; docs/ports.md compares
//! each with the original.

use ferrocuda_host::{Device, Module, Ptx, Result};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

pub mod bfs;
pub mod fdtd2d;
pub mod hotspot;
pub mod kmeans;
pub mod lud;
pub mod nw;
pub mod srad;

/// The PTX of `ports-kernels`, built by `build.rs`.
pub static PORTS_KERNELS: Ptx = Ptx::new("ports-kernels", include_str!(env!("PORTS_KERNELS_PTX")));

/// One ported program.
pub trait Port {
    /// The program, as its suite names it ("Rodinia hotspot").
    const NAME: &'static str;
    /// What it computes, with the input's size.
    fn describe(input: &Self::Input) -> String;
    type Input;
    type Output;
    type Reference;
    /// The input, from `seed`; `scale` multiplies its main dimension (1: the tests' size, which
    /// runs on the PTX emulator in a few seconds).
    fn input(seed: u64, scale: usize) -> Self::Input;
    /// The original host program's launches and copies on `module`'s device.
    fn run(module: &Module, input: &Self::Input) -> Result<Self::Output>;
    /// The CPU reference, written independently of the kernels.
    fn reference(input: &Self::Input) -> Self::Reference;
    /// `got` against `want`.
    fn compare(got: &Self::Output, want: &Self::Reference) -> Comparison;
}

/// What a comparison found: `summary` says what was compared and how close it was; `mismatch`
/// names the first element outside the tolerance, if any.
#[derive(Debug)]
pub struct Comparison {
    pub summary: String,
    pub mismatch: Option<String>,
}

impl Comparison {
    pub fn ok(&self) -> bool {
        self.mismatch.is_none()
    }

    /// Several comparisons as one (each part's summary, the first mismatch).
    pub fn all(parts: impl IntoIterator<Item = Comparison>) -> Comparison {
        let (mut summary, mut mismatch) = (String::new(), None);
        for part in parts {
            if !summary.is_empty() {
                summary.push_str("; ");
            }
            summary.push_str(&part.summary);
            mismatch = mismatch.or(part.mismatch);
        }
        Comparison { summary, mismatch }
    }
}

/// `got` (f32, from the kernels) against `want` (the f64 reference): every element within
/// `abs + rel·|want|`.
pub fn compare_floats(what: &str, got: &[f32], want: &[f64], abs: f64, rel: f64) -> Comparison {
    if got.len() != want.len() {
        return Comparison {
            summary: format!("{what}: {} elements", got.len()),
            mismatch: Some(format!(
                "{what}: {} elements, the reference has {}",
                got.len(),
                want.len()
            )),
        };
    }
    let (mut worst, mut worst_at, mut mismatch) = (0.0f64, 0, None);
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let error = (g as f64 - w).abs();
        let bound = abs + rel * w.abs();
        if error / bound > worst || error.is_nan() {
            (worst, worst_at) = (error / bound, i);
        }
        if (error > bound || error.is_nan()) && mismatch.is_none() {
            mismatch = Some(format!(
                "{what}[{i}] = {g}, the reference {w} (error {error:.3e} > {bound:.3e})"
            ));
        }
    }
    Comparison {
        summary: format!(
            "{what}: {} values within {abs:e} + {rel:e}·|x| of the f64 reference (worst at [{worst_at}]: {:.3} of the bound)",
            got.len(),
            worst
        ),
        mismatch,
    }
}

/// `got` against `want`, element for element.
pub fn compare_exact<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: &[T],
    want: &[T],
) -> Comparison {
    let mismatch = if got.len() != want.len() {
        Some(format!(
            "{what}: {} elements, the reference has {}",
            got.len(),
            want.len()
        ))
    } else {
        got.iter()
            .zip(want)
            .position(|(g, w)| g != w)
            .map(|i| format!("{what}[{i}] = {:?}, the reference {:?}", got[i], want[i]))
    };
    Comparison {
        summary: format!("{what}: {} values equal to the reference", got.len()),
        mismatch,
    }
}

/// A seeded generator for the inputs.
pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

/// What [`check`] measured.
pub struct Checked {
    pub comparison: Comparison,
    pub kernels: Duration,
    pub reference: Duration,
    pub description: String,
}

/// Runs `P` on `module` with the input of `seed` and `scale`, and its reference.
pub fn check<P: Port>(module: &Module, seed: u64, scale: usize) -> Result<Checked> {
    let input = P::input(seed, scale);
    let start = Instant::now();
    let got = P::run(module, &input)?;
    let kernels = start.elapsed();
    let start = Instant::now();
    let want = P::reference(&input);
    let reference = start.elapsed();
    Ok(Checked {
        comparison: P::compare(&got, &want),
        kernels,
        reference,
        description: P::describe(&input),
    })
}

/// An example's `main`: `P` on `Device::best()` (`FERROCUDA_DEVICE` chooses), seed `PORTS_SEED`
/// (default 1), scale `PORTS_SCALE` (default 1); prints what it compared and the times, and exits
/// with 1 on a mismatch or an error.
pub fn example_main<P: Port>() -> ExitCode {
    let number = |var: &str, default: u64| {
        std::env::var(var).ok().map_or(default, |v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{var}={v}: not a number"))
        })
    };
    let (seed, scale) = (number("PORTS_SEED", 1), number("PORTS_SCALE", 1) as usize);
    let device = Device::best().device;
    let result = device
        .load(&PORTS_KERNELS)
        .and_then(|module| check::<P>(&module, seed, scale));
    match result {
        Ok(checked) => {
            let mut out = String::new();
            let _ = writeln!(out, "{} on {device}: {}", P::NAME, checked.description);
            let _ = writeln!(out, "  {}", checked.comparison.summary);
            let _ = writeln!(
                out,
                "  kernels (with copies) {:.2?}, CPU reference {:.2?} (seed {seed}, scale {scale})",
                checked.kernels, checked.reference
            );
            print!("{out}");
            match checked.comparison.mismatch {
                None => ExitCode::SUCCESS,
                Some(mismatch) => {
                    eprintln!("MISMATCH: {mismatch}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(error) => {
            eprintln!("{}: {error}", P::NAME);
            ExitCode::FAILURE
        }
    }
}
