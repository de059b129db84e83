//! Run-time CPU feature dispatch: `#[kernel]`'s CPU expansion compiles, in a crate built
//! without AVX2 and FMA (a user's crate without ferrocuda's `.cargo/config.toml`, whose
//! `x86-64-v3` makes every `mul_add` one instruction instead of a call of libm's `fmaf`), a
//! second copy of each kernel's block loop with `#[target_feature(enable = "avx2,fma")]`, and
//! calls it when this function says the CPU has both.

/// What `FERROCUDA_CPU_FEATURES=baseline` asks for: never the AVX2/FMA copies (to compare).
pub const FEATURES_ENV: &str = "FERROCUDA_CPU_FEATURES";

/// Whether the CPU has AVX2 and FMA and `FERROCUDA_CPU_FEATURES` is not `baseline`: detected
/// once, then one relaxed load per call.
#[inline]
pub fn has_avx2_and_fma() -> bool {
    use core::sync::atomic::{AtomicU8, Ordering::Relaxed};
    // 0: not yet known; 1: yes; 2: no.
    static KNOWN: AtomicU8 = AtomicU8::new(0);
    match KNOWN.load(Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let wanted = std::env::var(FEATURES_ENV).map_or(true, |v| v != "baseline");
            let has = wanted && detected();
            KNOWN.store(if has { 1 } else { 2 }, Relaxed);
            has
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn detected() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

#[cfg(not(target_arch = "x86_64"))]
fn detected() -> bool {
    false
}
