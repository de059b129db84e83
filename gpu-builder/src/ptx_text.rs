//! Reading the PTX text the build produced: its `.target` and its kernels (`.entry`), and the
//! placeholder written instead on docs.rs.

/// The first architecture of the `.target` directive (`.target sm_70, debug` -> `sm_70`).
pub(crate) fn target(ptx: &str) -> Option<&str> {
    ptx.lines()
        .map(str::trim_start)
        .find_map(|l| l.strip_prefix(".target"))
        .and_then(|rest| rest.split(',').next())
        .map(str::trim)
}

/// The kernel names of `.entry` directives, in file order.
pub(crate) fn entry_names(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| {
            let rest = &l[l.find(".entry")? + ".entry".len()..];
            if !rest.starts_with(char::is_whitespace) {
                return None;
            }
            let rest = rest.trim_start();
            let end = rest
                .find(|c: char| c == '(' || c.is_whitespace())
                .unwrap_or(rest.len());
            (end > 0).then(|| &rest[..end])
        })
        .collect()
}

/// The prefix of the PTX variables in which `#[kernel]` records each kernel's CPU path.
pub(crate) const CPU_PATH_PREFIX: &str = "__ferrocuda_cpu_path__";

/// Each kernel's CPU path as `#[kernel]` recorded it in the PTX (`.global .b8
/// __ferrocuda_cpu_path__<kernel>[n] = {...}`): (kernel, `elementwise`, `regions` or
/// `coroutines: <why>`), in the PTX's order.
pub fn cpu_paths(ptx: &str) -> Vec<(String, String)> {
    ptx.lines()
        .filter_map(|line| {
            let rest = &line[line.find(CPU_PATH_PREFIX)? + CPU_PATH_PREFIX.len()..];
            let kernel = &rest[..rest.find('[')?];
            let bytes = rest[rest.find('{')? + 1..rest.rfind('}')?]
                .split(',')
                .map(|b| b.trim().parse::<u8>().ok())
                .collect::<Option<Vec<u8>>>()?;
            Some((kernel.to_string(), String::from_utf8(bytes).ok()?))
        })
        .collect()
}

/// Checks that the PTX is for `arch` and has at least one kernel.
pub(crate) fn check(ptx: &str, arch: &str) -> Result<(), String> {
    match target(ptx) {
        None => return Err("it has no `.target` directive".into()),
        Some(t) if t != arch => {
            return Err(format!(
                "it targets {t}, not {arch} (`-C target-cpu={arch}` did not take effect)"
            ))
        }
        Some(_) => {}
    }
    if entry_names(ptx).is_empty() {
        return Err("it has no kernels (`.entry`). A kernel is a \
             `#[unsafe(no_mangle)] pub unsafe extern \"ptx-kernel\" fn` in the kernel crate; with \
             LTO anything not exported that way is removed."
            .into());
    }
    Ok(())
}

/// The line that marks [`placeholder`] PTX.
pub(crate) const PLACEHOLDER_MARK: &str =
    "// ferrocuda-builder placeholder: this is not compiled PTX.";

/// What a docs.rs build embeds instead of the kernels: docs.rs has neither network nor the
/// standard library's source, so the kernel crate cannot be built there, and documentation does
/// not need it. The unknown directive makes the driver reject the module at load time, with this
/// text in its error log, rather than find no kernels in it later.
pub(crate) fn placeholder(crate_name: &str) -> String {
    format!(
        "{PLACEHOLDER_MARK}\n\
         // The build ran with DOCS_RS set (docs.rs has no network and no rust-src), so the kernel\n\
         // crate `{crate_name}` was not built to PTX. Build without DOCS_RS to get its kernels.\n\
         .ferrocuda_placeholder_not_built_because_DOCS_RS_was_set\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_target_and_entries() {
        let ptx = ".version 6.0\n.target sm_70\n.address_size 64\n\n\t// .globl\tadd_one\n\n\
                   .visible .entry add_one(\n\t.param .u64 p\n)\n{\n\tret;\n}\n\
                   .entry second (\n)\n{\n\tret;\n}\n.func notakernel()\n{\n\tret;\n}\n";
        assert_eq!(entry_names(ptx), vec!["add_one", "second"]);
        assert_eq!(check(ptx, "sm_70"), Ok(()));
        assert!(check(ptx, "sm_90")
            .unwrap_err()
            .contains("targets sm_70, not sm_90"));
        assert!(check(".version 6.0\n.target sm_70\n", "sm_70")
            .unwrap_err()
            .contains("no kernels"));
        assert!(check(".version 6.0\n", "sm_70")
            .unwrap_err()
            .contains(".target"));
        assert_eq!(
            target(".version 7.8\n.target sm_90a, debug\n"),
            Some("sm_90a")
        );
    }

    #[test]
    fn placeholder_is_marked_and_has_no_kernels() {
        let ptx = placeholder("my_kernels");
        assert!(ptx.starts_with(PLACEHOLDER_MARK));
        assert!(ptx.contains("`my_kernels`") && ptx.contains("DOCS_RS"));
        assert!(entry_names(&ptx).is_empty());
    }
}

#[cfg(test)]
mod cpu_path_tests {
    use super::*;

    #[test]
    fn the_cpu_paths_recorded_in_the_ptx_are_read_back() {
        let ptx = ".visible .global .align 1 .b8 __ferrocuda_cpu_path__add[7] = {114, 101, 103, 105, 111, 110, 115};\n\
                   .visible .global .align 1 .b8 __ferrocuda_cpu_path__odd_one[14] = {99, 111, 114, 111, 117, 116, 105, 110, 101, 115, 58, 32, 97, 98};\n\
                   .visible .global .align 1 .b8 other[2] = {1, 2};\n";
        assert_eq!(
            cpu_paths(ptx),
            [
                ("add".to_string(), "regions".to_string()),
                ("odd_one".to_string(), "coroutines: ab".to_string())
            ]
        );
    }
}
