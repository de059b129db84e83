// S4: running a block by hand and catching its unwind without the executor's cleanup left
// suspended threads that a later `sync_threads()` resumed on a dead stack.
use ferrocuda_std::cpu::{run_block, take_current, BlockContext};
use ferrocuda_std::{thread, Dim3};

fn main() {
    let block = BlockContext {
        block_idx: Dim3::new(0, 0, 0),
        block_dim: Dim3::new(2, 1, 1),
        grid_dim: Dim3::new(1, 1, 1),
        dynamic_shared_bytes: 0,
        shared_limit_bytes: 0,
        checked: false, deadline: None, stack_bytes: 0, coroutines: false, blocks: 1,
    };
    let _ = std::panic::catch_unwind(|| {
        run_block(&block, || {
            thread::sync_threads();
            panic!("leaves the other thread suspended");
        })
    });
    run_block(&block, thread::sync_threads);
    let _ = take_current();
}
