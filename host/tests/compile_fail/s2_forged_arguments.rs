// S2: a safe impl of the argument traits could claim more elements than its memory has, or lend
// read-only memory for an `Out<T>`; the kernel then read or wrote past it.
use ferrocuda_host::{Arg, InputData};

struct Liar;

impl InputData<u64> for Liar {
    fn len(&self) -> usize {
        1 << 20
    }
    fn input_arg(&self) -> Arg<'_> {
        Arg::HostSlice {
            bytes: &[0u8; 8],
            len: 1 << 20,
        }
    }
}

fn main() {}
