fn main() {
    // Builds ../my-kernels to PTX, reruns when its sources change, and sets MY_KERNELS_PTX.
    ferrocuda_builder::PtxBuilder::new("../my-kernels").build_for_env("MY_KERNELS_PTX");
}
