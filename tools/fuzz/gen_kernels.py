#!/usr/bin/env python3
"""Random kernels for the differential test of the CPU executor's split path (issue 29).

R1-R3 of issue 29 were three bugs of one kind: the split path (the kernel cut at its barriers)
and the coroutine path disagreeing. This writes kernels that combine the shapes that kind of
bug lives in -- barriers in straight code, in split `for` and `while` loops and in branches;
shadowed parameters and locals; `let` without a value (assigned in the same region, after a
barrier, in every trip of a loop, as a tuple); SCREAMING_CASE locals; early `return`; `break`,
`continue` and `return` out of loops with barriers on block-uniform conditions (in an `if`, a
`match`, labelled out of nested loops) and `continue` on per-thread ones with no barrier after
it in the trip; block-uniform and per-thread values; shared arrays; warp shuffles and votes --
tensor-core `mma` statements (tools/fuzz/gen_mma.py: about half the kernels) and warps' `mma_tiles`
products of shared windows (tools/fuzz/gen_mma_tiles.py) -- each
deterministic (wrapping arithmetic, no race, no division by a variable, integer-valued `mma`), so
every machine must give the same bits. tests/fuzz_split_path.rs runs each on the split path, the
coroutine path and the PTX emulator.

    tools/fuzz/gen_kernels.py --seed 1 --count 200 > fuzz-kernels/src/corpus.rs

Every kernel has the signature `(x: &[u32], n: u32, out: Out<u32>)`, runs in blocks of 64
threads (two warps) and writes `out[i]` for its thread.
"""

import argparse
import random

from gen_mma_tiles import MmaTilesStatements

BLOCK = 64


