//! Runs the installed ptxas (when there is one) on hand-written PTX, so the parser is checked
//! against the real tool, not only against captured text.

mod common;

use std::path::{Path, PathBuf};

use ferrocuda_builder::{assemble, find_ptxas, BuildError};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

#[test]
fn live_ptxas_reports_shared_memory_and_spills() {
    let Some(ptxas) = find_ptxas("sm_70") else {
        common::skip("ptxas not found (no ptxas supporting sm_70: FERROCUDA_PTXAS, PATH, CUDA_HOME, pip nvidia-cuda-nvcc-cu12)");
        return;
    };
    let report = assemble(&ptxas, &data("shared_and_spill.ptx.txt"), "sm_70")
        .unwrap_or_else(|e| panic!("{e}"));
    println!("{report}\nby {ptxas}");
    let tile = report.kernel("tile_sum").expect("tile_sum in report");
    assert_eq!(tile.shared_bytes, 1024);
    assert_eq!(tile.barriers, 1);
    let spill = report.kernel("spill_me").expect("spill_me in report");
    assert!(
        spill.spill_store_bytes > 0 && spill.spill_load_bytes > 0,
        "{report}"
    );
    assert!(report.kernel("helper").is_none(), "a .func is not a kernel");
}

#[test]
fn live_ptxas_failure_carries_its_stderr() {
    let Some(ptxas) = find_ptxas("sm_80") else {
        common::skip("ptxas not found (no ptxas supporting sm_80)");
        return;
    };
    let bad = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bad.ptx");
    std::fs::write(&bad, ".version 6.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tnot_an_instruction;\n}\n").unwrap();
    match assemble(&ptxas, &bad, "sm_80") {
        Err(BuildError::PtxasFailed {
            stderr,
            command,
            arch,
        }) => {
            assert_eq!(arch, "sm_80");
            assert!(
                command.contains("-arch=sm_80") && command.contains("bad.ptx"),
                "{command}"
            );
            assert!(
                stderr.contains("not_an_instruction") || stderr.contains("error"),
                "{stderr}"
            );
        }
        other => panic!("expected PtxasFailed, got {other:?}"),
    }
}

#[test]
fn cuda_13_ptxas_is_not_chosen_for_sm_70() {
    // Whatever is installed, a ptxas chosen for sm_70 must be older than CUDA 13.
    if let Some(p) = find_ptxas("sm_70") {
        let major: u32 = p.version.split('.').next().unwrap().parse().unwrap();
        assert!(major < 13, "{p} chosen for sm_70");
    }
}
