//! PTX helpers of the tests that check built PTX (tests/ptx.rs, tests/ptx_language.rs).

use ferrocuda::{KernelArgs, KernelHandle};

/// The sizes the host actually packs for real arguments to `kernel` (a kernel, or a generic
/// kernel whose instance the arguments pick).
pub fn packed<'a, P>(_kernel: &impl KernelHandle<P>, args: impl KernelArgs<'a, P>) -> Vec<usize> {
    args.ptx_param_sizes()
}

/// Assembles `source` with ptxas for sm_70, sm_80 and sm_90; an arch without ptxas is skipped
/// (an error under CI, where `make setup` installs it).
pub fn assemble_everywhere(
    name: &str,
    source: &str,
) -> Vec<(&'static str, ferrocuda_builder::PtxasReport)> {
    assemble_for(name, source, &["sm_70", "sm_80", "sm_90"])
}

/// [`assemble_everywhere`] for the architectures `archs` (PTX built for sm_80 does not assemble
/// for sm_70).
pub fn assemble_for(
    name: &str,
    source: &str,
    archs: &[&'static str],
) -> Vec<(&'static str, ferrocuda_builder::PtxasReport)> {
    let dir =
        std::env::temp_dir().join(format!("ferrocuda-ptx-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.ptx"));
    std::fs::write(&path, source).unwrap();
    let mut reports = Vec::new();
    for &arch in archs {
        let Some(ptxas) = ferrocuda_builder::find_ptxas(arch) else {
            assert!(
                !super::on_ci(),
                "CI must have ptxas for {arch} (make setup installs it)"
            );
            super::say_skipped(
                "ptxas_assembles",
                &format!("no ptxas for {arch} (run `make setup`)"),
            );
            continue;
        };
        let report = ferrocuda_builder::assemble(&ptxas, &path, arch)
            .unwrap_or_else(|e| panic!("ptxas {} -arch={arch} failed:\n{e}", ptxas.version));
        println!("{report}");
        reports.push((arch, report));
    }
    std::fs::remove_dir_all(&dir).ok();
    reports
}
