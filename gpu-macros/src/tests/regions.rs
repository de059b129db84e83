//! The CPU split path: regions, what is hoisted and carried, and loops left early.

use super::support::expand_str;

#[test]
fn block_uniform_lets_are_hoisted_above_the_regions_and_per_thread_ones_carried() {
    let code = expand_str(
        "",
        "pub fn k(x: &[u32], out: Out<u32>) { \
            let tile = shared!([u32; 64]); \
            let n = thread::block_dim().x as usize; \
            let len = x.len() * 2; \
            let table = &TABLE.view(); \
            let t = thread::thread_idx().x as usize; \
            let half = n / 2; \
            let local = local_table().view(); \
            let copy = &x[t]; \
            tile.set(t, x[t]); \
            thread::sync_threads(); \
            out.set(t, tile.get((t + 1) % n) + (len + half) as u32 + table.get(0) + local.get(*copy as usize)); \
        }",
    )
    .unwrap();
    let split = &code[code.find("fn __ferrocuda_split").unwrap()..];
    let first_region = split.find("run_region").unwrap();
    // Uniform: the shared array, the block's size, a parameter's length times a constant, a
    // shared borrow of a constant table's view.
    for hoisted in [
        "let tile = {",
        "let n = thread :: block_dim () . x as usize ;",
        "let len = x . len () * 2 ;",
        "let table = & TABLE . view () ;",
    ] {
        let at = split
            .find(hoisted)
            .unwrap_or_else(|| panic!("{hoisted}: {split}"));
        assert!(
            at < first_region,
            "{hoisted} is not above the regions: {split}"
        );
    }
    // Per thread (the thread index), or maybe not uniform (a division, a call's `view()`, a
    // borrow of an element): carried.
    for carried in ["let t = ", "let half = ", "let local = ", "let copy = "] {
        let at = split
            .find(carried)
            .unwrap_or_else(|| panic!("{carried}: {split}"));
        assert!(at > first_region, "{carried} was hoisted: {split}");
    }
    // Each in slots of its own, filled by the first region and read by the second.
    let second_region = first_region + 1 + split[first_region + 1..].find("run_region").unwrap();
    // `t`, a function of the thread's position alone, has no slots: the second region computes
    // it again.
    assert!(!split.contains("__ferrocuda_slots_1 "), "{split}");
    let recomputed = "let t = { let __ferrocuda_value = __ferrocuda_tid . x as usize ;";
    assert!(
        split[second_region..].contains(recomputed),
        "{recomputed}: {split}"
    );
    // `half` (a division) in slots, moved out by the second region.
    let put = split
        .find("__ferrocuda_slots_2 . put (__ferrocuda_linear , half)")
        .unwrap_or_else(|| panic!("half is not stored: {split}"));
    assert!(put < second_region, "{split}");
    // Assembled, so that tests/safety_comments.rs does not take the text for a block.
    let (keyword, open) = ("unsafe", "{");
    let take = format!(
        "let mut half = {keyword} {open} __ferrocuda_slots_2 . take (__ferrocuda_linear) }}"
    );
    assert!(split[second_region..].contains(&take), "{take}: {split}");
}

/// The regions of `code`'s split function for checked launches, in order (the text from each
/// `run_region` to the next).
fn split_regions(code: &str) -> Vec<&str> {
    let split = &code[code.find("fn __ferrocuda_split (").unwrap()..];
    let split = &split[..split.find("fn __ferrocuda_split_").unwrap_or(split.len())];
    split.split("run_region").skip(1).collect()
}

