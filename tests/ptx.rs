//! The embedded PTX: every kernel is an `.entry` whose parameters match what the host packs, and
//! ptxas assembles it for sm_70, sm_80 and sm_90 with no spills.

mod support;

use oxicuda::kernels::{matrix_add, saxpy, vector_add};
use oxicuda::{Arg, Kernel, KernelArgs, KernelInfo};

/// Every kernel of `gpu-kernels`; `every_ptx_entry_has_a_host_handle` fails if one is missing.
fn all_kernels() -> Vec<KernelInfo> {
    vec![*vector_add.info(), *saxpy.info(), *matrix_add.info()]
}

#[test]
fn every_ptx_entry_has_a_host_handle_and_vice_versa() {
    let info = oxicuda::KERNELS.info();
    let mut in_ptx: Vec<&str> = info.entries.iter().map(|e| e.name.as_str()).collect();
    let mut on_host: Vec<&str> = all_kernels().iter().map(|k| k.name).collect();
    in_ptx.sort();
    on_host.sort();
    assert_eq!(in_ptx, on_host);
    assert_eq!(info.target.as_deref(), Some("sm_70"));
    assert_eq!(info.version, Some((6, 0)));
    for entry in &info.entries {
        assert!(
            oxicuda::KERNELS
                .source()
                .contains(&format!(".visible .entry {}(", entry.name)),
            "{} is not a visible .entry",
            entry.name
        );
    }
}

/// The sizes the host actually packs for real arguments to `kernel`.
fn packed<'a, P>(_kernel: &Kernel<P>, args: impl KernelArgs<'a, P>) -> Vec<usize> {
    args.into_args()
        .iter()
        .flat_map(Arg::ptx_param_sizes)
        .collect()
}

#[test]
fn host_packing_matches_every_ptx_entry() {
    let info = oxicuda::KERNELS.info();
    let (a, b, mut out) = (vec![0.0f32; 3], vec![0.0f32; 3], vec![0.0f32; 3]);
    let cases = [
        ("vector_add", packed(&vector_add, (&a, &b, &mut out))),
        ("saxpy", packed(&saxpy, (1.0f32, &a, &mut out))),
        ("matrix_add", packed(&matrix_add, (&a, &b, &mut out, 3u32))),
    ];
    for (name, host) in cases {
        let entry = info
            .entry(name)
            .unwrap_or_else(|| panic!("{name} not in PTX"));
        assert_eq!(
            host, entry.param_sizes,
            "{name}: host packing vs PTX .entry"
        );
    }
    for kernel in all_kernels() {
        let declared: Vec<usize> = kernel.ptx_param_sizes().collect();
        assert_eq!(
            declared,
            info.entry(kernel.name).unwrap().param_sizes,
            "{}",
            kernel.name
        );
    }
}

#[test]
fn ptxas_assembles_the_kernels_for_sm_70_80_90_without_spills() {
    let dir = std::env::temp_dir().join(format!("oxicuda-ptx-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("gpu-kernels.ptx");
    std::fs::write(&path, oxicuda::KERNELS.source()).unwrap();
    for arch in ["sm_70", "sm_80", "sm_90"] {
        let Some(ptxas) = gpu_builder::find_ptxas(arch) else {
            assert!(
                !support::on_ci(),
                "CI must have ptxas for {arch} (make setup installs it)"
            );
            support::say_skipped(
                "ptxas_assembles",
                &format!("no ptxas for {arch} (run `make setup`)"),
            );
            continue;
        };
        let report = gpu_builder::assemble(&ptxas, &path, arch)
            .unwrap_or_else(|e| panic!("ptxas {} -arch={arch} failed:\n{e}", ptxas.version));
        for kernel in all_kernels() {
            let resources = report.kernel(kernel.name).unwrap_or_else(|| {
                panic!("{arch}: ptxas report has no {}:\n{report}", kernel.name)
            });
            assert_eq!(
                resources.spill_store_bytes + resources.spill_load_bytes,
                0,
                "{arch} {}",
                kernel.name
            );
            assert!(resources.registers > 0, "{arch} {}", kernel.name);
        }
        println!("{report}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_version_and_target_parser_reads_the_built_ptx_and_hand_written_samples() {
    // The built PTX, against its `.version` / `.target` lines read here word by word.
    let source = oxicuda::KERNELS.source();
    let word_after = |directive: &str| -> String {
        let line = source
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with(directive))
            .unwrap_or_else(|| panic!("no {directive} in the PTX"));
        line[directive.len()..]
            .split_whitespace()
            .next()
            .unwrap()
            .to_string()
    };
    let info = oxicuda::KERNELS.info();
    assert_eq!(info.version_string(), word_after(".version"));
    assert_eq!(info.target.clone().unwrap(), word_after(".target"));
    assert_eq!(info.target.as_deref(), Some(oxicuda::KERNEL_BUILD.arch));
    assert_eq!(
        info.target_compute_capability(),
        Some((7, 0)),
        "built for sm_70"
    );
    assert_eq!(
        info.min_cuda_version(),
        Some((9, 0)),
        "PTX ISA 6.0 is CUDA 9.0's"
    );

    // Hand-written headers: comments, extra target options, newer architectures.
    let samples = [
        (
            "//\n// Generated by NVIDIA NVVM Compiler\n//\n.version 8.5\n.target sm_90a\n.address_size 64\n",
            Some((8, 5)),
            Some("sm_90a"),
            Some((9, 0)),
            Some((12, 5)),
        ),
        (
            "/* block\n comment */ .version 7.8\n.target sm_80, debug\n",
            Some((7, 8)),
            Some("sm_80"),
            Some((8, 0)),
            Some((11, 8)),
        ),
        (
            ".version 8.7\n.target sm_120\n",
            Some((8, 7)),
            Some("sm_120"),
            Some((12, 0)),
            Some((12, 8)),
        ),
        (
            "// .version 9.9 in a comment does not count\n.target sm_75\n",
            None,
            Some("sm_75"),
            Some((7, 5)),
            None,
        ),
    ];
    for (text, version, target, capability, cuda) in samples {
        let info = oxicuda::ptx::parse(text);
        assert_eq!(info.version, version, "{text}");
        assert_eq!(info.target.as_deref(), target, "{text}");
        assert_eq!(info.target_compute_capability(), capability, "{text}");
        assert_eq!(info.min_cuda_version(), cuda, "{text}");
    }
}
