//! `ferrocuda profile` and `FERROCUDA_EMU_PROFILE` on the PTX emulator: a user's own launch
//! recorded and read back with counts worked out by hand, and the command's JSON for the
//! transposes (docs/profile.md).

mod support;

use ferrocuda::profile::{self, PROFILE_ENV};
use ferrocuda::{kernels::vector_add, launch};
use std::process::Command;

/// Whether the emulator is this process's driver (`FERROCUDA_LIBCUDA`); otherwise says the
/// test skipped (or fails, under `FERROCUDA_EXPECT_GPU`).
fn emulator_or_skip(test: &str) -> Option<ferrocuda::Device> {
    let device = support::gpu_or_skip(test)?;
    if !device.properties().is_emulator() {
        support::say_skipped(test, "the counters come from the PTX emulator, not a GPU");
        return None;
    }
    Some(device)
}

/// The only test of this binary that launches in its own process: the emulator reads
/// `FERROCUDA_EMU_PROFILE` once, at the process's first launch.
#[test]
fn a_users_own_launch_is_recorded_with_its_counters() {
    let Some(gpu) = emulator_or_skip("a_users_own_launch_is_recorded_with_its_counters") else {
        return;
    };
    let file = std::env::temp_dir().join(format!("ferrocuda-test-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&file);
    std::env::set_var(PROFILE_ENV, &file);
    let kernels = gpu.load(&ferrocuda::KERNELS).unwrap();
    let n = 4096usize;
    let (a, b) = (vec![1.0f32; n], vec![2.0f32; n]);
    let mut out = vec![0.0f32; n];
    launch!(kernels, vector_add[(n / 256) as u32, 256](&a, &b, &mut out)).unwrap();
    assert_eq!(out, vec![3.0; n]);
    let records = profile::read(&file).unwrap();
    // The command prints the same file's table.
    let out = ferrocuda(&["profile", "--from", file.to_str().unwrap(), "--json"]);
    let _ = std::fs::remove_file(&file);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &report["rows"][0];
    assert_eq!(
        (&row["kernel"], &row["launches"]),
        (&"vector_add".into(), &1.into())
    );
    assert_eq!(row["global_load_sectors_per_request"], 4.0);
    assert_eq!(row["global_store_sectors_per_request"], 4.0);
    let record = records
        .iter()
        .find(|r| r.kernel == "vector_add")
        .expect("the launch was recorded");
    assert_eq!((record.grid, record.block), ([16, 1, 1], [256, 1, 1]));
    let c = &record.counters;
    let warps = (n / 32) as u64;
    // Each warp loads 32 consecutive f32 of a and of b (4 sectors each) and stores 32 of out.
    assert_eq!(c.global_loads.requests, 2 * warps);
    assert_eq!(c.global_loads.sectors, 8 * warps);
    assert_eq!(c.global_stores.requests, warps);
    assert_eq!(c.global_stores.sectors, 4 * warps);
    assert_eq!(c.global_bytes(), (3 * 4 * n as u64, 3 * 4 * n as u64));
    assert_eq!(c.simt_efficiency(), Some(1.0));
    assert_eq!(c.blocks, 16);
    let h200 = profile::gpu("h200").unwrap();
    let rows = profile::rows(&records, h200, ferrocuda::KERNELS_PTXAS_REPORT);
    let row = rows.iter().find(|r| r.kernel == "vector_add").unwrap();
    assert_eq!(row.launches, 1);
    assert!(row.estimate.seconds > 0.0);
    assert!(row.occupancy.is_some());
}

fn ferrocuda(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ferrocuda"))
        .args(args)
        .env_remove(PROFILE_ENV)
        .output()
        .unwrap()
}

#[test]
fn the_command_shows_the_transpose_lesson_as_json() {
    if emulator_or_skip("the_command_shows_the_transpose_lesson_as_json").is_none() {
        return;
    }
    let out = ferrocuda(&["profile", "--json", "--only", "transpose", "--gpu", "h100"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["gpu"], "h100");
    let rows = report["rows"].as_array().unwrap();
    let keys = [
        "workload",
        "kernel",
        "launches",
        "warp_instructions",
        "simt_efficiency",
        "branch_efficiency",
        "global_load_sectors_per_request",
        "global_store_sectors_per_request",
        "shared_wavefronts_per_request",
        "theoretical_occupancy",
        "occupancy_limiter",
        "estimated_seconds",
    ];
    for row in rows {
        for key in keys {
            assert!(row.get(key).is_some(), "{key} missing from {row}");
        }
    }
    let row = |kernel: &str| {
        rows.iter()
            .find(|r| r["kernel"] == kernel)
            .unwrap_or_else(|| panic!("no {kernel} row"))
    };
    let (naive, tiled) = (row("transpose_naive"), row("transpose_tiled"));
    // ops::transpose launches the naive kernel in 16 × 16 blocks: a warp writes two columns'
    // worth of pairs, 16 sectors; the tiled one writes rows, 4.
    assert_eq!(naive["global_store_sectors_per_request"], 16.0);
    assert_eq!(tiled["global_store_sectors_per_request"], 4.0);
    assert_eq!(naive["global_load_sectors_per_request"], 4.0);
    assert_eq!(tiled["shared_wavefronts_per_request"], 1.0);
    let seconds = |r: &serde_json::Value| r["estimated_seconds"].as_f64().unwrap();
    assert!(seconds(naive) > seconds(tiled));
}

#[test]
fn an_unknown_gpu_is_refused_with_the_known_ones() {
    let out = ferrocuda(&["profile", "--gpu", "gtx480"]);
    assert!(!out.status.success());
    let error = String::from_utf8_lossy(&out.stderr);
    assert!(
        error.contains("gtx480") && error.contains("h200, h100, a100, v100, rtx2070"),
        "{error}"
    );
}
