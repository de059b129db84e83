//! The main job, `ferrocuda run` (the default): the table of every workload on one CPU thread, the
//! CPU executor and the GPU, its JSON and its chart. Runs the built binary at test sizes.

mod support;

use ferrocuda::workloads::{self, Scale};
use serde_json::Value;
use std::path::PathBuf;

fn out_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ferrocuda-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The `ferrocuda` binary, told where pip's NVRTC is (the CUDA C column) when the system has none.
fn ferrocuda_with_nvrtc() -> std::process::Command {
    let mut command = support::ferrocuda();
    if std::env::var_os(ferrocuda::nvrtc::NVRTC_ENV).is_none() {
        if let Some(path) = support::nvrtc::pip_nvrtc() {
            command.env(ferrocuda::nvrtc::NVRTC_ENV, path);
        }
    }
    command
}

/// A measured, verified cell: a positive median and no failure.
fn assert_measured(cell: &Value, what: &str) {
    let seconds = cell["seconds"]
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: {cell}"));
    assert!(seconds > 0.0, "{what}: {cell}");
    assert!(cell["failure"].is_null(), "{what}: {cell}");
    assert!(cell["runs"].as_u64().unwrap() >= 3, "{what}: {cell}");
}

#[test]
fn json_has_every_workload_verified_on_the_cpu_and_says_why_there_is_no_gpu() {
    let dir = out_dir("json");
    let out = support::stdout_of(
        support::ferrocuda()
            .args(["--tiny", "--json", "--out"])
            .arg(&dir)
            .env(ferrocuda::DEVICE_ENV, "cpu"),
    );
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(report["scale"], "tiny");
    assert!(report["gpu"].is_null(), "{report}");
    assert!(
        report["gpu_absent"]
            .as_str()
            .unwrap()
            .contains("asks for the CPU"),
        "{report}"
    );
    let rows = report["rows"].as_array().unwrap();
    let expected = workloads::all(Scale::Tiny);
    assert_eq!(rows.len(), expected.len());
    for (row, recipe) in rows.iter().zip(&expected) {
        let workload = recipe.build();
        assert_eq!(row["workload"], recipe.name());
        assert_eq!(row["size"], workload.size());
        assert_eq!(row["bytes"], workload.work().bytes);
        assert_measured(&row["single_thread"], recipe.name());
        assert_measured(&row["executor"], recipe.name());
        assert!(row["gpu"].is_null(), "{row}");
        assert!(row["gpu_bandwidth_share"].is_null(), "{row}");
        assert!(row["cuda_c"].is_null(), "{row}");
        assert_eq!(row["has_cuda_c"], !workload.kernels().is_empty(), "{row}");
    }
    assert_eq!(report["cuda_c_absent"], "no GPU", "{report}");
    assert_eq!(report["cublas_absent"], "no GPU", "{report}");
    assert!(rows.iter().all(|row| row["cublas"].is_null()), "{report}");
    // The same report is written next to the chart, which has a bar label per workload.
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(written["rows"].as_array().unwrap().len(), rows.len());
    let svg = std::fs::read_to_string(dir.join("speedups.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    for recipe in &expected {
        assert!(
            svg.contains(recipe.name()),
            "{} not in the chart",
            recipe.name()
        );
    }
    assert!(svg.contains("no GPU on this machine"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_table_has_the_seeds_columns_and_a_gpu_column_that_says_why_it_is_empty() {
    for args in [&["--tiny"][..], &["run", "--tiny"][..]] {
        let dir = out_dir("table");
        let out = support::stdout_of(
            support::ferrocuda()
                .args(args)
                .arg("--out")
                .arg(&dir)
                .env(ferrocuda::DEVICE_ENV, "cpu"),
        );
        let header = out
            .lines()
            .find(|l| l.starts_with("| workload"))
            .unwrap_or_else(|| panic!("no table:\n{out}"));
        let columns: Vec<&str> = header
            .split('|')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(
            columns,
            [
                "workload",
                "size",
                "CPU 1 thread",
                "CPU all cores (executor)",
                "GPU",
                "speedup",
                "CUDA C",
                "ours ÷ CUDA C"
            ]
        );
        // No GPU, so no CUDA C column either, and it says so.
        assert!(out.contains("CUDA C: none, no GPU."), "{out}");
        assert!(
            out.contains("GPU: none, FERROCUDA_DEVICE=cpu asks for the CPU"),
            "{out}"
        );
        for recipe in workloads::all(Scale::Tiny) {
            let row = out
                .lines()
                .find(|l| l.starts_with(&format!("| {} ", recipe.name())))
                .unwrap_or_else(|| panic!("no row for {}:\n{out}", recipe.name()));
            assert!(row.contains("no GPU") && row.contains('×'), "{row}");
            let cuda_c_cell = row.split('|').map(str::trim).nth(7).unwrap();
            let want = if recipe.build().kernels().is_empty() {
                "—"
            } else {
                "no GPU"
            };
            assert_eq!(cuda_c_cell, want, "{row}");
            assert!(!row.contains("WRONG") && !row.contains("FAILED"), "{row}");
        }
        assert!(out.contains(&format!(
            "chart of the speedups: {}",
            dir.join("speedups.svg").display()
        )));
        let _ = std::fs::remove_dir_all(&dir);
    }
    let help = support::stdout_of(support::ferrocuda().arg("--help"));
    for word in ["doctor", "run", "--quick", "--json"] {
        assert!(help.contains(word), "{word} not in:\n{help}");
    }
}

#[test]
fn on_a_gpu_every_workload_is_verified_and_timed_there() {
    let Some(gpu) = support::gpu_or_skip("on_a_gpu_every_workload_is_verified_and_timed_there")
    else {
        return;
    };
    let dir = out_dir("gpu");
    let out = support::stdout_of(
        ferrocuda_with_nvrtc()
            .args(["--tiny", "--json", "--out"])
            .arg(&dir),
    );
    let report: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["gpu"], gpu.to_string());
    if gpu.properties().is_emulator() {
        // Verified on the PTX emulator, and no speed claimed for it: no times, no bandwidth.
        assert_eq!(report["gpu_emulated"], true, "{report}");
        assert!(report["gpu_copy_bandwidth"].is_null(), "{report}");
        // The CUDA C column likewise, where NVRTC is there (CI installs it).
        let cuda_c = report["cuda_c_absent"].is_null();
        if !cuda_c {
            let why = report["cuda_c_absent"].as_str().unwrap();
            assert!(
                why.starts_with("NVRTC not found") && !support::on_ci(),
                "{report}"
            );
        }
        for row in report["rows"].as_array().unwrap() {
            let mut cells = vec![&row["gpu"]];
            // A workload without a CUDA C version (yet: the tensor-core row) has no such cell.
            match cuda_c && row["has_cuda_c"] == true {
                true => cells.push(&row["cuda_c"]),
                false => assert!(row["cuda_c"].is_null(), "{row}"),
            }
            for cell in cells {
                assert!(
                    cell["failure"].is_null() && cell["seconds"].is_null() && cell["runs"] == 1,
                    "{row}"
                );
            }
            assert!(row["gpu_bandwidth_share"].is_null(), "{row}");
            assert!(row["cublas"].is_null(), "{row}");
        }
        // cuBLAS's kernels are machine code: the emulator has none, and the report says so.
        let why = report["cublas_absent"].as_str().unwrap();
        assert!(why.contains("PTX emulator has no cuBLAS"), "{report}");
        let table = support::stdout_of(ferrocuda_with_nvrtc().args(["--tiny", "--out"]).arg(&dir));
        assert!(table.contains(", emulated: "), "{table}");
        assert!(table.contains(&format!("cuBLAS: none, {why}")), "{table}");
        for recipe in workloads::all(Scale::Tiny) {
            let row = table
                .lines()
                .find(|l| l.starts_with(&format!("| {} ", recipe.name())))
                .unwrap_or_else(|| panic!("no row for {}:\n{table}", recipe.name()));
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            assert_eq!(cells[5], "✓ emulated", "{row}");
            if cuda_c && !recipe.build().kernels().is_empty() {
                assert_eq!(cells[7], "✓ emulated", "{row}");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    assert_eq!(report["gpu_emulated"], false, "{report}");
    let bandwidth = report["gpu_copy_bandwidth"].as_f64().unwrap();
    assert!(
        bandwidth > 1e9,
        "a GPU copies more than 1 GB/s: {bandwidth}"
    );
    let cuda_c = report["cuda_c_absent"].is_null();
    // cuBLAS beside the matrix rows, checked and timed like ours, wherever libcublas is found.
    let cublas = report["cublas_absent"].is_null();
    if !cublas {
        let why = report["cublas_absent"].as_str().unwrap();
        assert!(why.contains("libcublas was not found"), "{report}");
    }
    for row in report["rows"].as_array().unwrap() {
        let name = row["workload"].as_str().unwrap();
        match cublas && name.starts_with("matrix product") {
            true => assert_measured(&row["cublas"], &format!("{name}, cuBLAS")),
            false => assert!(row["cublas"].is_null(), "{row}"),
        }
        assert_measured(&row["gpu"], name);
        assert!(row["gpu_bandwidth_share"].as_f64().unwrap() > 0.0, "{row}");
        if cuda_c && row["has_cuda_c"] == true {
            assert_measured(&row["cuda_c"], &format!("{name}, CUDA C"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_streamed_row_runs_over_its_memory_limit_in_chunks_and_draws_the_timeline() {
    let dir = out_dir("streamed");
    let out = support::stdout_of(
        support::ferrocuda()
            .args(["--tiny", "--json", "--only", "streamed", "--out"])
            .arg(&dir)
            .env(ferrocuda::DEVICE_ENV, "cpu"),
    );
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert!(report["rows"].as_array().unwrap().is_empty(), "{report}");
    let row = &report["streamed"];
    assert!(row["failure"].is_null(), "{row}");
    let (options, limit) = workloads::streamed_size(Scale::Tiny);
    assert_eq!(row["options"], options);
    assert_eq!(row["limit_bytes"], limit);
    let peak = |what: &str| row[what].as_u64().unwrap() as usize;
    // All at once needs every input and output on the device, more than the limit allows...
    assert_eq!(peak("one_shot_peak_bytes"), 20 * options);
    assert!(20 * options > limit);
    let refused = row["one_shot_under_limit"].as_str().unwrap();
    assert!(
        refused.contains("out of memory") && refused.contains("ops::Pipeline"),
        "{refused}"
    );
    // ...the pipeline stays under it.
    assert!(
        0 < peak("pipelined_peak_bytes") && peak("pipelined_peak_bytes") <= limit,
        "{row}"
    );
    assert!(row["chunks"].as_u64().unwrap() > 1, "{row}");
    for seconds in ["one_shot_seconds", "pipelined_seconds"] {
        assert!(row[seconds].as_f64().unwrap() > 0.0, "{row}");
    }
    assert!(
        row["overlap"].is_null() && row["bandwidth_share"].is_null(),
        "{row}"
    );
    // CUDA C's half of the row and the one-and-two-GPU comparison need a GPU.
    assert_eq!(row["cuda_c"]["absent"], "no GPU", "{row}");
    assert_eq!(row["devices"]["absent"], "no GPU", "{row}");
    let svg = std::fs::read_to_string(dir.join("timeline.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("stream 2"), "{svg}");
    let table = support::stdout_of(
        support::ferrocuda()
            .args(["--tiny", "--only", "streamed", "--out"])
            .arg(&dir)
            .env(ferrocuda::DEVICE_ENV, "cpu"),
    );
    assert!(
        table.contains("Black-Scholes, streamed: 4099 options"),
        "{table}"
    );
    assert!(table.contains("ops::Pipeline, "), "{table}");
    assert!(table.contains("  CUDA C: none, no GPU"), "{table}");
    assert!(
        table.contains("  on 1 and 2 GPUs: not run, no GPU"),
        "{table}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The streamed row of `ferrocuda --tiny --only streamed`, as JSON and as the table, with the
/// emulator asked for `devices` GPUs.
fn streamed_row_on(devices: &str, dir: &std::path::Path) -> (Value, String) {
    let run = |json: bool| {
        let mut command = support::ferrocuda();
        command
            .args(["--tiny", "--only", "streamed", "--out"])
            .arg(dir)
            .env("FERROCUDA_EMU_DEVICES", devices);
        if json {
            command.arg("--json");
        }
        support::stdout_of(&mut command)
    };
    let report: Value = serde_json::from_str(&run(true)).unwrap();
    (report["streamed"].clone(), run(false))
}

#[test]
fn the_streamed_row_runs_on_one_gpu_and_on_two_side_by_side_counting_chunks_and_copies() {
    let Some(gpu) = support::gpu_or_skip("the_streamed_row_runs_on_one_gpu_and_on_two") else {
        return;
    };
    let dir = out_dir("streamed-devices");
    let emulated = gpu.properties().is_emulator();
    if emulated {
        // One emulated GPU: the comparison says how to get two.
        let (row, table) = streamed_row_on("1", &dir);
        let why = row["devices"]["absent"].as_str().unwrap_or_default();
        assert!(why.contains("FERROCUDA_EMU_DEVICES=2"), "{row}");
        assert!(
            table.contains("on 1 and 2 GPUs: not run, 1 GPU, two needed"),
            "{table}"
        );
    }
    let (row, table) = streamed_row_on("2", &dir);
    assert!(row["failure"].is_null(), "{row}");
    if !emulated && ferrocuda::Device::all().unwrap().len() < 2 {
        assert!(
            row["devices"]["absent"]
                .as_str()
                .unwrap()
                .contains("two needed"),
            "{row}"
        );
        return;
    }
    let spread = &row["devices"]["measured"];
    assert_eq!(spread["emulated"], emulated, "{row}");
    let (options, _) = workloads::streamed_size(Scale::Tiny);
    let runs = spread["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{row}");
    for (run, devices) in runs.iter().zip([1, 2]) {
        assert_eq!(run["devices"], devices, "{run}");
        // Times on real GPUs only.
        assert_eq!(run["seconds"].is_null(), emulated, "{run}");
        let count = |v: &Value| v.as_u64().unwrap() as usize;
        let (chunks, chunk_len) = (count(&run["chunks"]), count(&run["chunk_len"]));
        assert_eq!(chunks, options.div_ceil(chunk_len), "{run}");
        assert!(chunks > devices, "{run}");
        let per_device = run["per_device"].as_array().unwrap();
        assert_eq!(per_device.len(), devices, "{run}");
        for (d, work) in per_device.iter().enumerate() {
            // Chunk k on GPU k mod devices: its chunks and their options.
            let mine: Vec<usize> = (d..chunks).step_by(devices).collect();
            let elements: usize = mine
                .iter()
                .map(|&k| chunk_len.min(options - k * chunk_len))
                .sum();
            assert!(
                work["device"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("CUDA device {d}")),
                "{work}"
            );
            assert_eq!(count(&work["chunks"]), mine.len(), "{work}");
            assert_eq!(count(&work["elements"]), elements, "{work}");
            // Three inputs in and two outputs out per chunk, 4 bytes an element each.
            assert_eq!(count(&work["uploads"]), 3 * mine.len(), "{work}");
            assert_eq!(count(&work["downloads"]), 2 * mine.len(), "{work}");
            assert_eq!(count(&work["bytes"]), 20 * elements, "{work}");
        }
    }
    assert!(
        table.contains("  on 1 and 2 GPUs (ops::Pipeline::across"),
        "{table}"
    );
    assert!(table.contains("    2 GPUs: "), "{table}");
    assert!(table.contains("      CUDA device 1"), "{table}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn only_runs_the_workloads_whose_name_contains_its_text_and_refuses_one_that_matches_none() {
    let dir = out_dir("only");
    let out = support::stdout_of(
        support::ferrocuda()
            .args(["--tiny", "--json", "--only", "group-by, few", "--out"])
            .arg(&dir)
            .env(ferrocuda::DEVICE_ENV, "cpu"),
    );
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{report}");
    assert_eq!(rows[0]["workload"], "group-by, few keys", "{report}");
    assert_measured(&rows[0]["single_thread"], "group-by, few keys");
    assert!(report["streamed"].is_null(), "{report}");

    let output = support::ferrocuda()
        .args(["--tiny", "--only", "no such workload", "--out"])
        .arg(&dir)
        .env(ferrocuda::DEVICE_ENV, "cpu")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("error: no workload's name contains \"no such workload\""),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The row of the tensor-core matrix product: on the CPU, its loop and the CPU executor running
/// the tensor-core kernel (`TENSOR_KERNELS`, loaded for this row only) are verified and timed, in
/// the table and in the JSON.
#[test]
fn the_f16_tensor_core_row_is_verified_and_timed_on_the_cpu() {
    let name = "matrix product, f16 tensor cores";
    let dir = out_dir("tensor");
    let out = support::stdout_of(
        support::ferrocuda()
            .args(["--tiny", "--json", "--only", "f16 tensor cores", "--out"])
            .arg(&dir)
            .env(ferrocuda::DEVICE_ENV, "cpu"),
    );
    let report: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{report}");
    assert_eq!(rows[0]["workload"], name, "{report}");
    assert_eq!(rows[0]["size"], "67×131×29", "{report}");
    // f16 inputs (2 bytes each), f32 output.
    let bytes = 2 * (67 * 29 + 29 * 131) + 4 * 67 * 131;
    assert_eq!(rows[0]["bytes"], bytes, "{report}");
    assert_measured(&rows[0]["single_thread"], name);
    assert_measured(&rows[0]["executor"], name);
    let table = support::stdout_of(
        support::ferrocuda()
            .args(["--tiny", "--only", "f16 tensor cores", "--out"])
            .arg(&dir)
            .env(ferrocuda::DEVICE_ENV, "cpu"),
    );
    assert!(
        table.lines().any(|l| l.starts_with(&format!("| {name} "))),
        "{table}"
    );
    println!("{table}");
    let _ = std::fs::remove_dir_all(&dir);
}
