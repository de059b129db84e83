//! Launches `my_kernels::scaled_square` on the best device and checks it against an f64 loop.

use ferrocuda_host::{launch, launch_cooperative, Device, Ptx};

static MY_KERNELS: Ptx = Ptx::new("my-kernels", include_str!(env!("MY_KERNELS_PTX")));

fn scaled_squares(device: &Device, x: &[f64], scale: f64) -> ferrocuda_host::Result<Vec<f64>> {
    let kernels = device.load(&MY_KERNELS)?;
    let mut out = vec![0.0; x.len()];
    let blocks = (x.len() as u32).div_ceil(256);
    launch!(kernels, my_kernels::scaled_square[blocks, 256](x, &mut out, scale))?;
    Ok(out)
}

fn main() -> ferrocuda_host::Result<()> {
    let choice = Device::best();
    let x: Vec<f64> = (0..1000).map(|i| i as f64 / 7.0).collect();
    let out = scaled_squares(&choice.device, &x, 0.5)?;
    let wrong = x
        .iter()
        .zip(&out)
        .filter(|(x, y)| 0.5 * *x * *x != **y)
        .count();
    println!(
        "{} of {} elements right on {}",
        x.len() - wrong,
        x.len(),
        choice.device
    );
    assert_eq!(wrong, 0);
    Ok(())
}

#[test]
fn scaled_square_matches_an_f64_loop_on_the_cpu() {
    let x: Vec<f64> = (0..1001).map(|i| i as f64 - 500.25).collect();
    let out = scaled_squares(&Device::cpu(), &x, -3.0).unwrap();
    for (x, y) in x.iter().zip(&out) {
        assert_eq!(*y, -3.0 * x * x);
    }
}

#[test]
fn block_max_matches_a_loop_in_checked_mode() {
    let kernels = Device::cpu_checked(true).load(&MY_KERNELS).unwrap();
    let x: Vec<f64> = (0..1000)
        .map(|i| ((i * 7919) % 1013) as f64 - 300.0)
        .collect();
    let blocks = x.len().div_ceil(my_kernels::BLOCK);
    let mut maxes = vec![0.0; blocks];
    launch!(kernels, my_kernels::block_max[blocks as u32, my_kernels::BLOCK as u32](&x, &mut maxes))
        .unwrap();
    for (b, max) in maxes.iter().enumerate() {
        let chunk = &x[b * my_kernels::BLOCK..((b + 1) * my_kernels::BLOCK).min(x.len())];
        assert_eq!(
            *max,
            chunk.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
        );
    }
}

#[test]
fn grid_max_finds_the_largest_element_in_one_cooperative_launch() {
    let kernels = Device::cpu_checked(true).load(&MY_KERNELS).unwrap();
    let x: Vec<f64> = (0..5000)
        .map(|i| ((i * 7919) % 4999) as f64 - 2000.5)
        .collect();
    for blocks in [1u32, 3, 8] {
        let mut maxes = vec![f64::NAN; blocks as usize];
        let mut max = vec![f64::NAN];
        launch_cooperative!(
            kernels,
            my_kernels::grid_max[blocks, my_kernels::BLOCK as u32](&x, &mut maxes, &mut max)
        )
        .unwrap();
        assert_eq!(max[0], x.iter().cloned().fold(f64::NEG_INFINITY, f64::max));
    }
}
