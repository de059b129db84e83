//! Constant memory (`ferrocuda_std::constant!`, `Module::set_constant`) on the CPU executor and on a
//! GPU (or the PTX emulator): a table set from the host is what the kernel reads, a new set is
//! seen by the next launch, each module has its own tables, an unset table reads zeros, and a
//! wrong length, an undeclared table or an index past the table is an error. The PTX declares
//! the tables in `.const`, reads them with `ld.const`, and ptxas assembles it.

mod support;

use ferrocuda::{launch, Device, Error, Module};
use rand::Rng;
use test_kernels::constant::{look_up, LOOKUP, LOOKUP_LEN, OFFSETS};

/// `look_up`'s reference: `lookup[index[i]] + offsets[i % 3]`.
fn reference(lookup: &[f32], offsets: &[i64; 3], index: &[u32]) -> Vec<f32> {
    index
        .iter()
        .enumerate()
        .map(|(i, &k)| lookup[k as usize] + offsets[i % 3] as f32)
        .collect()
}

fn run(module: &Module, index: &[u32]) -> Vec<f32> {
    let mut out = vec![f32::NAN; index.len()];
    launch!(module, look_up[index.len().div_ceil(64), 64](index, &mut out)).unwrap();
    out
}

#[test]
fn a_table_set_from_the_host_is_what_the_next_launches_read() {
    for module in support::on_every_device(
        "a_table_set_from_the_host_is_what_the_next_launches_read",
        support::test_kernels(),
    ) {
        let (mut rng, seed) = support::rng();
        let index: Vec<u32> = (0..300)
            .map(|_| rng.random_range(0..LOOKUP_LEN as u32))
            .collect();
        // Never set: zeros, as the driver leaves `.const`.
        assert_eq!(
            run(&module, &index),
            vec![0.0; index.len()],
            "{}",
            module.device()
        );
        for _ in 0..2 {
            let lookup = support::random_f32(&mut rng, LOOKUP_LEN);
            let offsets = [rng.random_range(-9..9), 1 << 20, -3];
            module.set_constant(&LOOKUP, &lookup).unwrap();
            module.set_constant(&OFFSETS, &offsets).unwrap();
            assert_eq!(
                run(&module, &index),
                reference(&lookup, &offsets, &index),
                "{} seed={seed}",
                module.device()
            );
        }
    }
}

#[test]
fn each_module_has_its_own_tables() {
    let mut modules: Vec<Module> = (0..2)
        .map(|_| {
            Device::cpu_checked(true)
                .load(support::test_kernels())
                .unwrap()
        })
        .collect();
    if let Some(gpu) = support::gpu_or_skip("each_module_has_its_own_tables") {
        modules.push(gpu.load(support::test_kernels()).unwrap());
    }
    let tables: Vec<Vec<f32>> = (0..modules.len())
        .map(|m| (0..LOOKUP_LEN).map(|k| (100 * m + k) as f32).collect())
        .collect();
    for (module, table) in modules.iter().zip(&tables) {
        module.set_constant(&LOOKUP, table).unwrap();
    }
    let index: Vec<u32> = (0..LOOKUP_LEN as u32).rev().collect();
    for (module, table) in modules.iter().zip(&tables) {
        assert_eq!(
            run(module, &index),
            reference(table, &[0; 3], &index),
            "{}",
            module.device()
        );
    }
}

#[test]
fn a_wrong_length_or_a_table_the_ptx_lacks_is_an_error() {
    let module = Device::cpu().load(support::test_kernels()).unwrap();
    let error = module
        .set_constant(&LOOKUP, &[1.0; LOOKUP_LEN - 1])
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::ConstantTable {
                table: "LOOKUP",
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        "constant table `LOOKUP` of PTX module `test-kernels`: the table holds 64 elements of \
         `f32` (256 bytes) but 63 were given"
    );
    // The library's PTX has no such table.
    let library = Device::cpu().load(&ferrocuda::KERNELS).unwrap();
    let error = library
        .set_constant(&OFFSETS, &[0; 3])
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("declares no `.const` variable of that name"),
        "{error}"
    );
}

