fn main() {
    // Builds kernels/ (the ports-kernels crate) to PTX for sm_70, checks it with ptxas when there
    // is one (its per-kernel report lands next to the PTX: ports_kernels.ptxas.txt), and sets
    // PORTS_KERNELS_PTX for src/lib.rs.
    ferrocuda_builder::PtxBuilder::new("kernels").build_for_env("PORTS_KERNELS_PTX");
}
