//! What the host crate's integration tests share (each uses some: the rest is `dead_code` there).

/// Cases per property: `PROPTEST_CASES` if set (scripts/miri.sh runs a few), else `default`.
#[allow(dead_code)]
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `ptx` loaded on the CPU executor with or without checked mode (which keeps `Out`'s atomic
/// stores), for the tests of the elementwise path's plain stores.
#[allow(dead_code)]
pub fn cpu_module(ptx: &'static ferrocuda_host::Ptx, checked: bool) -> ferrocuda_host::Module {
    let options = ferrocuda_host::CpuOptions {
        checked,
        ..ferrocuda_host::CpuOptions::default()
    };
    ferrocuda_host::Device::cpu_with(options)
        .unwrap()
        .load(ptx)
        .unwrap()
}

/// `full` elements, or 70 under Miri, which interprets every one.
#[allow(dead_code)]
pub fn elements(full: usize) -> usize {
    if cfg!(miri) {
        70
    } else {
        full
    }
}
