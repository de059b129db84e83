//! Launches `my_kernels::scaled_square` on the best device and checks it against an f64 loop.

use ferrocuda_host::{launch, Device, Ptx};

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

/// The largest element of each `BLOCK` of `x`: what `my_kernels::block_max` computes.
#[cfg(test)]
fn block_maxes<T: PartialOrd + Copy>(x: &[T], least: T) -> Vec<T> {
    x.chunks(my_kernels::BLOCK)
        .map(|chunk| chunk.iter().fold(least, |m, &v| if v > m { v } else { m }))
        .collect()
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
    assert_eq!(maxes, block_maxes(&x, f64::NEG_INFINITY));
}

#[test]
fn each_instance_of_the_generic_block_max_runs() {
    let kernels = Device::cpu_checked(true).load(&MY_KERNELS).unwrap();
    let block = my_kernels::BLOCK as u32;
    let ints: Vec<i32> = (0..700).map(|i| (i * 7919) % 1013 - 2_000).collect();
    let blocks = ints.len().div_ceil(my_kernels::BLOCK);
    // The arguments' types pick the instance (here `block_max_i32`)...
    let mut maxes = vec![0i32; blocks];
    launch!(kernels, my_kernels::block_max[blocks as u32, block](&ints, &mut maxes)).unwrap();
    assert_eq!(maxes, block_maxes(&ints, i32::MIN));
    // ...or the turbofish does.
    let floats: Vec<f32> = ints.iter().map(|&i| i as f32 * 0.25).collect();
    let mut maxes = vec![0.0f32; blocks];
    launch!(kernels, my_kernels::block_max::<f32>[blocks as u32, block](&floats, &mut maxes))
        .unwrap();
    assert_eq!(maxes, block_maxes(&floats, f32::NEG_INFINITY));
    assert_eq!(my_kernels::block_max::<i32>().name(), "block_max_i32");
    for entry in ["block_max_f32", "block_max_f64", "block_max_i32"] {
        assert!(MY_KERNELS.info().entry(entry).is_some(), "{entry}");
    }
}
