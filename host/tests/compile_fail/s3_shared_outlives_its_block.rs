// S3: a `Shared` handle kept in a thread-local read another block's (or a freed) arena later.
use ferrocuda_std::{dynamic_shared, kernel, shared, Out, Shared};
use std::cell::Cell;

std::thread_local! {
    static TILE: Cell<Option<Shared<u32>>> = const { Cell::new(None) };
}

#[kernel]
pub fn keeps_its_tile(out: Out<u32>) {
    let tile = shared!([u32; 32]);
    TILE.with(|kept| kept.set(Some(tile)));
    let _ = out;
}

#[kernel]
pub fn keeps_its_dynamic_memory(out: Out<u32>) {
    let counts = dynamic_shared::<u32>();
    TILE.with(|kept| kept.set(Some(counts)));
    let _ = out;
}

// Outside a kernel there is no block to borrow: `dynamic_shared` wants its scope.
fn helper() -> Shared<'static, u32> {
    dynamic_shared::<u32>()
}

fn main() {
    let _ = helper();
}
