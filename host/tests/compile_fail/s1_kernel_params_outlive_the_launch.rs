// S1: a kernel that names a lifetime for its slices or outputs could keep them past the launch
// (here in statics) and read or write the host's buffers after they were freed.
use ferrocuda_std::{kernel, Out};
use std::sync::Mutex;

static KEPT_INPUT: Mutex<Option<&'static [u32]>> = Mutex::new(None);
static KEPT_OUTPUT: Mutex<Option<Out<'static, u32>>> = Mutex::new(None);

#[kernel]
pub fn keeps_its_input(x: &'static [u32]) {
    *KEPT_INPUT.lock().unwrap() = Some(x);
}

#[kernel]
pub fn keeps_its_output(out: Out<'static, u32>) {
    *KEPT_OUTPUT.lock().unwrap() = Some(out);
}

#[kernel]
pub fn names_its_lifetime<'a>(x: &'a [u32]) {
    let _ = x;
}

fn main() {}