#[test]
fn an_index_past_the_table_is_an_error_naming_it() {
    let module = Device::cpu_checked(true)
        .load(support::test_kernels())
        .unwrap();
    let mut out = vec![0.0f32; 2];
    let error = launch!(module, look_up[1, 2](&[0u32, LOOKUP_LEN as u32], &mut out)).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("index 64 out of bounds for a constant table of length 64"),
        "{error}"
    );
}

#[test]
fn the_tables_are_in_const_memory_read_with_ld_const_and_assembled_by_ptxas() {
    let source = support::test_kernels().source();
    assert!(
        source.contains(".visible .const .align 4 .b8 LOOKUP[256];"),
        "no LOOKUP in .const"
    );
    assert!(
        source.contains(".visible .const .align 8 .b8 OFFSETS[24];"),
        "no OFFSETS in .const"
    );
    let start = source.find(".entry look_up(").unwrap();
    let body = &source[start..];
    let body = &body[..body.find("\n}").unwrap()];
    assert!(body.contains("ld.const.f32"), "{body}");
    assert!(body.contains("ld.const.s64"), "{body}");
    assert!(
        !body.contains("ld.global.f32") && !body.contains(".local"),
        "{body}"
    );
    for (arch, report) in support::ptx::assemble_everywhere("test-kernels-constant", source) {
        let kernel = report.kernel("look_up").unwrap();
        assert_eq!(
            kernel.spill_store_bytes + kernel.spill_load_bytes,
            0,
            "{arch}"
        );
    }
}

/// `look_up` with `lookup` carried by the launch (offsets zero), on `stream` if given.
fn run_carrying(module: &Module, lookup: &[f32], index: &[u32]) -> Vec<f32> {
    let mut out = vec![f32::NAN; index.len()];
    let config = ferrocuda::LaunchConfig::new(index.len().div_ceil(64) as u32, 64);
    module
        .launch_with_constant(&look_up, config, &LOOKUP, lookup, (index, &mut out))
        .unwrap();
    out
}

/// Threads launching the same kernel of one module, each carrying its own table: each reads its
/// own, every time. Setting the table and launching as two calls fails this (another thread's
/// table lands between them), on the CPU executor and on the emulator.
#[test]
fn concurrent_launches_carrying_different_tables_each_read_their_own() {
    for module in support::on_every_device(
        "concurrent_launches_carrying_different_tables_each_read_their_own",
        support::test_kernels(),
    ) {
        module.set_constant(&OFFSETS, &[0; 3]).unwrap();
        let index: Vec<u32> = (0..LOOKUP_LEN as u32).rev().collect();
        std::thread::scope(|scope| {
            for t in 0..4 {
                let (module, index) = (&module, &index);
                scope.spawn(move || {
                    let table: Vec<f32> = (0..LOOKUP_LEN).map(|k| (1000 * t + k) as f32).collect();
                    let want = reference(&table, &[0; 3], index);
                    for round in 0..40 {
                        let got = run_carrying(module, &table, index);
                        assert_eq!(got, want, "{} thread {t} round {round}", module.device());
                    }
                });
            }
        });
        // The table keeps the last carried bytes for plain launches, as after `set_constant`.
        let last = run(&module, &index);
        assert!(
            (0..4).any(|t| {
                let table: Vec<f32> = (0..LOOKUP_LEN).map(|k| (1000 * t + k) as f32).collect();
                last == reference(&table, &[0; 3], &index)
            }),
            "{}",
            module.device()
        );
    }
}

