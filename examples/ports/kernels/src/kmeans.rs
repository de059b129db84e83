//! Rodinia `cuda/kmeans/kmeans_cuda_kernel.cu`: `invert_mapping` (points × features to features ×
//! points, once) and `kmeansPoint` (each point's nearest centre, the centres in constant memory,
//! set by the host before each iteration as `cudaMemcpyToSymbol(c_clusters, ...)`). The original
//! reads the features through a texture (`tex1Dfetch`); here they are a `&[f32]`, which the PTX
//! reads through the same read-only cache (`ld.global.nc`). As the original is built, without
//! `GPU_DELTA_REDUCTION` and `GPU_NEW_CENTER_REDUCTION`, `clusters`, `block_clusters` and
//! `block_deltas` are passed and unused.

use ferrocuda_std::prelude::*;

/// `ASSUMED_NR_CLUSTERS`: the constant table holds this many centres of up to 34 features.
pub const ASSUMED_NR_CLUSTERS: usize = 32;
/// `THREADS_PER_DIM` of kmeans_cuda.cu: blocks of `THREADS_PER_DIM²` threads (1D).
pub const THREADS_PER_DIM: u32 = 16;

ferrocuda_std::constant! {
    /// `__constant__ float c_clusters[ASSUMED_NR_CLUSTERS*34]`: the cluster centres.
    pub static C_CLUSTERS: [f32; ASSUMED_NR_CLUSTERS * 34];
}

/// `output[point + npoints·i] = input[point·nfeatures + i]`.
#[kernel]
pub fn invert_mapping(input: &[f32], output: Out<f32>, npoints: i32, nfeatures: i32) {
    let point_id = (thread::thread_idx().x + thread::block_dim().x * thread::block_idx().x) as i32;
    if point_id < npoints {
        for i in 0..nfeatures {
            output.set(point_id + npoints * i, input.at(point_id * nfeatures + i));
        }
    }
}

/// `membership[point] = ` the index of the nearest centre (squared Euclidean distance).
#[kernel(name = "kmeansPoint")]
#[allow(clippy::too_many_arguments)]
pub fn kmeans_point(
    features: &[f32],
    nfeatures: i32,
    npoints: i32,
    nclusters: i32,
    membership: Out<i32>,
    _clusters: &[f32],
    _block_clusters: Out<f32>,
    _block_deltas: Out<i32>,
) {
    let (b, d, t) = (
        thread::block_idx(),
        thread::block_dim(),
        thread::thread_idx(),
    );
    let block_id = thread::grid_dim().x * b.y + b.x;
    let point_id = block_id * d.x * d.y + t.x;
    let mut index = -1;
    if point_id < npoints as u32 {
        let c_clusters = C_CLUSTERS.view();
        let mut min_dist = f32::MAX;
        // find the cluster center id with min distance to pt
        for i in 0..nclusters {
            let cluster_base_index = i * nfeatures;
            let mut ans = 0.0f32; // Euclidean distance squared
            for j in 0..nfeatures {
                let addr = point_id as i32 + j * npoints; // appropriate index of data point
                let diff = features.at(addr) - c_clusters.get((cluster_base_index + j) as usize);
                ans += diff * diff;
            }
            let dist = ans;
            if dist < min_dist {
                min_dist = dist;
                index = i;
            }
        }
    }
    if point_id < npoints as u32 {
        // assign the membership to object point_id
        membership.set(point_id, index);
    }
}
