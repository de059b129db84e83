//! Warp-level collectives against the PTX ISA's definitions: `match.any.sync`/`match.all.sync`
//! (which lanes of the mask hold the same value), `activemask` (the lanes executing together),
//! and lanes meeting at different `shfl.sync` instructions. Expected values are computed here
//! from the definitions, lane by lane.

mod support;

use ferrocuda_ptx_emu::Module;
use support::*;

/// A one-block kernel `k(in, out)`: `%r1` is the lane's `.b32` input and `%rd1` its `.b64` one
/// (`in[tid]`, 8 bytes each); `body` leaves two `.b32` results in `%r8` and `%r9`, stored to
/// `out[2 * tid]` and `out[2 * tid + 1]`.
fn kernel(body: &str) -> Module {
    let ptx = format!(
        ".version 7.0\n.target sm_70\n.address_size 64\n\
         .visible .entry k(.param .u64 in, .param .u64 out)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<16>;\n.reg .b64 %rd<16>;\n\
         mov.u32 %r10, %tid.x;\nmov.u32 %r8, 0;\nmov.u32 %r9, 0;\n\
         ld.param.u64 %rd10, [in];\nmul.wide.u32 %rd11, %r10, 8;\nadd.s64 %rd10, %rd10, %rd11;\n\
         ld.global.u64 %rd1, [%rd10];\ncvt.u32.u64 %r1, %rd1;\n\
         {body}\n\
         ld.param.u64 %rd12, [out];\nmul.wide.u32 %rd13, %r10, 8;\nadd.s64 %rd12, %rd12, %rd13;\n\
         st.global.v2.u32 [%rd12], {{%r8, %r9}};\nret;\n}}\n"
    );
    Module::parse(&ptx).unwrap_or_else(|e| panic!("{body}: {e}"))
}

/// Runs `module` on one block of `inputs.len()` threads; each thread's two results.
fn run(module: &Module, inputs: &[u64]) -> Vec<[u32; 2]> {
    let d = Device::new();
    let input = d.upload(inputs);
    let out = d.zeros::<u32>(2 * inputs.len());
    d.launch(
        module,
        "k",
        [1, 1, 1],
        [inputs.len() as u32, 1, 1],
        0,
        &[value(input.addr), value(out.addr)],
    )
    .unwrap_or_else(|f| panic!("{f}"));
    d.download::<u32>(out)
        .chunks(2)
        .map(|c| [c[0], c[1]])
        .collect()
}

/// The PTX ISA's `match.any`: the lanes of `members` whose value equals lane `l`'s.
fn match_any(values: &[u64], members: u32, l: usize) -> u32 {
    (0..values.len())
        .filter(|&k| members & (1 << k) != 0 && values[k] == values[l])
        .fold(0, |m, k| m | 1 << k)
}

/// Lane values with repeats, among them `.b64` values equal in their low halves only.
fn values(n: usize) -> Vec<u64> {
    (0..n)
        .map(|k| match k % 4 {
            0 => 7,
            1 => 7 | 1 << 40,
            2 => 0xffff_ffff,
            _ => k as u64 / 8,
        })
        .collect()
}

#[test]
fn match_any_groups_the_lanes_with_equal_values() {
    let inputs = values(32);
    let b32 = kernel("match.any.sync.b32 %r8, %r1, -1;");
    let b64 = kernel("match.any.sync.b64 %r8, %rd1, -1;");
    let low: Vec<u64> = inputs.iter().map(|&v| v & 0xffff_ffff).collect();
    for (l, got) in run(&b32, &inputs).iter().enumerate() {
        assert_eq!(got[0], match_any(&low, u32::MAX, l), ".b32 lane {l}");
    }
    for (l, got) in run(&b64, &inputs).iter().enumerate() {
        assert_eq!(got[0], match_any(&inputs, u32::MAX, l), ".b64 lane {l}");
    }
}

#[test]
fn match_all_gives_the_mask_and_true_only_when_every_lane_agrees() {
    // The lanes of a mask of the even lanes: equal values, then one that differs.
    let evens = "mov.u32 %r2, 0x55555555;\nand.b32 %r3, %r10, 1;\nsetp.ne.u32 %p2, %r3, 0;\n@%p2 bra SKIP;\n\
                 match.all.sync.b64 %r8|%p1, %rd1, %r2;\nselp.u32 %r9, 1, 0, %p1;\nSKIP:";
    let evens = kernel(evens);
    let same = vec![42u64; 32];
    let mut one_differs = same.clone();
    one_differs[6] = 42 | 1 << 33;
    let whole = kernel(
        "mov.u32 %r2, -1;\nmatch.all.sync.b64 %r8|%p1, %rd1, %r2;\nselp.u32 %r9, 1, 0, %p1;",
    );
    assert!(run(&whole, &same).iter().all(|r| *r == [u32::MAX, 1]));
    assert!(run(&whole, &one_differs).iter().all(|r| *r == [0, 0]));
    for (l, got) in run(&evens, &same).iter().enumerate() {
        let want = if l % 2 == 0 { [0x5555_5555, 1] } else { [0, 0] };
        assert_eq!(*got, want, "lane {l}, equal values");
    }
    for (l, got) in run(&evens, &one_differs).iter().enumerate() {
        assert_eq!(*got, [0, 0], "lane {l}, lane 6 differs");
    }
    // An odd lane's value does not count against the even lanes' mask.
    let mut odd_differs = same.clone();
    odd_differs[7] = 1;
    assert_eq!(run(&evens, &odd_differs)[0], [0x5555_5555, 1]);
}

