//! What the driver's JIT checks before compiling: the PTX ISA `.version` (no newer than the
//! driver knows) and the `.target` (no newer GPU than the device), with ptxas's wording.

/// The newest PTX ISA a CUDA 12.9 driver compiles, as (major, minor): 8.8, what NVRTC 12.9 (the
/// CUDA C column's compiler, `make setup`) writes.
pub(crate) const NEWEST_ISA: (u32, u32) = (8, 8);

/// Why the JIT refuses the module before reading its code.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum HeaderError {
    /// `.version` newer than [`NEWEST_ISA`] (CUDA_ERROR_UNSUPPORTED_PTX_VERSION).
    TooNewVersion(String),
    /// Any other refusal (CUDA_ERROR_INVALID_PTX).
    Invalid(String),
}

/// The `.version` as major * 10 + minor, or why the JIT refuses the module on device `ordinal`
/// (its compute capability: `FERROCUDA_EMU_SM`).
pub(crate) fn check(ptx: &str, ordinal: usize) -> Result<i32, HeaderError> {
    check_for(ptx, crate::device::device_sm(ordinal))
}

/// [`check`] for a device of compute capability `device_sm` (`.target` number).
fn check_for(ptx: &str, device_sm: u32) -> Result<i32, HeaderError> {
    let mut version = None;
    for (index, line) in ptx.lines().enumerate() {
        let line_no = index + 1;
        let mut words = line.split("//").next().unwrap_or("").split_whitespace();
        match words.next() {
            Some(".version") => {
                let text = words.next().unwrap_or("");
                let parsed = text
                    .split_once('.')
                    .and_then(|(major, minor)| Some((major.parse().ok()?, minor.parse().ok()?)));
                let Some((major, minor)) = parsed else {
                    return Err(HeaderError::Invalid(format!(
                        "ptxas application ptx input, line {line_no}; error   : \
                         malformed .version '{text}'"
                    )));
                };
                if (major, minor) > NEWEST_ISA {
                    return Err(HeaderError::TooNewVersion(format!(
                        "ptxas application ptx input, line {line_no}; fatal   : Unsupported \
                         .version {major}.{minor}; current version is '{}.{}'",
                        NEWEST_ISA.0, NEWEST_ISA.1
                    )));
                }
                version = Some((major * 10 + minor) as i32);
            }
            Some(".target") => {
                let targets = words.collect::<Vec<_>>().join(" ");
                for target in targets.split(',').map(str::trim) {
                    let sm = target
                        .strip_prefix("sm_")
                        .map(|n| n.trim_end_matches(['a', 'f']))
                        .and_then(|n| n.parse::<u32>().ok());
                    if sm.is_some_and(|sm| sm > device_sm) {
                        return Err(HeaderError::Invalid(format!(
                            "ptxas application ptx input, line {line_no}; fatal   : SM version \
                             specified by .target ({target}) is higher than the device's \
                             (sm_{device_sm})"
                        )));
                    }
                }
            }
            // The header ends where the first declaration or entry starts.
            Some(w) if w.starts_with('.') && w != ".address_size" => break,
            _ => {}
        }
    }
    version.ok_or_else(|| {
        HeaderError::Invalid(
            "ptxas application ptx input, line 1; error   : no .version directive".into(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_targets_the_jit_accepts_and_refuses() {
        let ptx = |v: &str, t: &str| format!("//\n.version {v}\n.target {t}\n.address_size 64\n");
        assert_eq!(check_for(&ptx("6.0", "sm_70"), 90), Ok(60));
        assert_eq!(check_for(&ptx("8.8", "sm_90a"), 90), Ok(88));
        // An emulated sm_70 (FERROCUDA_EMU_SM=70) refuses sm_80 PTX, as ptxas would.
        assert!(
            matches!(check_for(&ptx("7.0", "sm_80"), 70), Err(HeaderError::Invalid(m)) if m.contains("(sm_70)"))
        );
        assert_eq!(check_for(&ptx("7.0", "sm_70"), 70), Ok(70));
        assert!(
            matches!(check_for(&ptx("9.0", "sm_70"), 90), Err(HeaderError::TooNewVersion(m)) if m.contains("line 2") && m.contains("9.0"))
        );
        assert!(
            matches!(check_for(&ptx("7.8", "sm_100"), 90), Err(HeaderError::Invalid(m)) if m.contains("sm_100"))
        );
        assert!(matches!(
            check_for(".target sm_70\n", 90),
            Err(HeaderError::Invalid(_))
        ));
    }
}
