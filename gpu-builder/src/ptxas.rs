//! Checking PTX with NVIDIA's `ptxas`, and reading its per-kernel resource report.
//!
//! The driver JIT-compiles PTX at load time; assembling it here first turns "invalid PTX at the
//! first launch" into a build error, and `ptxas -v` tells how many registers, how much shared
//! memory and how many spill bytes each kernel needs. No GPU is needed for either. Finding the
//! binary is in `ptxas_search`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::BuildError;
use crate::process::display_command;

/// A `ptxas` binary and its CUDA release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ptxas {
    /// The executable.
    pub path: PathBuf,
    /// The CUDA release it belongs to, e.g. `12.9` (from `ptxas --version`).
    pub version: String,
}

impl fmt::Display for Ptxas {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ptxas {} ({})", self.version, self.path.display())
    }
}

/// Resources ptxas assigned to one kernel (`.entry`). All sizes are bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelResources {
    /// The entry's name as in the PTX.
    pub name: String,
    /// Registers per thread: with the block size, this bounds occupancy.
    pub registers: u32,
    /// Static shared memory per block (`smem`).
    pub shared_bytes: u32,
    /// Per-thread stack frame (local memory for arrays, spills and calls).
    pub stack_frame_bytes: u32,
    /// Bytes stored to local memory because registers ran out: a performance warning.
    pub spill_store_bytes: u32,
    /// Bytes loaded back from spills.
    pub spill_load_bytes: u32,
    /// Named barriers used (`bar.sync` ids).
    pub barriers: u32,
    /// Constant memory, all banks together (`cmem[0]` holds the parameters on sm_70..sm_89).
    pub constant_bytes: u32,
}

/// What `ptxas -v` said about every kernel of one PTX module for one architecture.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PtxasReport {
    /// The architecture assembled for, e.g. `sm_70`.
    pub arch: String,
    /// One entry per kernel, sorted by name.
    pub kernels: Vec<KernelResources>,
    /// ptxas's warnings (e.g. a stack size it cannot determine statically), without the prefix.
    pub warnings: Vec<String>,
}

impl PtxasReport {
    /// The kernel called `name`, if ptxas compiled one.
    pub fn kernel(&self, name: &str) -> Option<&KernelResources> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

impl fmt::Display for PtxasReport {
    /// An aligned table, one row per kernel, then the warnings.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const HEADERS: [&str; 8] = [
            "kernel",
            "registers",
            "shared B",
            "stack B",
            "spill st B",
            "spill ld B",
            "barriers",
            "const B",
        ];
        let rows: Vec<[String; 8]> = self
            .kernels
            .iter()
            .map(|k| {
                [
                    k.name.clone(),
                    k.registers.to_string(),
                    k.shared_bytes.to_string(),
                    k.stack_frame_bytes.to_string(),
                    k.spill_store_bytes.to_string(),
                    k.spill_load_bytes.to_string(),
                    k.barriers.to_string(),
                    k.constant_bytes.to_string(),
                ]
            })
            .collect();
        writeln!(
            f,
            "ptxas resources for {} ({} kernel{})",
            self.arch,
            self.kernels.len(),
            if self.kernels.len() == 1 { "" } else { "s" }
        )?;
        crate::text_table::write_table(f, HEADERS, &rows)?;
        for w in &self.warnings {
            writeln!(f, "warning: {w}")?;
        }
        Ok(())
    }
}

/// Splits `sm_90a` into (90, "a"); `None` when `arch` is not an `sm_` architecture.
pub(crate) fn parse_arch(arch: &str) -> Option<(u32, &str)> {
    let rest = arch.strip_prefix("sm_")?;
    let digits = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (num, suffix) = rest.split_at(digits);
    if num.is_empty() || !matches!(suffix, "" | "a" | "f") {
        return None;
    }
    Some((num.parse().ok()?, suffix))
}

/// Assembles `ptx_path` for `arch` with `ptxas -v` (the cubin is discarded) and parses the report.
///
/// A non-zero exit means the PTX is invalid for that architecture and fails with
/// [`BuildError::PtxasFailed`] carrying everything ptxas printed.
pub fn assemble(ptxas: &Ptxas, ptx_path: &Path, arch: &str) -> Result<PtxasReport, BuildError> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let cubin = std::env::temp_dir().join(format!(
        "ferrocuda-ptxas-{}-{}.cubin",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let report = assemble_to(ptxas, ptx_path, arch, &cubin);
    let _ = std::fs::remove_file(&cubin);
    report
}

/// [`assemble`], keeping the machine code in `cubin` (for [`crate::sass`] to disassemble).
pub fn assemble_to(
    ptxas: &Ptxas,
    ptx_path: &Path,
    arch: &str,
    cubin: &Path,
) -> Result<PtxasReport, BuildError> {
    let mut cmd = Command::new(&ptxas.path);
    cmd.arg(format!("-arch={arch}"))
        .arg("-v")
        .arg(ptx_path)
        .arg("-o")
        .arg(cubin);
    let out = cmd.output();
    let out = out.map_err(|source| BuildError::Spawn {
        program: ptxas.path.display().to_string(),
        source,
    })?;
    // ptxas writes -v output and errors to stderr; keep stdout too in case a version differs.
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(BuildError::PtxasFailed {
            arch: arch.to_string(),
            command: display_command(&cmd),
            stderr: text,
        });
    }
    Ok(parse_ptxas_verbose(arch, &text))
}

