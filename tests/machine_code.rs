//! What the kernels' machine code must keep, so that it stays as lean as CUDA C's (issue 13):
//! inputs read through the read-only cache, shared-memory atomics addressed as shared memory,
//! fused multiply-adds in the matrix products, no generic loads. Checked twice: in the PTX (no
//! tool needed), and in the SASS ptxas makes of it for sm_90 where ptxas and cuobjdump (or
//! nvdisasm) are installed (`make setup` installs both).

mod support;

use ferrocuda_builder::sass::{self, SassStats};

/// The body of `.entry name` in `ptx` (up to the next entry).
fn entry_body<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no entry {name}"));
    let rest = &ptx[start + 1..];
    &rest[..rest.find(".entry ").unwrap_or(rest.len())]
}

/// Every `.entry` name of `ptx`.
fn entries(ptx: &str) -> Vec<&str> {
    ptx.split(".entry ")
        .skip(1)
        .filter_map(|rest| rest.split('(').next())
        .collect()
}

/// Kernels that read one of their `Out`s (a coherent load: the kernel writes it too).
const READ_OUTPUTS: [&str; 1] = ["saxpy"];
/// Kernels with shared-memory atomics.
const SHARED_ATOMICS: [&str; 2] = ["histogram", "group_by_shared"];

/// Kernels launched in one block shape (`#[kernel(block(..))]`), which they never read.
const BLOCK_FACT_KERNELS: [&str; 5] = [
    "matmul_tiled",
    "transpose_tiled",
    "transpose_2d_tiled",
    "convolve_2d",
    "convolve_2d_const",
];

/// The PTX-level properties, as messages for those that fail (empty: all hold).
fn ptx_violations(ptx: &str) -> Vec<String> {
    let mut failures = Vec::new();
    for name in entries(ptx) {
        let body = entry_body(ptx, name);
        let coherent = body.matches("ld.global.").count() - body.matches("ld.global.nc.").count();
        if coherent > 0 && !READ_OUTPUTS.contains(&name) {
            failures.push(format!(
                "{name}: {coherent} global loads not through the read-only cache (ld.global.nc)"
            ));
        }
        // An atomic without a state space goes through a generic address.
        for line in body.lines().filter(|l| l.contains("atom.")) {
            if !line.contains(".shared.") && !line.contains(".global.") {
                failures.push(format!("{name}: generic atomic `{}`", line.trim()));
            }
        }
    }
    for name in SHARED_ATOMICS {
        if !entry_body(ptx, name).contains("atom.relaxed.cta.shared.") {
            failures.push(format!("{name}: no atom.shared"));
        }
    }
    // Philox's multiplies are 32-bit (`mul.wide.u32`): as 64-bit multiplies of zero-extended
    // words (LLVM's widening of a `u64` product) each was three SASS instructions.
    if entry_body(ptx, "monte_carlo_pi").contains("mul.lo.s64") {
        failures.push("monte_carlo_pi: a 64-bit multiply (Philox widened to 64 bits)".into());
    }
    // One shared float add per row (a compare-and-swap loop in SASS), not one per branch of
    // the value's NaN test.
    let float_adds = entry_body(ptx, "group_by_shared")
        .matches("shared.add.f32")
        .count();
    if float_adds != 1 {
        failures.push(format!(
            "group_by_shared: {float_adds} shared float adds (want 1: the row loop duplicated)"
        ));
    }
    // Kernels whose block shape is a launch fact (`block(..)`): no thread reads `%ntid` to
    // check the shape again (a trap branch per thread, where the launch checks it once).
    for name in BLOCK_FACT_KERNELS {
        if entry_body(ptx, name).contains("%ntid") {
            failures.push(format!(
                "{name}: reads %ntid (a per-thread check of the block shape)"
            ));
        }
    }
    for (name, fused) in [("matmul_tiled", 16), ("matmul_blocked", 512)] {
        let body = entry_body(ptx, name);
        let count = body.matches("fma.rn.f32").count();
        if count < fused || body.contains("mul.rn.f32") {
            failures.push(format!(
                "{name}: {count} fma.rn.f32 (want {fused}), or an unfused mul.rn.f32"
            ));
        }
    }
    failures
}

/// The PTX to check: the built kernels, or `FERROCUDA_MACHINE_CODE_PTX` (e.g. an older build's,
/// to see these checks fail on it).
fn kernels_ptx() -> String {
    match std::env::var_os("FERROCUDA_MACHINE_CODE_PTX") {
        Some(path) => std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("FERROCUDA_MACHINE_CODE_PTX: {e}")),
        None => ferrocuda::KERNELS.source().to_string(),
    }
}