class Gen(MmaTilesStatements):
    def __init__(self, rng):
        self.rng = rng
        self.fresh = 0
        # Per-thread u32 locals in scope (immutable, readable), and block-uniform ones.
        self.thread_vals = ["t", "acc"]
        self.uniform_vals = ["n"]

    def name(self, prefix):
        self.fresh += 1
        return f"{prefix}{self.fresh}"

    def const(self):
        return str(self.rng.choice([1, 2, 3, 5, 7, 11, 13, 31, 64, 255, 1000, 0x9E37_79B9]))

    def uniform_expr(self):
        r = self.rng
        a = r.choice(self.uniform_vals)
        return r.choice([
            f"{a}.wrapping_add({self.const()})",
            f"{a}.wrapping_mul({self.const()})",
            f"({a} ^ {self.const()})",
            f"({a} % {r.choice([3, 4, 5, 7])})",
            f"(thread::block_dim().x).wrapping_add({a})",
            f"{a}.rotate_left({r.randrange(32)})",
            f"(x.len() as u32).wrapping_add({a})",
        ])

    def thread_expr(self):
        r = self.rng
        a = r.choice(self.thread_vals)
        b = r.choice(self.thread_vals + self.uniform_vals)
        return r.choice([
            f"{a}.wrapping_add({b})",
            f"{a}.wrapping_mul({self.const()}).wrapping_add({b})",
            f"({a} ^ {b}.rotate_left({r.randrange(32)}))",
            f"x[({a} as usize) % x.len()].wrapping_add({b})",
            f"if {a} % 2 == 0 {{ {b} }} else {{ {a}.wrapping_sub({b}) }}",
        ])

    def acc_update(self):
        return f"acc = {self.thread_expr()};"

    # ---- statements ------------------------------------------------------------------------

    def stmt_let(self, out):
        v = self.name("v")
        out.append(f"let {v} = {self.thread_expr()};")
        self.thread_vals.append(v)

    def stmt_shadow(self, out):
        # Shadow a parameter or an earlier local with a value computed from it.
        target = self.rng.choice(["n"] + self.thread_vals[2:])
        if target == "n":
            value = self.rng.choice([f"(n & 0xff) * {self.rng.randrange(2, 5)}", self.uniform_expr()])
            out.append(f"let n = {value};")
        else:
            out.append(f"let {target} = {target}.wrapping_mul({self.const()}).wrapping_add(t);")

    def stmt_let_without_value(self, out):
        w = self.name("w")
        cond = self.rng.choice(["t % 2 == 0", "n % 2 == 0", f"acc > {self.const()}"])
        out.append(f"let {w}: u32;")
        out.append(f"if {cond} {{ {w} = {self.thread_expr()}; }} else {{ {w} = {self.const()}; }}")
        out.append(f"acc ^= {w};")

    def stmt_uniform_let(self, out):
        u = self.name("u")
        # Plain arithmetic (`n + 3`, which cannot overflow for these n) as well as wrapping
        # calls: a plain binary expression of uniform names is what the split path hoists.
        value = self.rng.choice([
            f"({self.rng.choice(self.uniform_vals)} & 0xffff) + {self.rng.randrange(1, 9)}",
            self.uniform_expr(),
        ])
        out.append(f"let {u} = {value};")
        self.uniform_vals.append(u)

    def stmt_guarded(self, out):
        # A block-uniform early return guarding a value that would overflow without it.
        c = self.rng.choice([1, 6, 14])
        g = self.name("g")
        out.append(f"if n < {c} {{")
        out.append("    if i < out.len() { out.set(i, acc ^ 0xbeef); }")
        out.append("    return;")
        out.append("}")
        out.append(f"let {g} = n - {c};")
        self.uniform_vals.append(g)

    def stmt_screaming(self, out):
        k, v = self.name("K"), self.name("v")
        out.append(f"let mut {k} = {self.const()}u32;")
        # `t + K`: a value of the thread's position and a "constant", which the split path may
        # recompute instead of carrying (t < 64 and K < 2^32 - 64: no overflow).
        out.append(f"let {v} = t + {k};")
        out.append(f"{k} = {k}.wrapping_mul({self.const()});")
        self.thread_vals.append(v)
        # Read after a later barrier, if one comes.
        out.append(f"acc = acc.wrapping_add({k});")

    def stmt_barrier(self, out):
        out.append("thread::sync_threads();")

    def stmt_shared(self, out):
        # Every thread writes its own element, the block meets, each reads another's, and the
        # block meets again before the tile is written anew.
        off = self.rng.randrange(1, BLOCK)
        out.append("tile.set(t as usize, acc);")
        out.append("thread::sync_threads();")
        out.append(f"acc = acc.wrapping_add(tile.get(((t + {off}) % {BLOCK}) as usize));")
        out.append("thread::sync_threads();")

    def stmt_warp(self, out):
        r = self.rng
        op = r.choice([
            f"acc = acc.wrapping_add(warp::shfl_xor_sync(u32::MAX, acc, {1 << r.randrange(5)}));",
            f"acc ^= warp::shfl_down_sync(u32::MAX, acc, {r.randrange(1, 32)});",
            f"acc = acc.wrapping_add(warp::ballot_sync(u32::MAX, acc % 3 == 0));",
            f"if warp::any_sync(u32::MAX, acc % {r.choice([5, 7, 64])} == 0) {{ acc = acc.wrapping_add(1); }}",
        ])
        out.append(op)

    def stmt_if(self, out, depth):
        cond = self.rng.choice(["t % 3 == 0", "acc % 2 == 1", f"t < {self.rng.randrange(BLOCK)}"])
        body = []
        saved = list(self.thread_vals)
        for _ in range(self.rng.randrange(1, 3)):
            self.simple(body, depth + 1)
        self.thread_vals = saved
        out.append(f"if {cond} {{")
        out.extend("    " + s for s in body)
        out.append("}")

    def stmt_uniform_if_barrier(self, out):
        # A barrier inside an `if` on a block-uniform condition (not a divergence).
        out.append(f"if n % {self.rng.choice([2, 3])} == 0 {{")
        out.append(f"    {self.acc_update()}")
        out.append("    thread::sync_threads();")
        out.append("}")

    def stmt_for(self, out, depth):
        k = self.name("k")
        bound = self.rng.choice(["n % 4", "3u32", f"{self.uniform_expr()} % 5"])
        body = []
        saved_t, saved_u, saved_m = list(self.thread_vals), list(self.uniform_vals), self.mma_scope()
        self.uniform_vals.append(k)
        self.loop_body(body, depth, k)
        self.thread_vals, self.uniform_vals = saved_t, saved_u
        self.mma_restore(saved_m)
        out.append(f"for {k} in 0..{bound} {{")
        out.extend("    " + s for s in body)
        out.append("}")

    def stmt_while(self, out, depth):
        k = self.name("k")
        out.append(f"let mut {k} = 0u32;")
        bound = self.rng.choice(["n % 3", "2u32"])
        body = []
        saved, saved_m = list(self.thread_vals), self.mma_scope()
        self.loop_body(body, depth, k)
        self.thread_vals = saved
        self.mma_restore(saved_m)
        out.append(f"while {k} < {bound} {{")
        out.append(f"    {k} += 1;")
        out.extend("    " + s for s in body)
        out.append("}")

    def leave(self, k, label=None):
        """A `break`, `continue` or `return` out of the loop of `k`, on a block-uniform
        condition, in one of several shapes."""
        r = self.rng
        c = r.randrange(3)
        jump = r.choice(["break", "continue"]) + (f" {label}" if label else "")
        shape = r.random()
        if shape < 0.4:
            return [f"if {k} == {c} {{ {jump}; }}"]
        if shape < 0.6:
            # Inside an `if` on a per-thread condition that every thread meets.
            return [f"if acc != 7 || t < {BLOCK} {{", f"    if {k} == {c} && n % 2 == {r.randrange(2)} {{ {jump}; }}", "}"]
        if shape < 0.8:
            return [f"match {k} {{", f"    {c} => {jump},", "    _ => acc = acc.wrapping_add(1),", "}"]
        # Every thread returns, writing first.
        return [f"if {k} == {c} && n % 3 == {r.randrange(3)} {{",
                "    if i < out.len() { out.set(i, acc ^ 0xface); }",
                "    return;",
                "}"]

    def stmt_assigned_after_barrier(self, out):
        # `let` without a value declared before a barrier, assigned after it (as a tuple or
        # one name), read later.
        a, b = self.name("w"), self.name("w")
        cond = self.rng.choice(["t % 2 == 0", "n % 2 == 0", f"acc > {self.const()}"])
        if self.rng.random() < 0.5:
            out.append(f"let ({a}, {b}): (u32, u32);")
            out.append("thread::sync_threads();")
            out.append(f"if {cond} {{ ({a}, {b}) = ({self.thread_expr()}, t); }} else {{ {a} = {self.const()}; {b} = acc; }}")
        else:
            out.append(f"let {a};")
            out.append(f"let {b}: u32;")
            out.append("thread::sync_threads();")
            out.append(f"match t % 3 {{ 0 => {{ {a} = {self.thread_expr()}; {b} = 1; }} 1 => {{ {a} = acc; {b} = n; }} _ => {{ {a} = {self.const()}u32; {b} = t; }} }}")
        if self.rng.random() < 0.5:
            out.append("thread::sync_threads();")
        out.append(f"acc = acc.wrapping_add({a}) ^ {b};")

    def loop_body(self, body, depth, k, label=None):
        r = self.rng
        for _ in range(r.randrange(1, 4)):
            choice = r.random()
            if choice < 0.3:
                self.stmt_barrier(body)
            elif choice < 0.5:
                body.extend(self.leave(k, label if r.random() < 0.5 else None))
            elif choice < 0.6:
                self.stmt_shared(body)
            elif choice < 0.7 and self.mma_enabled and r.random() < 0.6:
                self.mma_in_split_loop(body)
            elif choice < 0.7:
                # Assigned in every trip after a barrier, declared before the loop.
                body.append("thread::sync_threads();")
                body.append(f"carried = {self.thread_expr()};")
                body.append("acc ^= carried;")
                self.uses_carried = True
            else:
                self.simple(body, depth + 1)
        body.append(f"acc = acc.wrapping_add({k});")
        if "thread::sync_threads();" not in body:
            body.append("thread::sync_threads();")
        if r.random() < 0.25:
            # A per-thread `continue` with no barrier after it in the trip: every thread meets
            # the others at the next trip's decision (not a divergence).
            body.append(f"if t % {r.choice([2, 3, 5])} == 0 {{ continue; }}")
            body.append(f"acc ^= {k}.wrapping_mul(3);")

    def stmt_labelled_nest(self, out):
        # Nested split loops left from the inner one by a labelled `break`/`continue`.
        a, b = self.name("k"), self.name("k")
        label = f"'l{self.fresh}"
        saved_t, saved_u = list(self.thread_vals), list(self.uniform_vals)
        self.uniform_vals += [a, b]
        out.append(f"{label}: for {a} in 0..{self.rng.choice(['n % 4', '3u32'])} {{")
        out.append(f"    for {b} in 0..2u32 {{")
        out.append("        thread::sync_threads();")
        inner = []
        self.simple(inner, 1)
        out.extend("        " + s for s in inner)
        jump = self.rng.choice(["break", "continue"])
        out.append(f"        if {a} == {self.rng.randrange(3)} && {b} == {self.rng.randrange(2)} {{ {jump} {label}; }}")
        out.append(f"        acc = acc.wrapping_add({a} ^ {b});")
        out.append("        thread::sync_threads();")
        out.append("    }")
        out.append(f"    acc = acc.rotate_left({a} + 1);")
        out.append("}")
        self.thread_vals, self.uniform_vals = saved_t, saved_u

    def stmt_return(self, out):
        # A block-uniform early return: every thread of the block leaves, writing first.
        out.append(f"if n % {self.rng.choice([5, 7, 11])} == {self.rng.randrange(3)} {{")
        out.append("    if i < out.len() { out.set(i, acc ^ 0xdead); }")
        out.append("    return;")
        out.append("}")

    def simple(self, out, depth):
        r = self.rng.random()
        if r < 0.35:
            out.append(self.acc_update())
        elif r < 0.6:
            self.stmt_let(out)
        elif r < 0.75:
            self.stmt_shadow(out)
        elif r < 0.83 or depth > 0:
            self.stmt_let_without_value(out)
        elif r < 0.9:
            self.stmt_assigned_after_barrier(out)
        else:
            self.stmt_if(out, depth)

    def top(self, out):
        if self.no_barriers:
            return self.top_without_barriers(out)
        if self.mma_enabled and self.rng.random() < 0.35:
            return self.mma_top(out)
        r = self.rng.random()
        if r < 0.25:
            self.simple(out, 0)
        elif r < 0.35:
            self.stmt_barrier(out)
        elif r < 0.45:
            self.stmt_shared(out)
        elif r < 0.52:
            self.stmt_warp(out)
        elif r < 0.62:
            self.stmt_for(out, 0)
        elif r < 0.70:
            self.stmt_while(out, 0)
        elif r < 0.76:
            self.stmt_return(out)
        elif r < 0.815:
            self.stmt_screaming(out)
        elif r < 0.84:
            # Keeps the kernel on coroutines (a barrier in an `if`): rarer, since then the
            # test compares the coroutine path with itself.
            self.stmt_uniform_if_barrier(out)
        elif r < 0.90:
            self.stmt_uniform_let(out)
        elif r < 0.93:
            self.stmt_guarded(out)
        elif r < 0.97:
            self.stmt_labelled_nest(out)
        else:
            self.stmt_if(out, 0)

    def top_without_barriers(self, out):
        """After a whole warp returned: statements no thread meets a barrier in."""
        r = self.rng.random()
        if r < 0.45:
            self.mma_top(out)
        elif r < 0.7:
            self.simple(out, 1)
        elif r < 0.8:
            self.stmt_warp(out)
        elif r < 0.9:
            self.stmt_uniform_let(out)
        elif r < 0.95:
            self.stmt_screaming(out)
        else:
            self.stmt_return(out)

    def kernel(self, index):
        self.thread_vals = ["t", "acc"]
        self.uniform_vals = ["n"]
        self.uses_carried = False
        self.mma_reset(self.rng.random() < 0.5)
        body = []
        for _ in range(self.rng.randrange(3, 10)):
            self.top(body)
        if self.uses_carried:
            # A `let` without a value before the loops that assign it in every trip.
            body.insert(0, "let mut carried: u32;")
        if self.staged:
            # The shared arrays `mma_tiles` reads, every element written before a barrier.
            body[0:0] = self.prologue()
        lines = [
            f"/// Generated kernel {index}.",
            "#[kernel]",

            f"pub fn fuzz_{index:04}(x: &[u32], n: u32, out: Out<u32>) {{",
            f"    let tile = shared!([u32; {BLOCK}]);",
            "    let t = thread::thread_idx().x;",
            "    let i = thread::index_1d();",
            "    let mut acc = x[i % x.len()];",
        ]
        lines += ["    " + s for s in body]
        lines += ["    if i < out.len() {", "        out.set(i, acc);", "    }", "}", ""]
        return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=200)
    args = parser.parse_args()
    gen = Gen(random.Random(args.seed))
    print(f"// Generated by tools/fuzz/gen_kernels.py --seed {args.seed} --count {args.count}: do not edit.")
    print("// Kernels that ever disagreed between machines are kept in fuzz-kernels/src/found.rs.")
    print()
    kernels, with_mma, with_tiles = [], [], []
    for k in range(args.count):
        kernels.append(gen.kernel(k))
        if gen.uses_mma:
            with_mma.append(k)
        if gen.uses_tiles:
            with_tiles.append(k)
    print("\n".join(kernels))
    names = ", ".join(f"fuzz_{k:04}" for k in range(args.count))
    print("/// Every generated kernel, in order.")
    print("#[cfg(not(target_arch = \"nvptx64\"))]")
    print(f"pub const GENERATED: &[FuzzKernel] = &[{names}];")
    names = ", ".join(f"fuzz_{k:04}" for k in with_mma)
    print("/// The generated kernels with tensor-core `mma` statements.")
    print("#[cfg(not(target_arch = \"nvptx64\"))]")
    print(f"pub const WITH_MMA: &[FuzzKernel] = &[{names}];")
    names = ", ".join(f"fuzz_{k:04}" for k in with_tiles)
    print("/// The generated kernels with `mma_tiles` statements.")
    print("#[cfg(not(target_arch = \"nvptx64\"))]")
    print(f"pub const WITH_MMA_TILES: &[FuzzKernel] = &[{names}];")


if __name__ == "__main__":
    main()
