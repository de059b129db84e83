//! What the host crate's property tests share.

/// Cases per property: `PROPTEST_CASES` if set (scripts/miri.sh runs a few), else `default`.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
