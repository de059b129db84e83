//! Issue 30, point 6: parts of device buffers. Copies into and out of a sub-range (sync and
//! async), a sub-range passed to a kernel as its input or output without a copy, and ranges that
//! do not fit as errors; on the CPU executor and on a GPU (the PTX emulator in CI), against the
//! same operations on a host `Vec`.

mod support;

use ferrocuda::{launch, Error};
use rand::Rng;
use test_kernels::{assert_non_negative, write_shifted};

#[test]
fn a_part_of_a_buffer_is_a_kernel_input_and_output_in_place() {
    for module in support::on_every_device(
        "a_part_of_a_buffer_is_a_kernel_input_and_output_in_place",
        support::test_kernels(),
    ) {
        let device = module.device();
        let (mut rng, seed) = support::rng();
        let n = 1000;
        let x: Vec<f32> = (0..n).map(|_| rng.random_range(0.0..10.0)).collect();
        let input = device.upload(&x).unwrap();
        let mut output = device.upload(&vec![-1.0f32; n]).unwrap();
        for _ in 0..8 {
            let a = rng.random_range(0..=n);
            let b = rng.random_range(a..=n);
            let (c, len) = (rng.random_range(0..=n - (b - a)), b - a);
            let mut expected = output.to_vec().unwrap();
            expected[c..c + len].copy_from_slice(&x[a..b]);
            let src = input.slice(a..b).unwrap();
            let mut dst = output.slice_mut(c..c + len).unwrap();
            launch!(module, assert_non_negative[len.div_ceil(64).max(1), 64](&src, &mut dst))
                .unwrap();
            assert_eq!(
                output.to_vec().unwrap(),
                expected,
                "{device}: {a}..{b} into {c}.., seed {seed}"
            );
        }
        // The launch checks the views' lengths, as it does whole buffers'.
        let error = launch!(
            module,
            assert_non_negative[1, 64](&input.slice(0..3).unwrap(), &mut output.slice_mut(0..4).unwrap())
        )
        .unwrap_err();
        assert!(
            matches!(error, Error::LengthMismatch { .. }),
            "{device}: {error}"
        );
        // The kernel sees the view's length: a write past it is caught, not made into the rest
        // of the buffer. (On the CPU only: on a GPU the trap destroys the context, and with it
        // the other tests' buffers in this process; tests/gpu_faults.rs has those.)
        if device.kind() == ferrocuda::DeviceKind::Cpu {
            let mut out = device.upload(&[7u32; 16]).unwrap();
            let error = launch!(module, write_shifted[1, 4](&mut out.slice_mut(4..8).unwrap(), 2))
                .unwrap_err();
            assert!(
                matches!(error, Error::KernelPanicked { .. }),
                "{device}: {error}"
            );
            let back = out.to_vec().unwrap();
            assert_eq!(&back[..6], &[7; 6], "{device}");
            assert_eq!(&back[8..], &[7; 8], "{device}");
        }
    }
}

#[test]
fn a_part_of_a_buffer_copies_to_and_from_the_host() {
    for module in support::on_every_device(
        "a_part_of_a_buffer_copies_to_and_from_the_host",
        support::test_kernels(),
    ) {
        let device = module.device();
        let (mut rng, seed) = support::rng();
        let n = 513;
        let mut mirror: Vec<u32> = (0..n).map(|_| rng.random()).collect();
        let mut buffer = device.upload(&mirror).unwrap();
        let stream = device.new_stream().unwrap();
        for round in 0..12 {
            let a = rng.random_range(0..=n);
            let b = rng.random_range(a..=n);
            let data: Vec<u32> = (a..b).map(|_| rng.random()).collect();
            mirror[a..b].copy_from_slice(&data);
            if round % 2 == 0 {
                buffer.slice_mut(a..b).unwrap().copy_from(&data).unwrap();
            } else {
                let pinned = device.pin(&data).unwrap();
                let pending = stream
                    .upload_async(pinned, buffer.slice_mut(a..b).unwrap())
                    .unwrap();
                pending.wait().unwrap();
            }
            assert_eq!(
                buffer.to_vec().unwrap(),
                mirror,
                "{device}: round {round}, seed {seed}"
            );
            let c = rng.random_range(0..=n);
            let d = rng.random_range(c..=n);
            assert_eq!(buffer.slice(c..d).unwrap().to_vec().unwrap(), &mirror[c..d]);
            let mut part = vec![0u32; d - c];
            buffer.slice(c..d).unwrap().copy_to(&mut part).unwrap();
            assert_eq!(part, &mirror[c..d]);
            let back = stream
                .download_async(
                    buffer.slice(c..d).unwrap(),
                    device.alloc_pinned(d - c).unwrap(),
                )
                .unwrap()
                .wait()
                .unwrap();
            assert_eq!(&back[..], &mirror[c..d], "{device}: {c}..{d}, seed {seed}");
        }
        // A view of a view, and device-to-device between parts of two buffers.
        let middle = buffer.slice(100..400).unwrap().slice(50..60).unwrap();
        assert_eq!(middle.range(), 150..160);
        assert_eq!(middle.to_vec().unwrap(), &mirror[150..160]);
        let mut other = device.alloc_zeroed::<u32>(20).unwrap();
        other
            .slice_mut(5..15)
            .unwrap()
            .copy_from_slice_of(&middle)
            .unwrap();
        let mut expected = vec![0u32; 20];
        expected[5..15].copy_from_slice(&mirror[150..160]);
        assert_eq!(other.to_vec().unwrap(), expected, "{device}");
    }
}

#[test]
fn ranges_that_do_not_fit_are_errors_naming_them() {
    for module in support::on_every_device(
        "ranges_that_do_not_fit_are_errors_naming_them",
        support::test_kernels(),
    ) {
        let device = module.device();
        let mut buffer = device.upload(&[1u8, 2, 3, 4]).unwrap();
        let message = |error: Error| error.to_string();
        assert!(message(buffer.slice(3..5).unwrap_err())
            .contains("the range 3..5 is not inside the 4 elements"));
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = buffer.slice(3..1).unwrap_err();
        assert!(message(reversed).contains("3..1"));
        assert!(message(buffer.slice(..=usize::MAX).unwrap_err())
            .contains(&format!("0..{}", usize::MAX as u128 + 1)));
        assert!(message(buffer.slice_mut(5..).unwrap_err()).contains("5..4"));
        assert!(buffer.slice(4..).unwrap().is_empty());
        let view = buffer.slice(1..3).unwrap();
        assert!(matches!(
            view.slice(1..3).unwrap_err(),
            Error::RangeOutOfBounds { len: 2, .. }
        ));
        let copy = buffer
            .slice_mut(0..2)
            .unwrap()
            .copy_from(&[9, 9, 9])
            .unwrap_err();
        assert!(
            matches!(
                copy,
                Error::CopyLength {
                    expected: 2,
                    actual: 3,
                    ..
                }
            ),
            "{copy}"
        );
        let pending = device
            .new_stream()
            .unwrap()
            .download_async(buffer.slice(0..2).unwrap(), device.alloc_pinned(3).unwrap());
        assert!(matches!(pending.unwrap_err(), Error::CopyLength { .. }));
        // Nothing was half-written.
        assert_eq!(buffer.to_vec().unwrap(), [1, 2, 3, 4], "{device}");
    }
}
