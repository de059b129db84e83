//! The list of workloads: [`Recipe`]s, built only when picked, for the main job's table
//! ([`all`]) and the slower matrix products ([`matmul_variants`]).

use super::workload::{Scale, Workload};
use super::{
    convolution, dot, finance, group_by, matmul, matmul_tensor, statistics, transpose, vector_add,
};
use crate::ops::{Filter, Matmul, Transpose};

/// A workload not built yet: its name, and how to build it. Building draws its inputs (tens of
/// megabytes at [`Scale::Full`], seconds of work), so a list of recipes costs nothing and only
/// the workloads picked from it by name pay for theirs.
pub struct Recipe {
    name: &'static str,
    build: Box<dyn Fn() -> Box<dyn Workload>>,
}

impl Recipe {
    /// The workload `build` makes, named `name`: what it computes, e.g. "matrix product".
    pub fn new(name: &'static str, build: impl Fn() -> Box<dyn Workload> + 'static) -> Self {
        Recipe {
            name,
            build: Box::new(build),
        }
    }

    /// What the workload computes, e.g. "matrix product": its row of the main job's table.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The workload with its inputs (and their reference results) drawn: a new one on every call.
    pub fn build(&self) -> Box<dyn Workload> {
        (self.build)()
    }
}

impl std::fmt::Debug for Recipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recipe").field("name", &self.name).finish()
    }
}

/// Every workload of the main job's table, in its order, not built: nothing is drawn until a
/// [`Recipe::build`].
pub fn all(scale: Scale) -> Vec<Recipe> {
    // The name also seeds a convolution's image.
    let convolution = |name, channels, filter: fn() -> Filter| {
        Recipe::new(name, move || {
            Box::new(convolution::Convolution::new(
                scale,
                name,
                channels,
                filter(),
            ))
        })
    };
    let many_keys = scale.pick(1 << 20, 1 << 20, 5000);
    vec![
        Recipe::new("vector add", move || {
            Box::new(vector_add::VectorAdd::new(scale))
        }),
        Recipe::new("dot product", move || Box::new(dot::Dot::new(scale))),
        matmul_recipe(scale, Matmul::RegisterBlocked),
        Recipe::new("matrix product, f16 tensor cores", move || {
            Box::new(matmul_tensor::MatmulTensor::new(scale))
        }),
        convolution("blur 3×3", 1, Filter::gaussian_3x3),
        convolution("blur 5×5", 3, Filter::gaussian_5x5),
        convolution("Sobel x", 1, Filter::sobel_x),
        Recipe::new("transpose, naive", move || {
            Box::new(transpose::TransposeWorkload::new(scale, Transpose::Naive))
        }),
        Recipe::new("transpose, coalesced", move || {
            Box::new(transpose::TransposeWorkload::new(
                scale,
                Transpose::Coalesced,
            ))
        }),
        Recipe::new("Black-Scholes", move || {
            Box::new(finance::BlackScholes::new(scale))
        }),
        Recipe::new("Monte Carlo π", move || {
            Box::new(finance::MonteCarloPi::new(scale))
        }),
        Recipe::new("Monte Carlo option", move || {
            Box::new(finance::MonteCarloOption::new(scale))
        }),
        Recipe::new("statistics", move || {
            Box::new(statistics::Statistics::new(scale))
        }),
        Recipe::new("group-by, few keys", move || {
            Box::new(group_by::GroupBy::new(scale, 16))
        }),
        Recipe::new("group-by, many keys", move || {
            Box::new(group_by::GroupBy::new(scale, many_keys))
        }),
    ]
}

/// The slower matrix products, [`Matmul::Naive`] and [`Matmul::Tiled`], as workloads: not rows
/// of the main job (it has the fast one), but checked the same way, and with CUDA C versions.
pub fn matmul_variants(scale: Scale) -> Vec<Recipe> {
    [Matmul::Naive, Matmul::Tiled]
        .map(|kernel| matmul_recipe(scale, kernel))
        .into()
}

/// The matrix product with `kernel`, named after it.
fn matmul_recipe(scale: Scale, kernel: Matmul) -> Recipe {
    let name = match kernel {
        Matmul::Naive => "matrix product, naive",
        Matmul::Tiled => "matrix product, tiled",
        Matmul::RegisterBlocked => "matrix product",
    };
    Recipe::new(name, move || Box::new(matmul::Matmul::new(scale, kernel)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_workload_checks_its_loop_and_rayon_results() {
        for recipe in all(Scale::Tiny) {
            let (mut workload, name) = (recipe.build(), recipe.name());
            workload.run_loop();
            assert_eq!(workload.check_loop(), Ok(()), "{name}");
            workload.run_rayon();
            assert_eq!(workload.check_loop(), Ok(()), "{name}");
            assert!(workload.work().bytes > 0, "{name}");
        }
    }
}
