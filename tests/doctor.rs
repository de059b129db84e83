//! The `ferrocuda doctor` command: text and `--json`, the same facts.
//!
//! Runs the built binary. Scripts/device-run.sh runs this test on the GPU machine, where the
//! binary lives elsewhere: `FERROCUDA_BIN` points at it there.

mod support;

use serde_json::Value;
use std::process::Command;

/// `ferrocuda doctor` as text, and as JSON.
fn doctor(configure: impl Fn(&mut Command)) -> (String, Value) {
    let mut text = support::ferrocuda();
    configure(text.arg("doctor"));
    let text = support::stdout_of(&mut text);
    let mut json = support::ferrocuda();
    configure(json.args(["doctor", "--json"]));
    let json = support::stdout_of(&mut json);
    let json: Value = serde_json::from_str(&json)
        .unwrap_or_else(|e| panic!("doctor --json is not JSON ({e}):\n{json}"));
    (text, json)
}

fn str_of<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{pointer} is not a string in {value:#}"))
}

fn bool_of(value: &Value, pointer: &str) -> bool {
    value
        .pointer(pointer)
        .and_then(Value::as_bool)
        .unwrap_or_else(|| panic!("{pointer} is not a bool in {value:#}"))
}

/// `MemTotal` of /proc/meminfo in bytes, read here without the library.
fn mem_total_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
fn doctor_text_and_json_report_the_same_facts() {
    let (text, json) = doctor(|_| {});
    // Both print the same verdict, driver state and PTX facts.
    let verdict = str_of(&json, "/verdict/message");
    assert!(text.contains(verdict), "{verdict:?} not in:\n{text}");
    for section in [
        "NVIDIA driver",
        "GPUs",
        "CPU executor",
        "Embedded PTX (ferrocuda-kernels)",
        "Kernel toolchain (this build)",
        "Verdict",
    ] {
        assert!(
            text.contains(&format!("\n{section}\n")),
            "{section}:\n{text}"
        );
    }

    // The PTX facts against the embedded PTX's own text, read here line by line.
    let source = ferrocuda::KERNELS.source();
    let directive = |name: &str| {
        source
            .lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .map(|rest| rest.split_whitespace().next().unwrap().to_string())
            .unwrap()
    };
    let (version, target) = (directive(".version"), directive(".target"));
    assert_eq!(str_of(&json, "/ptx/isa_version"), version);
    assert_eq!(str_of(&json, "/ptx/target"), target);
    let mut entries: Vec<&str> = source
        .split(".entry ")
        .skip(1)
        .map(|rest| rest.split('(').next().unwrap().trim())
        .collect();
    entries.sort();
    let mut kernels: Vec<&str> = json["ptx"]["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    kernels.sort();
    assert_eq!(kernels, entries);
    assert!(
        text.contains(&format!("PTX ISA {version}, target {target}")),
        "{text}"
    );
    // PTX ISA 6.0 came with CUDA 9.0.
    if version == "6.0" {
        assert_eq!(str_of(&json, "/ptx/needs_cuda"), "9.0");
        assert!(
            text.contains("needs a driver for CUDA 9.0 or newer"),
            "{text}"
        );
    }

    // The CPU executor and the build.
    let cpu = ferrocuda::Device::cpu();
    assert_eq!(
        json["cpu"]["threads"].as_u64(),
        Some(u64::from(cpu.properties().multiprocessors))
    );
    if let Some(total) = mem_total_bytes() {
        assert_eq!(json["cpu"]["memory_total_bytes"].as_u64(), Some(total));
        assert!(text.contains(&format!("({total} bytes)")), "{text}");
    }
    let build = ferrocuda::KERNEL_BUILD;
    assert_eq!(
        str_of(&json, "/toolchain/rustc_version"),
        build.rustc_version
    );
    assert_eq!(str_of(&json, "/toolchain/arch"), build.arch);
    assert!(
        text.contains(build.rustc_version) && text.contains(build.rustc),
        "{text}"
    );
    assert_eq!(
        bool_of(&json, "/toolchain/ptxas_checked"),
        build.ptxas.is_some()
    );

    // Every ✗ comes with a fix, in the text as in the JSON.
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with('✗') {
            assert!(
                lines
                    .get(i + 1)
                    .is_some_and(|l| l.trim_start().starts_with("fix: ")),
                "no fix after {line:?}:\n{text}"
            );
        }
    }
}

