//! Rodinia kmeans (`cuda/kmeans/kmeans_cuda.cu`, `kmeans_clustering.c`): k-means of random points
//! around separated centres. `invert_mapping` once; then per iteration the centres go into
//! constant memory (`cudaMemcpyToSymbol(c_clusters, ...)`: `Module::set_constant_range`, the
//! first `nclusters · nfeatures` of the table's elements), `kmeansPoint` assigns each point, and
//! the host counts the changes and averages the new centres, until nothing changes (or 500 times).

use crate::{compare_exact, compare_floats, rng, Comparison, Port};
use ferrocuda_host::{launch, Module, Result};
use ports_kernels::kmeans::{invert_mapping, kmeans_point, C_CLUSTERS, THREADS_PER_DIM};
use rand::Rng;

pub struct Input {
    pub npoints: usize,
    pub nfeatures: usize,
    pub nclusters: usize,
    /// `features[point · nfeatures + feature]`.
    pub features: Vec<f32>,
}

/// The memberships, the centres and the iteration count.
pub struct Clustering<T> {
    pub membership: Vec<i32>,
    pub clusters: Vec<T>,
    pub iterations: usize,
}

/// `kmeans_clustering`'s loop around `assign`, which sets the memberships and returns how many
/// changed; centres start at the first `nclusters` points and become the means of their members.
fn cluster<T: Copy + Default + std::ops::AddAssign + std::ops::Div<Output = T> + From<f32>, E>(
    input: &Input,
    mut assign: impl FnMut(&[T], &mut [i32]) -> std::result::Result<usize, E>,
    count: impl Fn(usize) -> T,
) -> std::result::Result<Clustering<T>, E> {
    let (n, f, k) = (input.npoints, input.nfeatures, input.nclusters);
    let mut clusters: Vec<T> = input.features[..k * f]
        .iter()
        .map(|&x| T::from(x))
        .collect();
    let mut membership = vec![-1; n];
    let mut iterations = 0;
    loop {
        let delta = assign(&clusters, &mut membership)?;
        let (mut sums, mut lens) = (vec![T::default(); k * f], vec![0usize; k]);
        for (p, &c) in membership.iter().enumerate() {
            let c = c as usize;
            lens[c] += 1;
            for j in 0..f {
                sums[c * f + j] += T::from(input.features[p * f + j]);
            }
        }
        for c in 0..k {
            if lens[c] > 0 {
                for j in 0..f {
                    clusters[c * f + j] = sums[c * f + j] / count(lens[c]);
                }
            }
        }
        iterations += 1;
        if delta == 0 || iterations > 500 {
            return Ok(Clustering {
                membership,
                clusters,
                iterations,
            });
        }
    }
}

pub struct Kmeans;

impl Port for Kmeans {
    const NAME: &'static str = "Rodinia kmeans";
    type Input = Input;
    type Output = Clustering<f32>;
    type Reference = Clustering<f64>;

    fn describe(input: &Input) -> String {
        format!(
            "{} points, {} features, {} clusters",
            input.npoints, input.nfeatures, input.nclusters
        )
    }

    fn input(seed: u64, scale: usize) -> Input {
        let mut rng = rng(seed);
        let (npoints, nfeatures, nclusters) = (2048 * scale, 8, 5);
        let centres: Vec<f32> = (0..nclusters * nfeatures)
            .map(|_| rng.random_range(0.0..20.0))
            .collect();
        let mut features = Vec::with_capacity(npoints * nfeatures);
        for _ in 0..npoints {
            let c = rng.random_range(0..nclusters);
            features.extend(
                (0..nfeatures).map(|j| centres[c * nfeatures + j] + rng.random_range(-1.0..1.0)),
            );
        }
        Input {
            npoints,
            nfeatures,
            nclusters,
            features,
        }
    }

    fn run(module: &Module, input: &Input) -> Result<Clustering<f32>> {
        let device = module.device();
        let (npoints, nfeatures) = (input.npoints as i32, input.nfeatures as i32);
        let num_threads = THREADS_PER_DIM * THREADS_PER_DIM;
        let num_blocks = (input.npoints as u32).div_ceil(num_threads);
        let mut num_blocks_perdim = (num_blocks as f64).sqrt() as u32;
        while num_blocks_perdim * num_blocks_perdim < num_blocks {
            num_blocks_perdim += 1;
        }
        let num_blocks = num_blocks_perdim * num_blocks_perdim;

        let feature_flipped_d = device.upload(&input.features)?;
        let mut feature_d = device.alloc_zeroed::<f32>(input.features.len())?;
        launch!(module, invert_mapping[num_blocks, num_threads](&feature_flipped_d, &mut feature_d, npoints, nfeatures))?;
        let mut membership_d = device.alloc_zeroed::<i32>(input.npoints)?;
        let mut clusters_d = device.alloc_zeroed::<f32>(input.nclusters * input.nfeatures)?;
        let mut block_clusters_d = device.alloc_zeroed::<f32>(1)?;
        let mut block_deltas_d = device.alloc_zeroed::<i32>(1)?;

        cluster(
            input,
            |clusters: &[f32], membership: &mut [i32]| {
                membership_d.copy_from(membership)?;
                clusters_d.copy_from(clusters)?; // copied as the original does, unused
                module.set_constant_range(&C_CLUSTERS, 0, clusters)?;
                launch!(
                    module,
                    kmeans_point[(num_blocks_perdim, num_blocks_perdim), num_threads](
                        &feature_d,
                        nfeatures,
                        npoints,
                        input.nclusters as i32,
                        &mut membership_d,
                        &clusters_d,
                        &mut block_clusters_d,
                        &mut block_deltas_d
                    )
                )?;
                let new = membership_d.to_vec()?;
                let delta = new
                    .iter()
                    .zip(membership.iter())
                    .filter(|(a, b)| a != b)
                    .count();
                membership.copy_from_slice(&new);
                Ok(delta)
            },
            |n| n as f32,
        )
    }

    /// The same loop, nearest centres in f64.
    fn reference(input: &Input) -> Clustering<f64> {
        let f = input.nfeatures;
        let assign = |clusters: &[f64], membership: &mut [i32]| {
            let mut delta = 0;
            for (p, m) in membership.iter_mut().enumerate() {
                let point = &input.features[p * f..(p + 1) * f];
                let distance = |c: usize| -> f64 {
                    point
                        .iter()
                        .zip(&clusters[c * f..(c + 1) * f])
                        .map(|(&x, &y)| (x as f64 - y).powi(2))
                        .sum()
                };
                let nearest = (0..input.nclusters)
                    .min_by(|&a, &b| distance(a).total_cmp(&distance(b)))
                    .unwrap() as i32;
                delta += usize::from(*m != nearest);
                *m = nearest;
            }
            Ok::<usize, std::convert::Infallible>(delta)
        };
        match cluster(input, assign, |n| n as f64) {
            Ok(clustering) => clustering,
        }
    }

    fn compare(got: &Clustering<f32>, want: &Clustering<f64>) -> Comparison {
        Comparison::all([
            compare_exact("membership", &got.membership, &want.membership),
            compare_floats(
                "centre coordinate",
                &got.clusters,
                &want.clusters,
                1e-4,
                1e-5,
            ),
            compare_exact("iteration count", &[got.iterations], &[want.iterations]),
        ])
    }
}
