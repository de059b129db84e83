//! Running programs and writing files: the small system helpers the toolchain search, `ptxas` and
//! the nested cargo share.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::error::BuildError;

/// Finds `name` (plus the platform's executable suffix) in the directories of `PATH`.
pub(crate) fn find_in_path(name: &str) -> Option<PathBuf> {
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(&file))
        .find(|candidate| candidate.is_file())
}

/// Runs a program to completion, capturing its output.
///
/// Retries a spawn that fails with ETXTBSY: an executable written a moment ago (the tests' fake
/// rustc scripts) can still be held open by a child another thread is forking.
pub(crate) fn run_capture(program: &Path, args: &[&OsStr]) -> std::io::Result<Output> {
    let mut attempt = 0;
    loop {
        match Command::new(program).args(args).output() {
            Err(e) if e.raw_os_error() == Some(26) && attempt < 20 => {
                attempt += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// Renders a command line for error messages (not for re-parsing: arguments are not quoted).
pub(crate) fn display_command(cmd: &Command) -> String {
    let mut s = cmd.get_program().to_string_lossy().into_owned();
    for arg in cmd.get_args() {
        s.push(' ');
        let arg = arg.to_string_lossy();
        if arg.contains(' ') || arg.contains('"') {
            s.push('\'');
            s.push_str(&arg);
            s.push('\'');
        } else {
            s.push_str(&arg);
        }
    }
    s
}

/// Writes `contents` unless the file already holds exactly that, so an unchanged PTX keeps its
/// mtime and does not make cargo rebuild whatever `include_str!`s it.
pub(crate) fn write_if_changed(path: &Path, contents: &str) -> Result<(), BuildError> {
    if std::fs::read(path).is_ok_and(|old| old == contents.as_bytes()) {
        return Ok(());
    }
    std::fs::write(path, contents).map_err(|e| BuildError::io(path, e))
}
