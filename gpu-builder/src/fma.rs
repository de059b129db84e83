//! The one-line warning for a host build without FMA on a CPU that has it.
//!
//! Without the `fma` target feature every `f32::mul_add` (ferrocuda_std::math, the kernels'
//! fused multiply-adds) on the CPU executor is a call into libm's `fmaf` instead of one
//! instruction: the same results, several times slower (ferrocuda measured 2.5x to 7.6x on its
//! workloads). Rust's default x86-64 target has no FMA, and a user's crate does not get
//! ferrocuda's own `.cargo/config.toml`, so nothing else would tell them.

/// The environment variable that turns the warning off (any value but empty or `0`).
pub const NO_FMA_WARNING_ENV: &str = "FERROCUDA_NO_FMA_WARNING";

/// Whether to warn: the build's target is x86-64, its target features (cargo's
/// `CARGO_CFG_TARGET_FEATURE`, comma-separated) lack `fma`, and the build machine's CPU has it,
/// so the fix is one line of configuration away. `None`s (not in a build script) never warn.
pub fn should_warn_without_fma(
    target_arch: Option<&str>,
    target_features: Option<&str>,
    cpu_has_fma: bool,
) -> bool {
    let (Some(arch), Some(features)) = (target_arch, target_features) else {
        return false;
    };
    arch == "x86_64" && cpu_has_fma && !features.split(',').any(|f| f.trim() == "fma")
}

/// The warning's text (one line: cargo shows each `cargo:warning=` line separately).
pub(crate) fn warning(target: &str) -> String {
    format!(
        "the host code is built without FMA although this CPU has it, so ferrocuda_std::math and \
         every mul_add on the CPU executor call libm's fmaf (several times slower). Add to \
         .cargo/config.toml: [target.{target}] rustflags = [\"-C\", \"target-cpu=x86-64-v3\"] \
         (or \"target-cpu=native\" for this machine only). Silence this with \
         {NO_FMA_WARNING_ENV}=1 or ferrocuda_builder::PtxBuilder::warn_without_fma(false)."
    )
}

/// Whether the CPU running the build has FMA.
pub(crate) fn cpu_has_fma() -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    {
        std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    {
        false
    }
}

/// Prints the warning when [`should_warn_without_fma`] says so for this build script and
/// `FERROCUDA_NO_FMA_WARNING` is not set.
pub(crate) fn warn_if_needed() {
    let env = |k: &str| std::env::var(k).ok();
    if env(NO_FMA_WARNING_ENV).is_some_and(|v| !v.is_empty() && v != "0") {
        return;
    }
    let arch = env("CARGO_CFG_TARGET_ARCH");
    let features = env("CARGO_CFG_TARGET_FEATURE");
    if should_warn_without_fma(arch.as_deref(), features.as_deref(), cpu_has_fma()) {
        let target = env("TARGET").unwrap_or_else(|| "x86_64-unknown-linux-gnu".into());
        println!("cargo:warning={}", warning(&target));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_only_on_x86_64_without_fma_on_a_cpu_with_fma() {
        let baseline = Some("fxsr,sse,sse2");
        let v3 = Some(
            "avx,avx2,bmi1,bmi2,f16c,fma,fxsr,lzcnt,movbe,sse,sse2,sse3,sse4.1,sse4.2,ssse3,xsave",
        );
        assert!(should_warn_without_fma(Some("x86_64"), baseline, true));
        assert!(!should_warn_without_fma(Some("x86_64"), baseline, false));
        assert!(!should_warn_without_fma(Some("x86_64"), v3, true));
        assert!(!should_warn_without_fma(
            Some("aarch64"),
            Some("neon"),
            true
        ));
        assert!(!should_warn_without_fma(None, None, true));
        assert!(!should_warn_without_fma(Some("x86_64"), None, true));
        // `fma` must be a whole feature name, not a part of one.
        assert!(should_warn_without_fma(
            Some("x86_64"),
            Some("sse2,fmaxx"),
            true
        ));
    }

    #[test]
    fn the_warning_says_how_to_fix_and_silence_it() {
        let text = warning("x86_64-unknown-linux-gnu");
        assert!(!text.contains('\n'));
        for part in [
            "[target.x86_64-unknown-linux-gnu] rustflags = [\"-C\", \"target-cpu=x86-64-v3\"]",
            "target-cpu=native",
            "FERROCUDA_NO_FMA_WARNING=1",
            "warn_without_fma(false)",
        ] {
            assert!(text.contains(part), "{part} missing from {text}");
        }
    }
}