/// Parses `ptxas -v` output into one [`KernelResources`] per compiled entry.
///
/// Pure and order-independent: `Compiling entry function 'k'` names the kernels,
/// `Function properties for k` (followed by the stack/spill line) and `Used N registers, ...`
/// (after the entry's `Compiling` line) fill them in. Non-entry functions are ignored; unknown
/// lines are skipped so newer ptxas releases still parse.
pub fn parse_ptxas_verbose(arch: &str, stderr: &str) -> PtxasReport {
    let mut kernels: Vec<KernelResources> = Vec::new();
    // Stack/spill lines of every function, entry or not, by name.
    let mut properties: Vec<(String, [u32; 3])> = Vec::new();
    let mut warnings = Vec::new();
    let mut current_entry: Option<usize> = None;
    let mut properties_of: Option<String> = None;

    for raw in stderr.lines() {
        let line = raw.trim();
        let message = line
            .strip_prefix("ptxas")
            .and_then(|rest| rest.split_once(':'))
            .map(|(_, msg)| msg.trim());
        if let Some(w) = line.strip_prefix("ptxas warning") {
            let w = w.split_once(':').map_or(w, |(_, m)| m).trim();
            warnings.push(w.to_string());
            continue;
        }
        match message {
            Some(msg) => {
                properties_of = None;
                if let Some(rest) = msg.strip_prefix("Compiling entry function") {
                    let name = rest.split('\'').nth(1).unwrap_or("").to_string();
                    let idx = kernels
                        .iter()
                        .position(|k| k.name == name)
                        .unwrap_or_else(|| {
                            kernels.push(KernelResources {
                                name,
                                ..Default::default()
                            });
                            kernels.len() - 1
                        });
                    current_entry = Some(idx);
                } else if let Some(rest) = msg.strip_prefix("Function properties for") {
                    properties_of = Some(rest.trim().trim_matches('\'').to_string());
                } else if msg.starts_with("Used ") {
                    if let Some(k) = current_entry.map(|i| &mut kernels[i]) {
                        for (n, what) in items(msg) {
                            if what.starts_with("register") {
                                k.registers = n;
                            } else if what.starts_with("barrier") {
                                k.barriers = n;
                            } else if what == "bytes smem" {
                                k.shared_bytes = n;
                            } else if what.starts_with("bytes cmem") {
                                k.constant_bytes += n;
                            }
                        }
                    }
                } else if msg.starts_with("Compiling") {
                    // `Compiling function` etc.: not an entry, so no kernel row.
                    current_entry = None;
                }
            }
            None => {
                // The indented line after `Function properties for X`.
                if let Some(name) = properties_of.take() {
                    let mut p = [0u32; 3];
                    for (n, what) in items(line) {
                        match what.as_str() {
                            "bytes stack frame" => p[0] = n,
                            "bytes spill stores" => p[1] = n,
                            "bytes spill loads" => p[2] = n,
                            _ => {}
                        }
                    }
                    properties.push((name, p));
                }
            }
        }
    }
    for k in &mut kernels {
        if let Some((_, [stack, st, ld])) = properties.iter().find(|(n, _)| *n == k.name) {
            k.stack_frame_bytes = *stack;
            k.spill_store_bytes = *st;
            k.spill_load_bytes = *ld;
        }
    }
    kernels.sort_by(|a, b| a.name.cmp(&b.name));
    PtxasReport {
        arch: arch.to_string(),
        kernels,
        warnings,
    }
}

