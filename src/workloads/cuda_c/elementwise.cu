// ferrocuda's CUDA C versions of the elementwise kernels (gpu-kernels/src/lib.rs), for the main
// job's "CUDA C" column. Compiled at run time by NVRTC; launched through ferrocuda's own launch
// path, so each kernel takes ferrocuda's parameters: a slice is (pointer, 64-bit length), in the
// Rust kernel's order.

// out[i] = a[i] + b[i], one thread per element.
extern "C" __global__ void vector_add(const float* __restrict__ a, unsigned long long a_len,
                                      const float* __restrict__ b, unsigned long long b_len,
                                      float* __restrict__ out, unsigned long long out_len) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < out_len) out[i] = a[i] + b[i];
}
