//! The machine code (SASS) ptxas makes of a PTX module, per kernel: instruction count, loads by
//! kind, FFMA share and bounds-check branches, like Numba's `inspect_sass()`.
//!
//! PTX is what the build checks; SASS is what the GPU runs. The two can differ a lot: a load
//! through a generic address is `LD`, not `LDG`; an input read through the read-only cache is
//! `LDG.E.CONSTANT`; a shared-memory atomic through a generic address is an `ATOM` plus a
//! fallback loop, through a shared one `ATOMS`. NVIDIA's `nvdisasm` (or `cuobjdump -sass`)
//! disassembles a cubin; neither needs a GPU. CUDA 13's tools (PyPI `nvidia-cuda-nvdisasm`) read
//! sm_75 and newer cubins, so assemble for sm_90 (or sm_80) to disassemble.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::BuildError;
use crate::process::{display_command, find_in_path};

/// A disassembler of cubins: `nvdisasm` (preferred: CUDA 13's `cuobjdump -sass` runs it anyway)
/// or `cuobjdump`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disassembler {
    /// The executable.
    pub path: PathBuf,
    /// `cuobjdump` (`-sass`) or `nvdisasm` (`-c`): their listings differ in how kernels start.
    pub kind: DisassemblerKind,
}

/// Which of NVIDIA's two disassemblers a [`Disassembler`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisassemblerKind {
    /// `cuobjdump -sass`: kernels start at `Function : name`.
    Cuobjdump,
    /// `nvdisasm -c`: kernels start at a `.text.name:` label.
    Nvdisasm,
}

/// How to get a disassembler, for the message when none is found.
pub const INSTALL_HINT: &str = "install it with `make setup-sass` or \
     `python3 -m pip install nvidia-cuda-nvdisasm` (NVIDIA's nvdisasm from PyPI, 6 MB, no \
     CUDA toolkit needed), or point FERROCUDA_NVDISASM at an nvdisasm or cuobjdump";