#[test]
fn the_ptx_reads_inputs_through_the_read_only_cache_and_addresses_atomics_by_space() {
    let failures = ptx_violations(&kernels_ptx());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Registers per thread for sm_90 that kernels must stay within (issue 13's bar: CUDA C's + 4),
/// where a change of their loops took them there: a loop that slips back (a 64-bit index beside
/// the pointers, a slow path above the loop's live values) shows here first.
///
/// Occupancy on sm_90 (65536 registers per SM, allocated per warp in units of 256): up to 32
/// registers a thread run 64 warps per SM, 33-40 run 48 (in blocks of 256), 41-48 run 40.
const REGISTER_BUDGETS: [(&str, u32); 7] = [
    // `grid_stride_zip`'s 32-bit index (24 with `for i in grid_stride(n)`; CUDA C 18).
    ("dot_partial", 22),
    // `grid_stride_elements`' 32-bit index (20 before; CUDA C 18).
    ("sum_partial", 18),
    // The flush loop's state indices in 32 bits, proved in bounds (28 before; CUDA C 18). Over
    // CUDA C + 4, at the same occupancy: 64 warps per SM (its launch: 2 blocks of 512).
    ("group_by_shared", 24),
    // CUDA C (`size_t`) 12; over CUDA C + 4 at the same occupancy, 64 warps per SM.
    ("saxpy", 18),
    // CUDA C's 40 (48 warps per SM): the block merges plain sums, dividing only in thread 0
    // after the last reduction (48 with Chan's merge, whose f64 division's slow path sat
    // above the warp tree's live values).
    ("statistics_partial", 40),
    // `index32(a, out)`: 32-bit offsets (12 and 16 before); the naive one's grid index in 32
    // bits too, which `index32` launches allow (12 before; CUDA C's flat one 10).
    ("transpose_2d_naive", 10),
    ("transpose_2d_tiled", 18),
];

/// The kernels over their register budgets, as messages (empty: all within).
fn register_violations(resources: &ferrocuda_builder::PtxasReport) -> Vec<String> {
    REGISTER_BUDGETS
        .iter()
        .filter_map(|&(name, budget)| {
            let kernel = resources.kernels.iter().find(|k| k.name == name);
            match kernel {
                None => Some(format!("{name}: not in the ptxas report")),
                Some(k) if k.registers > budget => Some(format!(
                    "{name}: {} registers for sm_90, over its budget of {budget}",
                    k.registers
                )),
                Some(_) => None,
            }
        })
        .collect()
}

/// The kernels' PTX assembled for sm_90: ptxas' report, and the cubin's path in `dir`.
fn assemble_for_sm_90(
    ptxas: &ferrocuda_builder::Ptxas,
    dir: &std::path::Path,
) -> (ferrocuda_builder::PtxasReport, std::path::PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    let (ptx, cubin) = (dir.join("kernels.ptx"), dir.join("kernels.cubin"));
    std::fs::write(&ptx, kernels_ptx()).unwrap();
    let resources = ferrocuda_builder::assemble_to(ptxas, &ptx, "sm_90", &cubin).unwrap();
    (resources, cubin)
}

#[test]
fn the_kernels_stay_within_their_register_budgets() {
    const TEST: &str = "the_kernels_stay_within_their_register_budgets";
    let Some(ptxas) = ferrocuda_builder::find_ptxas("sm_90") else {
        assert!(!support::on_ci(), "CI must have ptxas (make setup)");
        support::say_skipped(TEST, "no ptxas for sm_90 (run `make setup`)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("ferrocuda-registers-{}", std::process::id()));
    let (resources, _) = assemble_for_sm_90(&ptxas, &dir);
    std::fs::remove_dir_all(&dir).ok();
    let failures = register_violations(&resources);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The SASS-level properties of one kernel, as messages for those that fail.
fn sass_violations(name: &str, s: &SassStats) -> Vec<String> {
    let mut failures = Vec::new();
    let mut fail = |what: String| failures.push(format!("{name}: {what}"));
    if s.count("LD") + s.count("ST") > 0 {
        fail(format!(
            "{} generic loads and {} generic stores",
            s.count("LD"),
            s.count("ST")
        ));
    }
    if s.count("LDL") + s.count("STL") > 0 {
        fail("local memory (spills or an array indexed at run time)".into());
    }
    if s.count("LDG") > 0 && !READ_OUTPUTS.contains(&name) {
        fail(format!(
            "{} LDG (coherent) loads of inputs; LDG.E.CONSTANT expected",
            s.count("LDG")
        ));
    }
    if SHARED_ATOMICS.contains(&name) && (s.count("ATOMS") == 0 || s.count("ATOM") > 0) {
        fail(format!(
            "{} ATOMS and {} ATOM: shared atomics must be ATOMS, unused global results RED",
            s.count("ATOMS"),
            s.count("ATOM")
        ));
    }
    let fused = match name {
        "matmul_tiled" => 16,
        "matmul_blocked" => 512,
        _ => 0,
    };
    if s.ffma < fused || (fused > 0 && s.fmul_fadd > 0) {
        fail(format!(
            "{} FFMA and {} FMUL/FADD; {fused} FFMA and no FMUL/FADD expected",
            s.ffma, s.fmul_fadd
        ));
    }
    failures
}

#[test]
fn the_sass_has_no_generic_loads_and_uses_atoms_ldg_constant_and_ffma() {
    const TEST: &str = "the_sass_has_no_generic_loads_and_uses_atoms_ldg_constant_and_ffma";
    let Some(ptxas) = ferrocuda_builder::find_ptxas("sm_90") else {
        assert!(!support::on_ci(), "CI must have ptxas (make setup)");
        support::say_skipped(TEST, "no ptxas for sm_90 (run `make setup`)");
        return;
    };
    let tool = match sass::find_disassembler() {
        Ok(tool) => tool,
        Err(tried) => {
            support::say_skipped(
                TEST,
                &format!(
                    "no cuobjdump or nvdisasm ({}); {}",
                    tried.join("; "),
                    sass::INSTALL_HINT
                ),
            );
            return;
        }
    };
    let dir = std::env::temp_dir().join(format!("ferrocuda-machine-code-{}", std::process::id()));
    let (resources, cubin) = assemble_for_sm_90(&ptxas, &dir);
    let code = sass::disassemble(&tool, &cubin).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let report = sass::SassReport::new(&resources, &code);
    println!("{report}");
    assert_eq!(
        report.kernels.len(),
        resources.kernels.len(),
        "every kernel disassembled"
    );
    let failures: Vec<String> = report
        .kernels
        .iter()
        .flat_map(|(r, s)| sass_violations(&r.name, s))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Each input-reading kernel has read-only loads at all (the checks above are not vacuous).
    for name in [
        "vector_add",
        "matmul_tiled",
        "histogram",
        "statistics_partial",
    ] {
        let stats = report.kernel(name).unwrap();
        assert!(stats.count("LDG.CONSTANT") > 0, "{name}: no LDG.E.CONSTANT");
    }
}

#[test]
fn kernels_sass_prints_a_row_per_kernel_or_says_what_is_missing() {
    let asked_for_nothing = support::ferrocuda()
        .args(["kernels", "--sass"])
        .env("FERROCUDA_NVDISASM", "/nonexistent/nvdisasm")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&asked_for_nothing.stderr);
    assert_eq!(asked_for_nothing.status.code(), Some(1), "{stderr}");
    for needed in [
        "/nonexistent/nvdisasm (FERROCUDA_NVDISASM): not found",
        "pip install nvidia-cuda-nvdisasm",
        "make setup-sass",
    ] {
        assert!(stderr.contains(needed), "{needed:?} missing from: {stderr}");
    }
    if ferrocuda_builder::find_ptxas("sm_90").is_none() || sass::find_disassembler().is_err() {
        support::say_skipped(
            "kernels_sass_prints_a_row_per_kernel",
            "no ptxas or nvdisasm (make setup)",
        );
        return;
    }
    let table = support::stdout_of(support::ferrocuda().args(["kernels", "--sass"]));
    assert!(table.contains("SASS for sm_90"), "{table}");
    let tensor = ferrocuda::TENSOR_KERNELS.info();
    for (entry, on_tensor_cores) in ferrocuda::KERNELS
        .info()
        .entries
        .iter()
        .map(|e| (e, false))
        .chain(tensor.entries.iter().map(|e| (e, true)))
    {
        let row = table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(entry.name.as_str()))
            .unwrap_or_else(|| panic!("no row for {}: {table}", entry.name));
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells.len(), 15, "{row}");
        // The MMA column: the tensor-core kernels' products are HMMA instructions, and no
        // other kernel has any.
        let mma: usize = cells[13].parse().unwrap();
        assert_eq!(mma > 0, on_tensor_cores, "{row}");
    }
}