#[test]
fn doctor_without_a_driver_says_cpu_and_how_to_install_the_driver() {
    // Without the PTX emulator (make test points FERROCUDA_LIBCUDA at it): the system's driver
    // or none.
    let without_emulator = |c: &mut Command| {
        c.env_remove(ferrocuda::LIBCUDA_ENV);
    };
    let (text, json) = doctor(without_emulator);
    if bool_of(&json, "/driver/found") {
        support::say_skipped(
            "doctor_without_a_driver_says_cpu_and_how_to_install_the_driver",
            "this machine has the NVIDIA driver",
        );
        return;
    }
    assert!(!bool_of(&json, "/driver/found"));
    assert!(json["gpus"].as_array().unwrap().is_empty());
    let tried: Vec<&str> = json["driver"]["tried"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(tried.contains(&"libcuda.so.1"), "{tried:?}");
    let fix = str_of(&json, "/driver/problem/fix");
    assert!(fix.contains("install the NVIDIA driver"), "{fix}");
    assert!(text.contains(&format!("fix: {fix}")), "{text}");
    assert!(
        text.contains("✗ no NVIDIA driver: libcuda could not be loaded (tried libcuda.so"),
        "{text}"
    );
    assert!(!bool_of(&json, "/verdict/on_gpu"));
    assert!(bool_of(&json, "/verdict/kernels_run"));
    let verdict = str_of(&json, "/verdict/message");
    assert!(
        verdict.starts_with("kernels will run on the CPU because there is no NVIDIA driver"),
        "{verdict}"
    );
    assert!(
        text.contains("not loaded on a GPU: there is none"),
        "{text}"
    );
}

#[test]
fn doctor_honours_ferrocuda_device_cpu() {
    let (text, json) = doctor(|c| {
        c.env(ferrocuda::DEVICE_ENV, "cpu");
    });
    let verdict = str_of(&json, "/verdict/message");
    assert_eq!(
        verdict,
        "kernels will run on the CPU because FERROCUDA_DEVICE=cpu asks for the CPU"
    );
    assert!(text.contains(&format!("✓ {verdict}")), "{text}");
}

/// On a GPU (scripts/device-run.sh): doctor lists it with its memory, the driver loads the PTX,
/// and the verdict is the GPU.
#[test]
fn doctor_on_a_gpu_reports_it_and_picks_it() {
    let gpu = match ferrocuda::Device::cuda(0) {
        Ok(gpu) => gpu,
        Err(error) => {
            assert!(
                std::env::var_os("FERROCUDA_EXPECT_GPU").is_none(),
                "FERROCUDA_EXPECT_GPU is set but {error}"
            );
            support::say_skipped(
                "doctor_on_a_gpu_reports_it_and_picks_it",
                &format!("no CUDA device ({error})"),
            );
            return;
        }
    };
    let (text, json) = doctor(|_| {});
    println!("{text}");
    assert!(bool_of(&json, "/driver/found"));
    let cuda = str_of(&json, "/driver/cuda_version");
    let driver = ferrocuda::DriverInfo::query().unwrap();
    assert_eq!(
        cuda,
        format!("{}.{}", driver.cuda_version.0, driver.cuda_version.1)
    );
    let first = &json["gpus"][0]["facts"];
    let p = gpu.properties();
    assert_eq!(first["name"].as_str(), Some(p.name.as_str()));
    assert_eq!(
        first["sm_count"].as_u64(),
        Some(u64::from(p.multiprocessors))
    );
    let (_, total) = gpu.memory_info().unwrap();
    assert_eq!(first["memory_total_bytes"].as_u64(), Some(total as u64));
    let free = first["memory_free_bytes"].as_u64().unwrap();
    assert!(0 < free && free <= total as u64, "{first:#}");
    let on = &json["ptx"]["on_gpus"][0];
    assert_eq!(on["loaded"].as_bool(), Some(true), "{on:#}");
    assert_eq!(on["gpu_new_enough"].as_bool(), Some(true), "{on:#}");
    assert_eq!(on["driver_new_enough"].as_bool(), Some(true), "{on:#}");
    assert!(bool_of(&json, "/verdict/on_gpu"));
    // The PTX emulator says what it is wherever it appears.
    let emulated = p.is_emulator();
    assert_eq!(bool_of(&json, "/verdict/emulated"), emulated);
    assert_eq!(first["emulated"].as_bool(), Some(emulated));
    let verdict = if emulated {
        format!("kernels will run on {gpu}, the PTX emulator (no GPU)")
    } else {
        format!("kernels will run on {gpu}")
    };
    assert_eq!(str_of(&json, "/verdict/message"), verdict);
    assert_eq!(
        text.contains("a PTX emulator, not a GPU"),
        emulated,
        "{text}"
    );
    assert!(
        text.contains("the driver loaded (JIT-compiled) it"),
        "{text}"
    );
}

/// FERROCUDA_LIBCUDA naming no library: no driver, and doctor says which path failed and why.
#[test]
fn a_libcuda_path_that_does_not_load_is_reported_as_no_driver() {
    let missing = "/nonexistent/libcuda-for-ferrocuda.so";
    let (text, json) = doctor(|c| {
        c.env(ferrocuda::LIBCUDA_ENV, missing);
    });
    assert!(!bool_of(&json, "/driver/found"), "{json:#}");
    let tried = json["driver"]["tried"][0].as_str().unwrap();
    assert!(
        tried.starts_with(&format!(
            "FERROCUDA_LIBCUDA={missing} could not be loaded: "
        )),
        "{tried}"
    );
    assert!(text.contains(missing), "{text}");
    assert!(!bool_of(&json, "/verdict/on_gpu"));
}