/// Finds `nvdisasm` or `cuobjdump`: `FERROCUDA_NVDISASM`, then `PATH`, then the `bin` folders of
/// `$CUDA_TOOLS_DIR` (what `../shared/sass/setup.sh`-style installs use), `$CUDA_HOME`,
/// `$CUDA_PATH` and `/usr/local/cuda`, then the pip wheels (`nvidia/cu13/bin`,
/// `nvidia/cuda_nvdisasm/bin`). `Err` lists where it looked (only the override, when
/// `FERROCUDA_NVDISASM` names a file that does not exist).
pub fn find_disassembler() -> Result<Disassembler, Vec<String>> {
    let mut tried = Vec::new();
    let exe = |name: &str| format!("{name}{}", std::env::consts::EXE_SUFFIX);
    let of = |path: PathBuf| {
        let kind = match path.file_stem().and_then(|s| s.to_str()) {
            Some("nvdisasm") => DisassemblerKind::Nvdisasm,
            _ => DisassemblerKind::Cuobjdump,
        };
        Disassembler { path, kind }
    };
    if let Some(p) = std::env::var_os("FERROCUDA_NVDISASM").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(of(p));
        }
        // Set on purpose: another tool found elsewhere would not be the one asked for.
        return Err(vec![format!(
            "{} (FERROCUDA_NVDISASM): not found",
            p.display()
        )]);
    }
    for name in ["nvdisasm", "cuobjdump"] {
        match find_in_path(name) {
            Some(p) => return Ok(of(p)),
            None => tried.push(format!("{name} on PATH: not found")),
        }
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(tools) = std::env::var_os("CUDA_TOOLS_DIR").filter(|p| !p.is_empty()) {
        let tools = PathBuf::from(tools);
        dirs.extend([tools.join("nvidia/cu13/bin"), tools.join("bin")]);
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
            dirs.push(PathBuf::from(p).join("bin"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/bin"));
    for site in crate::ptxas_search::python_site_dirs() {
        dirs.extend([
            site.join("nvidia/cu13/bin"),
            site.join("nvidia/cuda_nvdisasm/bin"),
        ]);
    }
    for dir in &dirs {
        for name in ["nvdisasm", "cuobjdump"] {
            let p = dir.join(exe(name));
            if p.is_file() {
                return Ok(of(p));
            }
        }
    }
    tried.push(format!(
        "nvdisasm/cuobjdump in {}: not found",
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Err(tried)
}

/// One SASS instruction: its offset, guard predicate (`@P0`, `@!P1`, or empty), opcode with
/// modifiers (`LDG.E.CONSTANT`) and operands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// Byte offset in the kernel.
    pub offset: u64,
    /// `@P0`, `@!P1`, … or empty when the instruction always runs.
    pub predicate: String,
    /// The opcode and its modifiers.
    pub opcode: String,
    /// The operands as listed.
    pub operands: String,
}

/// One kernel's (or device function's) SASS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSass {
    /// The function's name.
    pub name: String,
    /// Its instructions, padding (`NOP`) included.
    pub instructions: Vec<Instruction>,
}

/// Disassembles `cubin` into one [`KernelSass`] per function, in listing order.
pub fn disassemble(tool: &Disassembler, cubin: &Path) -> Result<Vec<KernelSass>, BuildError> {
    let mut cmd = Command::new(&tool.path);
    match tool.kind {
        DisassemblerKind::Cuobjdump => cmd.arg("-sass"),
        DisassemblerKind::Nvdisasm => cmd.arg("-c"),
    };
    cmd.arg(cubin);
    let out = cmd.output().map_err(|source| BuildError::Spawn {
        program: tool.path.display().to_string(),
        source,
    })?;
    if !out.status.success() {
        return Err(BuildError::DisassemblerFailed {
            command: display_command(&cmd),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    Ok(parse_listing(&String::from_utf8_lossy(&out.stdout)))
}

/// Parses a `cuobjdump -sass` or `nvdisasm -c` listing. Pure: instruction lines are
/// `/*offset*/ [@P] OPCODE operands ;`, kernels start at `Function : name` (cuobjdump) or a
/// `.text.name:` label (nvdisasm), whose branch and call targets are labels (`` `(.L_x_7) ``,
/// `` `($kernel$callee) ``), replaced
/// here by their offsets (`0x90`) as cuobjdump prints them; everything else is skipped.
pub fn parse_listing(listing: &str) -> Vec<KernelSass> {
    let mut kernels: Vec<KernelSass> = Vec::new();
    // Per kernel: label → offset of the instruction after it; labels waiting for one.
    let mut labels: Vec<BTreeMap<String, u64>> = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    for line in listing.lines() {
        let line = line.trim();
        let name = line
            .strip_prefix("Function : ")
            .or_else(|| line.strip_prefix(".text.")?.strip_suffix(':'));
        if let Some(name) = name {
            kernels.push(KernelSass {
                name: name.trim().to_string(),
                instructions: Vec::new(),
            });
            labels.push(BTreeMap::new());
            pending.clear();
            continue;
        }
        // `.L_x_7:` inside a function, `$kernel$callee:` before a subroutine of the kernel
        // (a panic handler, which nvdisasm lists in the kernel's section).
        if let Some(label) = line
            .strip_suffix(':')
            .filter(|l| l.starts_with(".L") || l.starts_with('$'))
        {
            pending.push(label.to_string());
            continue;
        }
        let (Some(kernel), Some(instruction)) = (kernels.last_mut(), parse_instruction(line))
        else {
            continue;
        };
        if let Some(map) = labels.last_mut() {
            for label in pending.drain(..) {
                map.insert(label, instruction.offset);
            }
        }
        kernel.instructions.push(instruction);
    }
    for (kernel, map) in kernels.iter_mut().zip(&labels) {
        for ins in &mut kernel.instructions {
            if let Some((before, rest)) = ins.operands.split_once("`(") {
                if let Some((label, after)) = rest.split_once(')') {
                    if let Some(offset) = map.get(label) {
                        ins.operands = format!("{before}{offset:#x}{after}");
                    }
                }
            }
        }
    }
    kernels
}

/// `/*0090*/  @P0 EXIT ;  /* 0x… */` → offset 0x90, predicate `@P0`, opcode `EXIT`.
fn parse_instruction(line: &str) -> Option<Instruction> {
    let rest = line.strip_prefix("/*")?;
    let (offset, rest) = rest.split_once("*/")?;
    let offset = u64::from_str_radix(offset.trim(), 16).ok()?;
    let (code, _) = rest.split_once(';')?;
    let code = code.trim();
    let (predicate, code) = match code.strip_prefix('@') {
        Some(guarded) => {
            let (p, rest) = guarded.split_once(char::is_whitespace)?;
            (format!("@{p}"), rest.trim_start())
        }
        None => (String::new(), code),
    };
    let (opcode, operands) = code.split_once(char::is_whitespace).unwrap_or((code, ""));
    if opcode.is_empty() {
        return None;
    }
    Some(Instruction {
        offset,
        predicate,
        opcode: opcode.to_string(),
        operands: operands.trim().to_string(),
    })
}

/// What kind of memory access an opcode is, for [`SassStats::memory`]; `None` for other
/// instructions. Loads through the read-only cache are `LDG.CONSTANT`; the width (`.64`,
/// `.128`) and ordering modifiers do not change the kind.
pub fn memory_kind(opcode: &str) -> Option<&'static str> {
    let mut parts = opcode.split('.');
    let base = parts.next()?;
    Some(match base {
        "LDG" if opcode.contains(".CONSTANT") => "LDG.CONSTANT",
        "LDG" => "LDG",
        "LD" => "LD",
        "LDS" | "LDSM" => "LDS",
        "LDL" => "LDL",
        "STG" => "STG",
        "ST" => "ST",
        "STS" => "STS",
        "STL" => "STL",
        "ATOMS" => "ATOMS",
        "ATOM" | "ATOMG" => "ATOM",
        "RED" | "REDG" => "RED",
        _ => return None,
    })
}

/// The memory kinds [`SassStats::memory`] counts, in report order.
pub const MEMORY_KINDS: [&str; 12] = [
    "LDG",
    "LDG.CONSTANT",
    "LD",
    "LDS",
    "LDL",
    "STG",
    "ST",
    "STS",
    "STL",
    "ATOMS",
    "ATOM",
    "RED",
];

/// Counts over one kernel's SASS.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SassStats {
    /// Instructions, padding (`NOP`) excluded.
    pub instructions: usize,
    /// Fused multiply-adds (`FFMA`).
    pub ffma: usize,
    /// Separate `FMUL`s and `FADD`s: multiply-adds that did not fuse, or plain arithmetic.
    pub fmul_fadd: usize,
    /// Tensor-core matrix multiply-accumulates (`HMMA`, `IMMA`, `DMMA`, `BMMA`, `HGMMA`, ...).
    pub mma: usize,
    /// Memory instructions by [`memory_kind`].
    pub memory: BTreeMap<&'static str, usize>,
    /// Conditional branches to a trap (`BPT.TRAP`), and predicated traps: bounds checks and
    /// asserts that stayed in the machine code.
    pub trap_branches: usize,
}

impl SassStats {
    /// How many memory instructions of `kind` (one of [`MEMORY_KINDS`]).
    pub fn count(&self, kind: &str) -> usize {
        self.memory.get(kind).copied().unwrap_or(0)
    }

    /// FFMA's share of the instructions, in percent.
    pub fn ffma_percent(&self) -> f64 {
        if self.instructions == 0 {
            0.0
        } else {
            100.0 * self.ffma as f64 / self.instructions as f64
        }
    }
}

impl KernelSass {
    /// The counts of [`SassStats`] over this kernel.
    pub fn stats(&self) -> SassStats {
        let mut stats = SassStats::default();
        let traps = self.trap_offsets();
        for (index, ins) in self.instructions.iter().enumerate() {
            let base = ins.opcode.split('.').next().unwrap_or("");
            // Padding: NOPs and the branch-to-self after the last EXIT.
            if base == "NOP" || (base == "BRA" && branch_target(&ins.operands) == Some(ins.offset))
            {
                continue;
            }
            stats.instructions += 1;
            match base {
                "FFMA" => stats.ffma += 1,
                "FMUL" | "FADD" => stats.fmul_fadd += 1,
                "HMMA" | "IMMA" | "DMMA" | "BMMA" | "HGMMA" | "IGMMA" | "QGMMA" | "BGMMA" => {
                    stats.mma += 1
                }
                _ => {}
            }
            if let Some(kind) = memory_kind(&ins.opcode) {
                *stats.memory.entry(kind).or_default() += 1;
            }
            if !ins.predicate.is_empty() && ins.predicate != "@PT" {
                // A check: one way traps, the other does not (the fall-through is the next
                // instruction).
                let next = self.instructions.get(index + 1).map(|n| n.offset);
                let falls_into_trap = next.is_some_and(|n| traps.contains(&n));
                let taken_traps = match base {
                    "BPT" => ins.opcode.contains("TRAP"),
                    "BRA" | "CALL" => {
                        branch_target(&ins.operands).is_some_and(|t| traps.contains(&t))
                    }
                    "EXIT" | "RET" => false,
                    _ => falls_into_trap,
                };
                if taken_traps != falls_into_trap {
                    stats.trap_branches += 1;
                }
            }
        }
        stats
    }

    /// The offsets from which execution certainly reaches a `BPT.TRAP`: straight-line code
    /// before one, branches or calls into such code (a panic is a call to a function that
    /// traps), and conditional branches both of whose ways trap.
    fn trap_offsets(&self) -> std::collections::BTreeSet<u64> {
        let mut traps = std::collections::BTreeSet::new();
        loop {
            let before = traps.len();
            // Walking backwards, `reaches` says whether the next instruction leads to a trap.
            let mut reaches = false;
            for ins in self.instructions.iter().rev() {
                let base = ins.opcode.split('.').next().unwrap_or("");
                let unconditional = ins.predicate.is_empty() || ins.predicate == "@PT";
                let to_trap = || branch_target(&ins.operands).is_some_and(|t| traps.contains(&t));
                reaches = match base {
                    "BPT" if ins.opcode.contains("TRAP") => unconditional || reaches,
                    "BRA" | "CALL" if unconditional => to_trap(),
                    "BRA" | "CALL" => reaches && to_trap(),
                    // A conditional exit leaves a way out that does not trap.
                    "EXIT" | "RET" | "BRX" | "JMP" => false,
                    _ => reaches,
                };
                if reaches {
                    traps.insert(ins.offset);
                }
            }
            if traps.len() == before {
                return traps;
            }
        }
    }
}

/// The target of `BRA 0x1b0` / `CALL.REL.NOINC 0x1930` (the last hex number of the operands).
fn branch_target(operands: &str) -> Option<u64> {
    operands
        .split([' ', ',', '`', '(', ')'])
        .filter_map(|w| w.strip_prefix("0x"))
        .filter_map(|h| u64::from_str_radix(h, 16).ok())
        .next_back()
}

/// A per-kernel table of [`SassStats`] with ptxas's registers and spills: what
/// `ferrocuda kernels --sass` prints.
#[derive(Debug, Clone, Default)]
pub struct SassReport {
    /// The architecture assembled for.
    pub arch: String,
    /// `(kernel, resources, stats)` for each kernel entry, in name order.
    pub kernels: Vec<(crate::ptxas::KernelResources, SassStats)>,
}

impl SassReport {
    /// Joins ptxas's report and the disassembly; functions that are not entries are left out.
    pub fn new(ptxas: &crate::ptxas::PtxasReport, sass: &[KernelSass]) -> Self {
        let kernels = ptxas
            .kernels
            .iter()
            .filter_map(|resources| {
                let code = sass.iter().find(|k| k.name == resources.name)?;
                Some((resources.clone(), code.stats()))
            })
            .collect();
        SassReport {
            arch: ptxas.arch.clone(),
            kernels,
        }
    }

    /// The stats of kernel `name`.
    pub fn kernel(&self, name: &str) -> Option<&SassStats> {
        self.kernels
            .iter()
            .find(|(r, _)| r.name == name)
            .map(|(_, s)| s)
    }
}

impl fmt::Display for SassReport {
    /// An aligned table, one row per kernel.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const HEADERS: [&str; 15] = [
            "kernel",
            "instrs",
            "regs",
            "spill B",
            "LDG",
            "LDG.CONST",
            "LD",
            "LDS",
            "ATOMS",
            "ATOM",
            "RED",
            "FFMA",
            "FFMA %",
            "MMA",
            "trap br",
        ];
        let rows: Vec<[String; 15]> = self
            .kernels
            .iter()
            .map(|(r, s)| {
                [
                    r.name.clone(),
                    s.instructions.to_string(),
                    r.registers.to_string(),
                    format!("{}/{}", r.spill_store_bytes, r.spill_load_bytes),
                    s.count("LDG").to_string(),
                    s.count("LDG.CONSTANT").to_string(),
                    s.count("LD").to_string(),
                    s.count("LDS").to_string(),
                    s.count("ATOMS").to_string(),
                    s.count("ATOM").to_string(),
                    s.count("RED").to_string(),
                    s.ffma.to_string(),
                    format!("{:.0}", s.ffma_percent()),
                    s.mma.to_string(),
                    s.trap_branches.to_string(),
                ]
            })
            .collect();
        writeln!(
            f,
            "SASS for {} ({} kernels; LD is a generic load, LDG.CONST one through the \
             read-only cache; MMA: tensor-core instructions; trap br: bounds checks and asserts \
             left in the code)",
            self.arch,
            self.kernels.len()
        )?;
        crate::text_table::write_table(f, HEADERS, &rows)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cuobjdump listing cut down from ptxas 12.9's sm_90 code for a bounds-checked load.
    const LISTING: &str = "
	code for sm_90
		Function : k
	.headerflags	@\"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                       /* 0x00000a00ff017b82 */
        /*0010*/                   ISETP.GE.U32.AND P0, PT, R2, UR4, PT ;       /* 0x0000000402007c0c */
        /*0020*/              @P0 BRA 0x80 ;                                    /* 0x0000000000140947 */
        /*0030*/                   LDG.E.CONSTANT R5, desc[UR4][R4.64] ;        /* 0x0000000404057981 */
        /*0040*/                   LD.E R6, desc[UR4][R8.64] ;                  /* 0x0000000408067980 */
        /*0050*/                   FFMA R9, R5, R6, R9 ;                        /* 0x0000000605097223 */
        /*0060*/                   ATOMS.POPC.INC.32 RZ, [R0+URZ] ;             /* 0x00000000ff00798c */
        /*0070*/                   EXIT ;                                       /* 0x000000000000794d */
        /*0080*/                   MOV R0, 0xa0 ;                               /* 0x000000a000007802 */
        /*0090*/                   CALL.REL.NOINC 0xc0 ;                        /* 0x0000000000087944 */
        /*00a0*/                   EXIT ;                                       /* 0x000000000000794d */
        /*00b0*/                   NOP ;                                        /* 0x0000000000007918 */
        /*00c0*/                   BPT.TRAP 0x1 ;                               /* 0x000000040000795c */
		..........
		Function : other
        /*0000*/                   REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ; /* 0x0000000502007986 */
        /*0010*/                   EXIT ;                                       /* 0x000000000000794d */
";

    #[test]
    fn a_listing_splits_into_kernels_and_counts_by_kind() {
        let kernels = parse_listing(LISTING);
        assert_eq!(
            kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(),
            ["k", "other"]
        );
        let k = kernels[0].stats();
        assert_eq!(k.instructions, 12, "NOP is not counted");
        assert_eq!((k.ffma, k.fmul_fadd), (1, 0));
        assert_eq!(
            (k.count("LDG.CONSTANT"), k.count("LD"), k.count("ATOMS")),
            (1, 1, 1)
        );
        assert_eq!(k.count("LDG"), 0, "a read-only load is not a plain LDG");
        // The guarded branch to the block that calls the trapping function is a bounds check.
        assert_eq!(k.trap_branches, 1);
        let other = kernels[1].stats();
        assert_eq!((other.count("RED"), other.trap_branches), (1, 0));
    }

    #[test]
    fn tensor_core_instructions_count_as_mma_and_ldmatrix_as_a_shared_load() {
        // From ptxas 12.9's sm_90 code for `matmul_tc_f16` (a k16 step) and an i8 product.
        let listing = "Function : tc
        /*0000*/                   LDSM.16.M88.4 R8, [R3+UR4] ;
        /*0010*/                   LDSM.16.MT88.2 R12, [R5+UR4+0x800] ;
        /*0020*/                   HMMA.16816.F32 R16, R8, R12, R16 ;
        /*0030*/                   HMMA.16816.F32.BF16 R20, R8, R14, R20 ;
        /*0040*/                   IMMA.16832.S8.S8 R24, R8, R12, R24 ;
        /*0050*/                   LDGSTS.E.BYPASS.128 [R2], desc[UR6][R6.64] ;
        /*0060*/                   EXIT ;";
        let stats = parse_listing(listing)[0].stats();
        assert_eq!(stats.mma, 3);
        assert_eq!(stats.count("LDS"), 2);
        assert_eq!((stats.ffma, stats.instructions), (0, 7));
    }

    #[test]
    fn branches_over_traps_and_predicated_traps_are_checks_other_branches_not() {
        let listing = "Function : k
        /*0000*/              @P0 BRA 0x20 ;
        /*0010*/                   BPT.TRAP 0x1 ;
        /*0020*/              @P2 BRA 0x40 ;
        /*0030*/                   FADD R1, R2, R3 ;
        /*0040*/             @!P1 BPT.TRAP 0x1 ;
        /*0050*/                   EXIT ;";
        assert_eq!(parse_listing(listing)[0].stats().trap_branches, 2);
    }

    #[test]
    fn nvdisasm_labels_start_kernels_and_name_branch_targets() {
        let listing = "
.text.saxpy:
        /*0000*/                   FFMA R1, R2, R3, R4 ;
        /*0010*/               @P0 BRA `(.L_x_2) ;
        /*0020*/                   EXIT ;
.L_x_2:
        /*0030*/                   CALL.REL.NOINC `($saxpy$panic) ;
        .type           $saxpy$panic,@function
$saxpy$panic:
        /*0040*/                   BPT.TRAP 0x1 ;
";
        let kernels = parse_listing(listing);
        assert_eq!(kernels[0].name, "saxpy");
        assert_eq!(kernels[0].instructions[1].operands, "0x30");
        let stats = kernels[0].stats();
        assert_eq!((stats.ffma, stats.trap_branches), (1, 1));
    }
}