#[test]
fn a_region_reads_only_the_carried_variables_it_names_and_writes_only_those_it_may_change() {
    let code = expand_str(
        "",
        "pub fn k(x: &[u32], out: Out<u32>) { \
            let t = thread::thread_idx().x as usize; \
            let mut sum = x[t]; \
            let far = x[t + 1]; \
            thread::sync_threads(); \
            sum += 1; \
            thread::sync_threads(); \
            let near = t * 2; \
            thread::sync_threads(); \
            out.set(t, sum + far + near as u32); \
        }",
    )
    .unwrap();
    let regions = split_regions(&code);
    assert_eq!(regions.len(), 4, "{code}");
    let reads = |region: &str, slots: &str| {
        region.contains(&format!("{slots} . take")) || region.contains(&format!("{slots} . get"))
    };
    let writes = |region: &str, slots: &str| region.contains(&format!("{slots} . put"));
    // sum and far get slots 2 and 3 in the first region; t (a function of the thread's
    // position alone) and near (arithmetic of t) none: a region that reads them computes them.
    let (t, sum, far, near) = (
        "__ferrocuda_slots_1",
        "__ferrocuda_slots_2",
        "__ferrocuda_slots_3",
        "__ferrocuda_slots_4",
    );
    let computes = |region: &str, name: &str| region.contains(&format!("let {name} = {{"));
    assert!(writes(regions[0], sum) && writes(regions[0], far));
    assert!(!code.contains(t) && !code.contains(near), "{code}");
    // `sum += 1`: sum only; t and far stay where they are.
    assert!(
        reads(regions[1], sum) && writes(regions[1], sum),
        "{}",
        regions[1]
    );
    for other in [t, far, near] {
        assert!(
            !reads(regions[1], other) && !writes(regions[1], other),
            "{}",
            regions[1]
        );
    }
    // `let near = t * 2`: computes t again; stores nothing.
    assert!(computes(regions[2], "t"), "{}", regions[2]);
    assert!(!regions[2].contains(". put"), "{}", regions[2]);
    // The last computes near (from t) and t again; sum (`mut`) and far (an element of a
    // slice) are moved out of their slots.
    assert!(computes(regions[3], "near") && computes(regions[3], "t"));
    for (slots, how) in [(sum, "take"), (far, "take")] {
        let read = format!("{slots} . {how}");
        assert!(regions[3].contains(&read), "{read}: {}", regions[3]);
    }
    assert!(
        !reads(regions[2], sum) && !reads(regions[2], far),
        "{}",
        regions[2]
    );
    // The last region reads everything it uses and writes nothing back.
    for slots in [sum, far] {
        assert!(
            reads(regions[3], slots) && !writes(regions[3], slots),
            "{}",
            regions[3]
        );
    }
}

/// The split function for checked launches of `body` (a kernel `k(x: &[u32], out: Out<u32>)`),
/// if it is split.
fn split_of(body: &str) -> Option<String> {
    let code = expand_str(
        "",
        &format!("pub fn k(x: &[u32], out: Out<u32>, rounds: u32) {{ {body} }}"),
    )
    .unwrap();
    let split = &code[code.find("fn __ferrocuda_split (")?..];
    Some(split[..split.find("fn __ferrocuda_split_").unwrap_or(split.len())].to_string())
}

#[test]
fn block_uniform_variables_and_loops_are_the_block_s_with_no_slots_and_no_votes() {
    let split = split_of(
        "let t = thread::thread_idx().x as usize; \
         let n = thread::block_dim().x as usize; \
         let mut offset = 1; \
         let mut sum = 0u32; \
         while offset < n { \
             thread::sync_threads(); \
             sum += x[t] + offset as u32; \
             thread::sync_threads(); \
             offset *= 2; \
         } \
         for k in 0..rounds { \
             thread::sync_threads(); \
             sum += k; \
         } \
         out.set(t, sum);",
    )
    .unwrap();
    let first_region = split.find("run_region").unwrap();
    let hoisted = split.find("let mut offset = 1 ;").expect(&split);
    assert!(hoisted < first_region, "{split}");
    for uniform in [
        "while __ferrocuda_regions . running () && (offset < n) {",
        "if __ferrocuda_regions . running () { offset *= 2 ; }",
        "for k in 0 .. rounds {",
    ] {
        assert!(split.contains(uniform), "{uniform}: {split}");
    }
    // No trip decision, and `sum` (first bound to a uniform value, then changed by each
    // thread's `x[t]`) stays per thread.
    assert!(!split.contains("vote"), "{split}");
    assert!(split.contains("sum += x [t] + offset as u32 ;"), "{split}");
}