/// `Used 10 registers, used 1 barriers, 1024 bytes smem` -> (10, "registers"), (1, "barriers"),
/// (1024, "bytes smem"): the first number of each comma-separated item and the words after it.
fn items(text: &str) -> impl Iterator<Item = (u32, String)> + '_ {
    text.split(',').filter_map(|item| {
        let mut words = item.split_whitespace();
        let n = words.by_ref().find_map(|w| w.parse::<u32>().ok())?;
        Some((n, words.collect::<Vec<_>>().join(" ")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Captured from the installed ptxas on tests/data/shared_and_spill.ptx.txt: `tile_sum` uses 1 KiB
    // of shared memory and a barrier and calls a `.func`; `spill_me` keeps 40 values live under
    // `.maxnreg 16` so it spills.
    const CUDA_12_9_SM_70: &str = include_str!("../tests/data/ptxas-12.9-sm_70.txt");
    const CUDA_13_5_SM_90: &str = include_str!("../tests/data/ptxas-13.5-sm_90.txt");

    #[test]
    fn parses_cuda_12_9_output() {
        let r = parse_ptxas_verbose("sm_70", CUDA_12_9_SM_70);
        assert_eq!(r.arch, "sm_70");
        assert_eq!(
            r.kernels,
            vec![
                KernelResources {
                    name: "spill_me".into(),
                    registers: 24,
                    shared_bytes: 0,
                    stack_frame_bytes: 232,
                    spill_store_bytes: 228,
                    spill_load_bytes: 292,
                    barriers: 0,
                    constant_bytes: 360,
                },
                KernelResources {
                    name: "tile_sum".into(),
                    registers: 10,
                    shared_bytes: 1024,
                    stack_frame_bytes: 0,
                    spill_store_bytes: 0,
                    spill_load_bytes: 0,
                    barriers: 1,
                    constant_bytes: 360,
                },
            ]
        );
        assert_eq!(
            r.warnings,
            vec![
                "For entry spill_me adjusting per thread register count of 16 to lower bound of 24"
            ]
        );
        // `helper` is a .func: it has properties but is not a kernel.
        assert!(r.kernel("helper").is_none());
    }

    #[test]
    fn parses_cuda_13_5_output_without_cmem() {
        let r = parse_ptxas_verbose("sm_90", CUDA_13_5_SM_90);
        let spill = r.kernel("spill_me").unwrap();
        assert_eq!(
            (
                spill.registers,
                spill.spill_store_bytes,
                spill.spill_load_bytes
            ),
            (24, 228, 292)
        );
        assert_eq!(spill.constant_bytes, 0);
        let tile = r.kernel("tile_sum").unwrap();
        assert_eq!(
            (tile.shared_bytes, tile.barriers, tile.registers),
            (1024, 1, 10)
        );
    }

    #[test]
    fn sums_constant_banks_and_tolerates_unknown_lines() {
        let text = "ptxas info    : 0 bytes gmem, 8 bytes cmem[3]\n\
                    ptxas info    : Compiling entry function '_Z1kPf' for 'sm_80'\n\
                    ptxas info    : Function properties for _Z1kPf\n\
                    \x20   16 bytes stack frame, 4 bytes spill stores, 8 bytes spill loads\n\
                    ptxas info    : Some future line, 3 widgets\n\
                    ptxas info    : Used 32 registers, 360 bytes cmem[0], 8 bytes cmem[2]\n";
        let r = parse_ptxas_verbose("sm_80", text);
        assert_eq!(
            r.kernels,
            vec![KernelResources {
                name: "_Z1kPf".into(),
                registers: 32,
                stack_frame_bytes: 16,
                spill_store_bytes: 4,
                spill_load_bytes: 8,
                constant_bytes: 368,
                ..Default::default()
            }]
        );
        assert!(parse_ptxas_verbose("sm_80", "").kernels.is_empty());
    }

    #[test]
    fn report_table_is_aligned() {
        let r = parse_ptxas_verbose("sm_70", CUDA_12_9_SM_70);
        let text = r.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "ptxas resources for sm_70 (2 kernels)");
        assert!(lines[1].starts_with("kernel"), "{text}");
        assert!(
            lines[2].starts_with("spill_me") && lines[3].starts_with("tile_sum"),
            "{text}"
        );
        // Every table row has the same width, and columns are right-aligned.
        assert_eq!(lines[1].len(), lines[2].len());
        assert_eq!(lines[2].len(), lines[3].len());
        assert!(lines[3].contains("1024"));
        assert!(
            lines[4].starts_with("warning: For entry spill_me"),
            "{text}"
        );
    }

    #[test]
    fn arch_names() {
        assert_eq!(parse_arch("sm_70"), Some((70, "")));
        assert_eq!(parse_arch("sm_90a"), Some((90, "a")));
        assert_eq!(parse_arch("sm_100f"), Some((100, "f")));
        for bad in [
            "",
            "sm_",
            "sm70",
            "compute_70",
            "sm_70x",
            "sm_7 0",
            "sm_70; rm",
        ] {
            assert_eq!(parse_arch(bad), None, "{bad}");
        }
    }
}
