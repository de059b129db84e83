// ferrocuda's CUDA C versions of the group-by kernels (gpu-kernels/src/group_by.rs): per key,
// the count, the f32 sum and min/max as order keys (u32 that order like the floats; 0 is "none"),
// for rows (keys[i], values[i]); rows with keys ≥ K are counted in rejected = [rows, largest key].

// A u32 that orders like x among non-NaN floats, never 0 (nor is its complement).
__device__ __forceinline__ unsigned order_key(float x) {
    unsigned bits = __float_as_uint(x);
    return bits & 0x80000000u ? ~bits : bits | 0x80000000u;
}

__device__ __forceinline__ float from_order_key(unsigned key) {
    return __uint_as_float(key & 0x80000000u ? key & 0x7fffffffu : ~key);
}

__device__ __forceinline__ void reject(u64* rejected, unsigned key) {
    atomicAdd(&rejected[0], 1ull);
    atomicMax(&rejected[1], (u64)key);
}

// The aggregation kernels' parameters, ferrocuda's order: rows, then the state, then rejected.
#define GROUP_BY_PARAMS                                                                      \
    const unsigned *__restrict__ keys, u64 keys_len, const float *__restrict__ values,      \
        u64 values_len, unsigned *count, u64 count_len, float *sum, u64 sum_len,            \
        unsigned *lowest, u64 lowest_len, unsigned *highest, u64 highest_len, u64 *rejected, \
        u64 rejected_len

// This thread's share of the rows (grid-stride) added to the state (count, sum, lowest, highest:
// K each, in shared or global memory); rows with keys ≥ K go to `rejected`. Both aggregation
// kernels share it, so they treat every row alike.
__device__ __forceinline__ void aggregate_rows(const unsigned* __restrict__ keys,
                                               const float* __restrict__ values, u64 rows, u64 k,
                                               unsigned* count, float* sum, unsigned* lowest,
                                               unsigned* highest, u64* rejected) {
    for (u64 i = global_index(); i < rows; i += grid_threads()) {
        unsigned key = keys[i];
        float value = values[i];
        if (key < k) {
            atomicAdd(&count[key], 1u);
            atomicAdd(&sum[key], value);
            if (!isnan(value)) {
                unsigned order = order_key(value);
                atomicMax(&lowest[key], ~order);
                atomicMax(&highest[key], order);
            }
        } else {
            reject(rejected, key);
        }
    }
}

// Aggregates the rows this grid visits (grid-stride) into a private copy of the state per block
// in dynamic shared memory ([count | sum | lowest | highest], K each: 16 bytes per key), then
// adds each non-empty key to the global state once. Launch with 16·K bytes of dynamic shared
// memory.
extern "C" __global__ void group_by_shared(GROUP_BY_PARAMS) {
    extern __shared__ unsigned local[];
    unsigned shared_bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(shared_bytes));
    u64 k = count_len;
    REQUIRE(values_len == keys_len && sum_len == k && lowest_len == k && highest_len == k);
    REQUIRE(rejected_len >= 2 && k <= shared_bytes / 16);
    float* local_sum = (float*)local;
    for (u64 j = threadIdx.x; j < k; j += blockDim.x) {
        local[j] = 0;
        local_sum[k + j] = 0.0f;
        local[2 * k + j] = 0;
        local[3 * k + j] = 0;
    }
    __syncthreads();
    aggregate_rows(keys, values, keys_len, k, local, local_sum + k, local + 2 * k, local + 3 * k,
                   rejected);
    __syncthreads();
    for (u64 j = threadIdx.x; j < k; j += blockDim.x) {
        unsigned n = local[j];
        if (n != 0) {
            atomicAdd(&count[j], n);
            atomicAdd(&sum[j], local_sum[k + j]);
            unsigned low = local[2 * k + j];
            if (low != 0) {
                atomicMax(&lowest[j], low);
                atomicMax(&highest[j], local[3 * k + j]);
            }
        }
    }
}

// group_by_shared without shared memory: each row updates its key's global state directly.
extern "C" __global__ void group_by_global(GROUP_BY_PARAMS) {
    u64 k = count_len;
    REQUIRE(values_len == keys_len && sum_len == k && lowest_len == k && highest_len == k);
    REQUIRE(rejected_len >= 2);
    aggregate_rows(keys, values, keys_len, k, count, sum, lowest, highest, rejected);
}

// min and max per key from the order keys: +∞ and −∞ where no non-NaN value was seen.
extern "C" __global__ void group_by_finish(const unsigned* __restrict__ lowest, u64 lowest_len,
                                           const unsigned* __restrict__ highest, u64 highest_len,
                                           float* __restrict__ min, u64 min_len,
                                           float* __restrict__ max, u64 max_len) {
    REQUIRE(lowest_len == min_len && highest_len == min_len && max_len == min_len);
    for (u64 i = global_index(); i < min_len; i += grid_threads()) {
        unsigned low = lowest[i], high = highest[i];
        min[i] = low == 0 ? __int_as_float(0x7f800000) : from_order_key(~low);
        max[i] = high == 0 ? __int_as_float(0xff800000) : from_order_key(high);
    }
}
