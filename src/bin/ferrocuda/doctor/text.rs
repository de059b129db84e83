//! The text form of doctor's [`Report`]: a section per part, ✓ or ✗ per fact, and the fix under
//! every ✗.

use super::{Problem, Report};

/// What doctor says of the PTX emulator's virtual GPU.
const EMULATOR_NOTE: &str = "a PTX emulator, not a GPU (FERROCUDA_LIBCUDA loads it): it runs the \
    compiled PTX through the driver API to check both; it is no performance model and no proof \
    that hardware agrees";

impl Report {
    /// The report for people: sections of ✓ (works), ✗ (does not, with the fix) and - (a fact).
    pub fn text(&self) -> String {
        let mut out = Text::default();
        out.line("ferrocuda doctor");

        out.section("NVIDIA driver");
        let d = &self.driver;
        match &d.problem {
            Some(problem) => out.bad(problem),
            None => out.good(&format!(
                "found: {}, for CUDA {}",
                d.library.as_deref().unwrap_or("libcuda (path unknown)"),
                d.cuda_version.as_deref().unwrap_or("?")
            )),
        }

        out.section("GPUs");
        if let Some(problem) = &self.gpus_problem {
            out.bad(problem);
        } else if !d.found {
            out.fact("none can be used without the driver");
        }
        for gpu in &self.gpus {
            match (&gpu.facts, &gpu.problem) {
                (Some(f), None) => {
                    out.good(&format!(
                        "CUDA device {}: {}, compute capability {}, {} SMs",
                        gpu.ordinal, f.name, f.compute_capability, f.sm_count
                    ));
                    if f.emulated {
                        out.detail(EMULATOR_NOTE);
                    }
                    out.detail(&format!(
                        "memory: {} free of {}",
                        bytes(f.memory_free_bytes),
                        bytes(f.memory_total_bytes)
                    ));
                    out.detail(&format!(
                        "per block: at most {} threads, {} of shared memory",
                        f.max_threads_per_block,
                        bytes(Some(f.max_shared_memory_per_block_bytes as usize))
                    ));
                }
                (_, Some(problem)) => out.bad(problem),
                (None, None) => {}
            }
        }

        out.section("CPU executor");
        let c = &self.cpu;
        match &c.memory_problem {
            None => out.good(&format!(
                "{}: memory {} available of {}",
                c.name,
                bytes(c.memory_available_bytes),
                bytes(c.memory_total_bytes)
            )),
            Some(why) => out.good(&format!("{} (memory unknown: {why})", c.name)),
        }

        out.section(&format!("Embedded PTX ({})", self.ptx.module));
        let p = &self.ptx;
        out.good(&format!(
            "PTX ISA {}, target {}; {} kernels: {}",
            p.isa_version,
            p.target.as_deref().unwrap_or("(none)"),
            p.kernels.len(),
            p.kernels.join(", ")
        ));
        out.fact(&format!(
            "needs a driver for CUDA {} or newer and a GPU of compute capability {} or newer",
            p.needs_cuda, p.needs_compute_capability
        ));
        if p.on_gpus.is_empty() {
            out.fact("not loaded on a GPU: there is none to load it on");
        }
        for on in &p.on_gpus {
            let device = format!("CUDA device {}", on.ordinal);
            match on.driver_new_enough {
                Some(true) => out.good(&format!(
                    "the driver (CUDA {}) knows PTX ISA {}",
                    d.cuda_version.as_deref().unwrap_or("?"),
                    p.isa_version
                )),
                Some(false) => out.bad(&Problem {
                    error: format!(
                        "the driver supports CUDA {}, older than the CUDA {} that PTX ISA {} needs",
                        d.cuda_version.as_deref().unwrap_or("?"),
                        p.needs_cuda,
                        p.isa_version
                    ),
                    fix: format!(
                        "update the NVIDIA driver to one for CUDA {} or newer",
                        p.needs_cuda
                    ),
                }),
                None => out.fact("whether the driver knows this PTX ISA version is unknown"),
            }
            match on.gpu_new_enough {
                Some(true) => out.good(&format!(
                    "{device} is new enough for {}",
                    p.target.as_deref().unwrap_or("the target")
                )),
                Some(false) => out.bad(&Problem {
                    error: format!(
                        "{device} is older than {}: the driver never JIT-compiles PTX for an \
                         older GPU",
                        p.target.as_deref().unwrap_or("the target")
                    ),
                    fix: "build the kernels for this GPU's sm_XY or lower \
                          (`ferrocuda_builder::PtxBuilder::arch`)"
                        .into(),
                }),
                None => out.fact(&format!("whether {device} is new enough is unknown")),
            }
            match &on.problem {
                None => out.good(&format!("{device}: the driver loaded (JIT-compiled) it")),
                Some(problem) => out.bad(problem),
            }
        }

        out.section("Kernel toolchain (this build)");
        let t = &self.toolchain;
        out.good(&format!(
            "{} at {} ({}), PTX built for {}",
            t.rustc_version, t.rustc, t.found_by, t.arch
        ));
        match (&t.problem, &t.ptxas_version, &t.ptxas_path) {
            (None, Some(version), Some(path)) => out.good(&format!(
                "ptxas {version} checked the PTX at build time ({path})"
            )),
            (Some(problem), _, _) => out.bad(problem),
            _ => {}
        }

        out.section("Verdict");
        let v = &self.verdict;
        if v.kernels_run {
            out.good(&v.message);
        } else {
            out.bad(&Problem {
                error: v.message.clone(),
                fix: v.fix.clone().unwrap_or_default(),
            });
        }
        out.0
    }
}

/// The text report being written.
#[derive(Default)]
struct Text(String);

impl Text {
    fn line(&mut self, text: &str) {
        self.0.push_str(text);
        self.0.push('\n');
    }
    fn section(&mut self, title: &str) {
        self.line("");
        self.line(title);
    }
    fn good(&mut self, text: &str) {
        self.line(&format!("  ✓ {text}"));
    }
    fn bad(&mut self, problem: &Problem) {
        self.line(&format!("  ✗ {}", problem.error));
        self.line(&format!("    fix: {}", problem.fix));
    }
    fn fact(&mut self, text: &str) {
        self.line(&format!("  - {text}"));
    }
    fn detail(&mut self, text: &str) {
        self.line(&format!("    {text}"));
    }
}

/// Bytes for people: "1.5 GiB (1610612736 bytes)"; "unknown" for `None`.
fn bytes(n: Option<usize>) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let Some(n) = n else {
        return "unknown".into();
    };
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} bytes")
    } else {
        format!("{value:.1} {} ({n} bytes)", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn byte_counts_read_for_people_and_stay_exact() {
        assert_eq!(bytes(None), "unknown");
        assert_eq!(bytes(Some(1000)), "1000 bytes");
        assert_eq!(bytes(Some(49152)), "48.0 KiB (49152 bytes)");
        assert_eq!(
            bytes(Some(150_754_820_096)),
            "140.4 GiB (150754820096 bytes)"
        );
    }
}
