//! The ported Rodinia and PolyBench/GPU programs (examples/ports, docs/ports.md), each against its
//! CPU reference: on the CPU executor in checked mode (races, uninitialised shared reads, barrier
//! divergence), and on the GPU when there is one (in CI, the PTX emulator). `scripts/test.sh` runs
//! this file again with FERROCUDA_CPU_PATH=coroutine.

mod support;

use ferrocuda_ports::{
    bfs::Bfs, check, fdtd2d::Fdtd2d, hotspot::Hotspot, kmeans::Kmeans, nw::Nw, srad::SradV2, Port,
    PORTS_KERNELS,
};

/// `P` at the examples' size (seed 1) on every device.
fn port<P: Port>(test: &str) {
    for module in support::on_every_device(test, &PORTS_KERNELS) {
        let checked = check::<P>(&module, 1, 1)
            .unwrap_or_else(|e| panic!("{} on {}: {e}", P::NAME, module.device()));
        println!(
            "{} on {}: {}; {:.2?}",
            P::NAME,
            module.device(),
            checked.comparison.summary,
            checked.kernels
        );
        if let Some(mismatch) = checked.comparison.mismatch {
            panic!("{} on {}: {mismatch}", P::NAME, module.device());
        }
    }
}

#[test]
fn rodinia_hotspot() {
    port::<Hotspot>("rodinia_hotspot");
}

#[test]
fn rodinia_nw() {
    port::<Nw>("rodinia_nw");
}

#[test]
fn rodinia_bfs() {
    port::<Bfs>("rodinia_bfs");
}

#[test]
fn rodinia_srad_v2() {
    port::<SradV2>("rodinia_srad_v2");
}

#[test]
fn rodinia_kmeans() {
    port::<Kmeans>("rodinia_kmeans");
}

#[test]
fn polybench_fdtd_2d() {
    port::<Fdtd2d>("polybench_fdtd_2d");
}

/// How the CPU executor runs each port's kernels (docs/ports.md lists them, with the reasons for
/// the coroutine path): a change of the macro that moves one shows here.
#[test]
fn cpu_paths() {
    use ports_kernels::{bfs, fdtd2d, hotspot, kmeans, nw, srad};
    let kernels = [
        hotspot::calculate_temp.info(),
        nw::needle_cuda_shared_1.info(),
        nw::needle_cuda_shared_2.info(),
        bfs::kernel.info(),
        bfs::kernel2.info(),
        srad::srad_cuda_1.info(),
        srad::srad_cuda_2.info(),
        kmeans::invert_mapping.info(),
        kmeans::kmeans_point.info(),
        fdtd2d::fdtd_step1_kernel.info(),
        fdtd2d::fdtd_step2_kernel.info(),
        fdtd2d::fdtd_step3_kernel.info(),
    ];
    let paths: Vec<String> = kernels
        .iter()
        .map(|k| format!("{}: {:?}", k.name, k.cpu_path))
        .collect();
    println!("{}", paths.join("\n"));
    assert_eq!(
        paths,
        [
            "calculate_temp: Regions",
            "needle_cuda_shared_1: Regions",
            "needle_cuda_shared_2: Regions",
            "Kernel: Elementwise",
            "Kernel2: Elementwise",
            "srad_cuda_1: Regions",
            "srad_cuda_2: Regions",
            "invert_mapping: Elementwise",
            "kmeansPoint: Elementwise",
            "fdtd_step1_kernel: Elementwise",
            "fdtd_step2_kernel: Elementwise",
            "fdtd_step3_kernel: Elementwise",
        ]
    );
}
