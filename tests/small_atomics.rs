//! Issue 30, point 3: atomics on 8- and 16-bit outputs and shared memory, on the CPU executor
//! (both paths) and on a GPU (the PTX emulator in CI: a compare-and-swap loop on the 32-bit
//! word, which must leave the word's other bytes, other elements, as they are), against a host
//! count.

mod support;

use ferrocuda::launch;
use rand::Rng;
use test_kernels::small_atomics::{byte_flags, byte_histogram, flag_if_any};

#[test]
fn byte_and_short_atomics_count_exactly() {
    for module in support::on_every_device(
        "byte_and_short_atomics_count_exactly",
        support::test_kernels(),
    ) {
        let (mut rng, seed) = support::rng();
        for n in [1usize, 255, 5000] {
            let x: Vec<u8> = (0..n).map(|_| rng.random_range(0..200)).collect();
            let mut counts = vec![0u16; 256];
            let mut seen = vec![0u8; 257]; // odd length: the last word is partly past the end
            let (mut low, mut high) = (vec![i8::MAX; 3], vec![i8::MIN; 1]);
            launch!(
                module,
                byte_histogram[n.div_ceil(128), 128](&x, &mut counts, &mut seen, &mut low, &mut high)
            )
            .unwrap();
            let mut want = vec![0u16; 256];
            for &v in &x {
                want[v as usize] = want[v as usize].wrapping_add(1);
            }
            let at = format!("{}: n={n} seed={seed}", module.device());
            assert_eq!(counts, want, "{at}");
            let want_seen: Vec<u8> = (0..257).map(|v| u8::from(v < 256 && want[v] > 0)).collect();
            assert_eq!(seen, want_seen, "{at}");
            assert_eq!(low[0], x.iter().map(|&v| v as i8).min().unwrap(), "{at}");
            assert_eq!(
                &low[1..],
                &[i8::MAX; 2],
                "{at}: neighbours of the element untouched"
            );
            assert_eq!(high[0], x.iter().map(|&v| v as i8).max().unwrap(), "{at}");
        }
        for (flags_len, shorts_len, n) in [(1usize, 1usize, 7u32), (3, 5, 1000), (13, 2, 4099)] {
            let mut flags = vec![0u8; flags_len];
            let mut shorts = vec![100i16; shorts_len];
            launch!(module, byte_flags[n.div_ceil(64), 64](&mut flags, &mut shorts, n)).unwrap();
            let mut want_flags = vec![0u8; flags_len];
            let mut want_shorts = vec![100i16; shorts_len];
            for i in 0..n as usize {
                want_flags[i % flags_len] |= 1 << (i % 8);
                want_shorts[i % shorts_len] = want_shorts[i % shorts_len].wrapping_sub(1);
            }
            assert_eq!(flags, want_flags, "{}: n={n}", module.device());
            assert_eq!(shorts, want_shorts, "{}: n={n}", module.device());
        }
    }
}

/// Issue 30, point 3: several threads storing the same value to one output element is accepted
/// by checked mode (BFS's flag); different values are still reported, naming both threads.
#[test]
fn checked_mode_accepts_the_same_value_stored_by_many_threads() {
    let module = ferrocuda::Device::cpu_checked(true)
        .load(support::test_kernels())
        .unwrap();
    let x: Vec<f32> = (0..4096).map(|i| (i % 97) as f32).collect();
    let (mut found, mut first) = (vec![0u8], vec![u32::MAX]);
    launch!(module, flag_if_any[16, 256](&x, 90.0, &mut found, &mut first, 0)).unwrap();
    assert_eq!((found[0], first[0]), (1, u32::MAX));
    let (mut found, mut none) = (vec![0u8], vec![u32::MAX]);
    launch!(module, flag_if_any[16, 256](&x, 1000.0, &mut found, &mut none, 1)).unwrap();
    assert_eq!(found[0], 0);
    let error =
        launch!(module, flag_if_any[16, 256](&x, 90.0, &mut found, &mut first, 1)).unwrap_err();
    let ferrocuda::Error::KernelBug { bug, thread, .. } = &error else {
        panic!("expected a race, got {error}");
    };
    let ferrocuda::KernelBug::OutputRace {
        output,
        earlier_thread,
        write,
        ..
    } = &**bug
    else {
        panic!("expected an output race, got {error}");
    };
    assert_eq!((output.as_str(), *write), ("first", true), "{error}");
    assert_ne!(earlier_thread, thread, "{error}");
    let message = error.to_string();
    assert!(message.contains("wrote a different value"), "{message}");
}
