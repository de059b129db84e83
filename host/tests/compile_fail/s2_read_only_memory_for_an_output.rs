// S2, with today's API: an output can only be memory borrowed `&mut`, and the views cannot be
// made or taken apart outside ferrocuda.
use ferrocuda_host::{InputArg, InputData, OutputArg, OutputData};

static TABLE: [u32; 4] = [1, 2, 3, 4];

struct ReadOnly;

impl OutputData<u32> for ReadOnly {
    fn len(&self) -> usize {
        4
    }
    fn output_arg(&mut self) -> OutputArg<'_, u32> {
        TABLE.input_arg()
    }
}

fn forged() -> InputArg<'static, u64> {
    let view = TABLE.input_arg();
    InputArg { arg: view.arg }
}

fn main() {
    let _ = forged();
}
