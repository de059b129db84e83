//! Issue 30, point 1: `launch!` passes as many arguments as `#[kernel]` accepts
//! (`ferrocuda_std::abi::MAX_KERNEL_PARAMS`; the error past it is tested in gpu-macros), on the
//! CPU executor and on a GPU (the PTX emulator in CI), against a host reference.

mod support;

use ferrocuda::launch;
use ferrocuda_std::abi::MAX_KERNEL_PARAMS;
use rand::Rng;
use test_kernels::many_params::thirty_two_params;

#[test]
fn a_kernel_of_thirty_two_parameters_launches_on_every_device() {
    assert_eq!(MAX_KERNEL_PARAMS, 32);
    let (mut rng, seed) = support::rng();
    let n = 1000;
    let f32s = |rng: &mut rand::rngs::StdRng| support::random_f32(rng, n);
    let i32s =
        |rng: &mut rand::rngs::StdRng| (0..n).map(|_| rng.random::<i32>()).collect::<Vec<_>>();
    let u32s =
        |rng: &mut rand::rngs::StdRng| (0..n).map(|_| rng.random::<u32>()).collect::<Vec<_>>();
    let f64s = |rng: &mut rand::rngs::StdRng| {
        (0..n)
            .map(|_| rng.random_range(-1e3..1e3))
            .collect::<Vec<f64>>()
    };
    let (a0, a1, a2, a3) = (
        f32s(&mut rng),
        f32s(&mut rng),
        i32s(&mut rng),
        i32s(&mut rng),
    );
    let (a4, a5, a6, a7) = (
        u32s(&mut rng),
        u32s(&mut rng),
        f64s(&mut rng),
        f64s(&mut rng),
    );
    let (m0, m1, m2, m3) = (1.5f32, -0.25f32, rng.random::<i32>(), -7i32);
    let (m4, m5, m6, m7) = (rng.random::<u32>(), 3u32, 0.125f64, -2.5f64);
    let (c0, c1, c2, c3) = (2.0f32, 0.5f32, 11i32, rng.random::<i32>());
    let (c4, c5, c6, c7) = (5u32, rng.random::<u32>(), 1e-3f64, 42.0f64);
    for module in support::on_every_device(
        "a_kernel_of_thirty_two_parameters_launches_on_every_device",
        support::test_kernels(),
    ) {
        let (mut o0, mut o1) = (vec![0f32; n], vec![0f32; n]);
        let (mut o2, mut o3) = (vec![0i32; n], vec![0i32; n]);
        let (mut o4, mut o5) = (vec![0u32; n], vec![0u32; n]);
        let (mut o6, mut o7) = (vec![0f64; n], vec![0f64; n]);
        launch!(
            module,
            thirty_two_params[n.div_ceil(128), 128](
                &a0, &a1, &a2, &a3, &a4, &a5, &a6, &a7,
                m0, m1, m2, m3, m4, m5, m6, m7,
                c0, c1, c2, c3, c4, c5, c6, c7,
                &mut o0, &mut o1, &mut o2, &mut o3, &mut o4, &mut o5, &mut o6, &mut o7
            )
        )
        .unwrap();
        let device = module.device();
        for i in 0..n {
            let at = format!("{device}, i={i}, seed={seed}");
            assert_eq!(o0[i], a0[i] * m0 + c0, "{at}");
            assert_eq!(o1[i], a1[i] * m1 + c1, "{at}");
            assert_eq!(o2[i], a2[i].wrapping_mul(m2).wrapping_add(c2), "{at}");
            assert_eq!(o3[i], a3[i].wrapping_mul(m3).wrapping_add(c3), "{at}");
            assert_eq!(o4[i], a4[i].wrapping_mul(m4).wrapping_add(c4), "{at}");
            assert_eq!(o5[i], a5[i].wrapping_mul(m5).wrapping_add(c5), "{at}");
            assert_eq!(o6[i], a6[i] * m6 + c6, "{at}");
            assert_eq!(o7[i], a7[i] * m7 + c7, "{at}");
        }
    }
}
