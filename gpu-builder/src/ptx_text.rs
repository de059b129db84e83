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
