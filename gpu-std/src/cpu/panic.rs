//! Quiet kernel panics: a panic in kernel code on the CPU executor becomes an error that names
//! the kernel, block and thread, so the default hook's `thread '…' panicked at …` line and
//! backtrace note on stderr would only repeat it, out of context.

use core::cell::RefCell;
use std::boxed::Box;
use std::string::{String, ToString};
use std::sync::Once;

std::thread_local! {
    /// Where the last kernel panic on this OS thread happened, for the executor's error.
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs, once per process, a panic hook that stays silent for panics inside simulated GPU
/// threads (this OS thread is running a block) and records their location for
/// [`take_panic_location`]; every other panic goes to the hook that was installed before.
/// `ferrocuda-host` calls it before each CPU launch.
pub fn quiet_kernel_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if super::context::in_kernel() {
                let location = info.location().map(ToString::to_string);
                LOCATION.with_borrow_mut(|l| *l = location);
            } else {
                previous(info);
            }
        }));
    });
}

/// Takes (and clears) the source location (`file:line:column`) of the last kernel panic on this
/// OS thread, recorded by the hook of [`quiet_kernel_panics`].
pub fn take_panic_location() -> Option<String> {
    LOCATION.with_borrow_mut(Option::take)
}