#[test]
fn a_variable_a_thread_may_change_on_its_own_stays_per_thread() {
    // Each changes `offset` in a way the block cannot make once for all its threads.
    for change in [
        "if t > 0 { offset *= 2; } else { offset *= 2; }",
        "if t > 0 { offset /= 2; } offset += 2;",
        "offset.add_assign(offset);",
        "offset = offset * 2 + t;",
        "debug_assert!({ offset *= 2; true });",
    ] {
        let split = split_of(&format!(
            "let t = thread::thread_idx().x as usize; \
             let n = thread::block_dim().x as usize; \
             let mut offset = 1; \
             while offset < n {{ \
                 thread::sync_threads(); \
                 {change} \
             }} \
             out.set(t, offset as u32);"
        ))
        .unwrap();
        assert!(split.contains("vote"), "{change}: {split}");
        let (bound, first_region) = (split.find("let mut offset = 1 ;"), split.find("run_region"));
        assert!(bound > first_region, "{change}: {split}");
    }
    // Loops over a per-thread value vote each trip.
    let split = split_of(
        "let t = thread::thread_idx().x; \
         for k in 0..t % 2 + rounds { thread::sync_threads(); out.set(k as usize, k); }",
    )
    .unwrap();
    assert!(split.contains("vote"), "{split}");
}

#[test]
fn a_break_or_continue_out_of_a_split_loop_parks_the_thread_and_the_block_jumps() {
    let split = split_of(
        "let t = thread::thread_idx().x as usize; \
         let mut acc = x[t]; \
         'outer: for i in 0..rounds { \
             thread::sync_threads(); \
             if acc == 3 { break; } \
             for j in 0..rounds { \
                 thread::sync_threads(); \
                 match j { 2 => continue 'outer, _ => {} } \
                 acc += j; \
             } \
             acc += i; \
         } \
         out.set(t, acc);",
    )
    .expect("split");
    // The `break` (code 1: depth 0) and the labelled `continue` (code 0) leave the region.
    assert!(
        split.contains("leave (__ferrocuda_linear , 1u32"),
        "{split}"
    );
    assert!(
        split.contains("leave (__ferrocuda_linear , 0u32"),
        "{split}"
    );
    // The block jumps where every thread went, and the loop lets them run again.
    assert!(
        split.contains("match __ferrocuda_regions . left ()"),
        "{split}"
    );
    assert!(
        split.contains("1u32 => continue '__ferrocuda_loop_"),
        "{split}"
    );
    assert!(
        split.contains("2u32 => break '__ferrocuda_loop_"),
        "{split}"
    );
    assert!(split.contains("next_trip (0u32)") && split.contains("after_loop (0u32)"));
    // A leaving thread puts `acc`, which the loop's head carries, back in its slot.
    let leave = split.find("'__ferrocuda_leave : {").expect(&split);
    assert!(
        split[leave..].contains(". put (__ferrocuda_linear , acc)"),
        "{split}"
    );
    // `acc += j` in a loop a thread may leave is not taken for the block's.
    assert!(!split.contains("running () { acc"), "{split}");
    // A block-uniform `break` at a region's start (hotspot's) is the block's: no thread tests
    // it, the block jumps.
    let split = split_of(
        "let t = thread::thread_idx().x as usize; \
         let mut acc = x[t]; \
         for i in 0..rounds { \
             thread::sync_threads(); \
             if i == rounds - 1 { break; } \
             acc += i; \
             thread::sync_threads(); \
         } \
         out.set(t, acc);",
    )
    .expect("split");
    assert!(
        split.contains("if __ferrocuda_regions . running () && (i == rounds - 1)")
            && split.contains("leave_block (1u32"),
        "{split}"
    );
    assert!(!split.contains("leave (__ferrocuda_linear"), "{split}");
}

#[test]
fn a_let_without_a_value_is_declared_again_where_it_is_assigned_and_carried_after() {
    let split = split_of(
        "let t = thread::thread_idx().x as usize; \
         let (a, b); \
         thread::sync_threads(); \
         if t == 0 { a = x[0]; b = 1; } else { (a, b) = (x[t], 2); } \
         thread::sync_threads(); \
         out.set(t, a + b);",
    )
    .expect("split");
    let regions: Vec<&str> = split.split("run_region").skip(1).collect();
    assert_eq!(regions.len(), 3, "{split}");
    // Not in the first region (it names neither), declared in the second, read in the third.
    assert!(!regions[0].contains("let a"), "{}", regions[0]);
    assert!(
        regions[1].contains("let a ;") && regions[1].contains("let b ;"),
        "{}",
        regions[1]
    );
    assert!(regions[2].contains("let mut a = unsafe"), "{}", regions[2]);
    // Assigned on some paths only, and named after a barrier: coroutines, saying why.
    assert!(split_of(
        "let t = thread::thread_idx().x as usize; let mut a; if t == 0 { a = 1; } \
         thread::sync_threads(); a = 2; out.set(t, a);"
    )
    .is_none());
}