/// `match.sync` waits for the non-exited threads of its mask (PTX ISA): in a 10-thread block a
/// full mask names 22 lanes that do not exist, and the result names only the 10 that do.
#[test]
fn match_in_a_partial_warp_counts_only_the_lanes_that_exist() {
    let inputs: Vec<u64> = (0..10).map(|k| k % 2).collect();
    let any = kernel("match.any.sync.b32 %r8, %r1, -1;");
    for (l, got) in run(&any, &inputs).iter().enumerate() {
        assert_eq!(got[0], match_any(&inputs, 0x3ff, l), "lane {l}");
    }
    let all = kernel("match.all.sync.b32 %r8|%p1, %r1, -1;\nselp.u32 %r9, 1, 0, %p1;");
    assert!(run(&all, &[3; 10]).iter().all(|r| *r == [0x3ff, 1]));
    // Lanes 5.. exit first: the rest match among themselves.
    let after_exit = kernel(
        "setp.ge.u32 %p2, %r10, 5;\n@%p2 exit;\nmatch.all.sync.b32 %r8|%p1, %r1, -1;\nselp.u32 %r9, 1, 0, %p1;",
    );
    let got = run(&after_exit, &[3; 10]);
    assert!(got[..5].iter().all(|r| *r == [0x1f, 1]), "{got:?}");
}

/// `activemask`: lanes in the two arms of a branch each see their own arm's lanes; lanes that
/// left a loop earlier are not active in its later iterations; exited lanes never are.
#[test]
fn activemask_names_the_lanes_executing_together() {
    let arms = kernel(
        "and.b32 %r3, %r10, 1;\nsetp.ne.u32 %p1, %r3, 0;\n@%p1 bra ODD;\n\
         activemask.b32 %r8;\nbra.uni DONE;\n\
         ODD:\nactivemask.b32 %r8;\nactivemask.b32 %r9;\nDONE:",
    );
    for (l, got) in run(&arms, &[0; 32]).iter().enumerate() {
        let want = if l % 2 == 0 {
            [0x5555_5555, 0]
        } else {
            [0xaaaa_aaaa, 0xaaaa_aaaa]
        };
        assert_eq!(*got, want, "lane {l}");
    }
    // Lane l loops l % 4 + 1 times; %r8 keeps the mask of its last iteration, %r9 ORs them.
    let loop_ = kernel(
        "and.b32 %r3, %r10, 3;\nLOOP:\nactivemask.b32 %r8;\nor.b32 %r9, %r9, %r8;\n\
         sub.u32 %r3, %r3, 1;\nsetp.ne.u32 %p1, %r3, -1;\n@%p1 bra LOOP;",
    );
    for (l, got) in run(&loop_, &[0; 32]).iter().enumerate() {
        // In iteration i the lanes with l % 4 >= i are active.
        let last = l % 4;
        let active = |i: usize| (0..32).filter(|k| k % 4 >= i).fold(0u32, |m, k| m | 1 << k);
        assert_eq!(got[0], active(last), "lane {l}: its last iteration");
        assert_eq!(got[1], active(0), "lane {l}: every iteration");
    }
    let after_exit = kernel("setp.ge.u32 %p2, %r10, 20;\n@%p2 exit;\nactivemask.b32 %r8;");
    let got = run(&after_exit, &[0; 32]);
    assert!(got[..20].iter().all(|r| r[0] == 0xf_ffff), "{got:?}");
}

/// Lanes of a warp may meet at different `shfl.sync` instructions with the same mask (PTX ISA,
/// sm_70+): LLVM duplicates a shuffle into both arms of a branch. Each lane must read and write
/// its own instruction's registers (the emulator used the first lane's: found by the split path's
/// differential test, fuzz-kernels' `found_0001`).
#[test]
fn lanes_meet_at_different_shuffle_instructions() {
    let module = kernel(
        "and.b32 %r2, %r10, 1;\nsetp.ne.b32 %p1, %r2, 0;\n@%p1 bra ODD;\n\
         add.u32 %r3, %r10, 100;\nshfl.sync.bfly.b32 %r4, %r3, 1, 0x1f, -1;\nmov.u32 %r8, %r4;\nbra.uni DONE;\n\
         ODD:\nadd.u32 %r6, %r10, 1000;\nshfl.sync.bfly.b32 %r7, %r6, 1, 0x1f, -1;\nmov.u32 %r8, %r7;\nDONE:",
    );
    // Even lane l gets its odd neighbour's l + 1 + 1000; odd lane l its even neighbour's l - 1 + 100.
    for (l, got) in run(&module, &[0; 32]).iter().enumerate() {
        let l = l as u32;
        let want = if l.is_multiple_of(2) {
            l + 1 + 1000
        } else {
            l - 1 + 100
        };
        assert_eq!(got[0], want, "lane {l}");
    }
}
