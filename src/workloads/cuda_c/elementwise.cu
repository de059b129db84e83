// ferrocuda's CUDA C version of the elementwise kernel (gpu-kernels/src/lib.rs).

// out[i] = a[i] + b[i], one thread per element.
extern "C" __global__ void vector_add(const float* __restrict__ a, u64 a_len,
                                      const float* __restrict__ b, u64 b_len,
                                      float* __restrict__ out, u64 out_len) {
    REQUIRE(a_len == out_len && b_len == out_len);
    u64 i = global_index();
    if (i < out_len) out[i] = a[i] + b[i];
}