/// Launches on two streams of a GPU alternating two tables, each carried, with device buffers
/// (so nothing waits on the host between them): each reads its own; the same table twice in a
/// row is written once and still read right. On the CPU executor the streams run in order.
#[test]
fn launches_on_two_streams_with_alternating_tables_each_read_their_own() {
    for module in support::on_every_device(
        "launches_on_two_streams_with_alternating_tables_each_read_their_own",
        support::test_kernels(),
    ) {
        let device = module.device();
        module.set_constant(&OFFSETS, &[0; 3]).unwrap();
        let index: Vec<u32> = (0..LOOKUP_LEN as u32).collect();
        let index_dev = device.upload(&index).unwrap();
        let tables: Vec<Vec<f32>> = (0..2)
            .map(|t| {
                (0..LOOKUP_LEN)
                    .map(|k| (k as f32) * if t == 0 { 1.0 } else { -2.0 })
                    .collect()
            })
            .collect();
        let streams = [device.new_stream().unwrap(), device.new_stream().unwrap()];
        // Rounds: table 0, 1, 1, 0, 0, 1, ... on alternating streams.
        let order = [0, 1, 1, 0, 0, 1, 0, 1];
        let mut outs: Vec<_> = order
            .iter()
            .map(|_| device.alloc_zeroed::<f32>(LOOKUP_LEN).unwrap())
            .collect();
        for (round, (&t, out)) in order.iter().zip(&mut outs).enumerate() {
            let config =
                ferrocuda::LaunchConfig::new(1, LOOKUP_LEN as u32).on_stream(&streams[round % 2]);
            module
                .launch_with_constant(&look_up, config, &LOOKUP, &tables[t], (&index_dev, out))
                .unwrap();
        }
        for stream in &streams {
            stream.synchronize().unwrap();
        }
        for (round, (&t, out)) in order.iter().zip(&outs).enumerate() {
            assert_eq!(
                out.to_vec().unwrap(),
                reference(&tables[t], &[0; 3], &index),
                "{device} round {round}"
            );
        }
    }
}

#[test]
fn a_carried_table_of_the_wrong_length_is_an_error_and_nothing_runs() {
    let module = Device::cpu().load(support::test_kernels()).unwrap();
    let mut out = vec![7.0f32; 2];
    let config = ferrocuda::LaunchConfig::new(1, 2);
    let error = module
        .launch_with_constant(&look_up, config, &LOOKUP, &[1.0; 3], (&[0u32, 1], &mut out))
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the table holds 64 elements of `f32` (256 bytes) but 3 were given"),
        "{error}"
    );
    assert_eq!(out, [7.0; 2]);
}

/// Issue 30, point 6: part of a table, the rest kept (zeros where never set), on every device;
/// a part past the table is an error that writes nothing.
#[test]
fn part_of_a_table_is_set_and_the_rest_kept() {
    for module in support::on_every_device(
        "part_of_a_table_is_set_and_the_rest_kept",
        support::test_kernels(),
    ) {
        let (mut rng, seed) = support::rng();
        let index: Vec<u32> = (0..LOOKUP_LEN as u32).collect();
        let mut table = [0f32; LOOKUP_LEN];
        let mut offsets = [0i64; 3];
        module.set_constant_range(&OFFSETS, 1, &[5]).unwrap();
        offsets[1] = 5;
        for round in 0..6 {
            let start = rng.random_range(0..=LOOKUP_LEN);
            let len = rng.random_range(0..=LOOKUP_LEN - start);
            let part: Vec<f32> = (0..len).map(|_| rng.random_range(-50.0..50.0)).collect();
            module.set_constant_range(&LOOKUP, start, &part).unwrap();
            table[start..start + len].copy_from_slice(&part);
            assert_eq!(
                run(&module, &index),
                reference(&table, &offsets, &index),
                "{}: round {round}, {start}+{len}, seed {seed}",
                module.device()
            );
        }
        let error = module
            .set_constant_range(&LOOKUP, LOOKUP_LEN - 1, &[1.0, 2.0])
            .unwrap_err();
        assert!(
            matches!(
                error,
                Error::RangeOutOfBounds {
                    len: LOOKUP_LEN,
                    ..
                }
            ),
            "{error}"
        );
        assert!(module
            .set_constant_range(&LOOKUP, usize::MAX, &[1.0])
            .is_err());
        assert_eq!(run(&module, &index), reference(&table, &offsets, &index));
    }
}
