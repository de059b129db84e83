"""Tensor-core `mma` statements for tools/fuzz/gen_kernels.py (issue 32).

`#[kernel]` makes a statement `let d = mma(..);` or `d = mma(..);` of the body (or of a split
loop) a block-level step of the split path, and groups consecutive ones none of whose arguments
names what an earlier one of the group assigns; the coroutine path runs each `mma` as a warp
rendezvous, the emulator runs `mma.sync`. These statements are the shapes that treatment has to
get right: `let` and assignment, several independent ones in a row (one group), chained ones (a
later one reading an earlier result, directly, through a shadowed name or through an array:
never one group), the same accumulator assigned twice in a row, shadowed fragments (also by one
of another type), fragments built before a barrier and multiplied after it, `mma` in split `for`
and `while` loops (with barriers, or with only `mma`s), after an early return of whole warps
(never of part of one: that is warp divergence, a bug), and, rarely, inside an `if` on a
block-uniform or warp-uniform condition or in an expression (the kernel stays on coroutines).

Every value is exact on every machine: i8 and u8 inputs with i32 accumulators (m16n8k32,
wrapping), and f16 inputs in -3..=3 with f32 accumulators holding small integers (every sum
exact in f32), read back as integers. A kernel returns its result folded into `acc`.
"""

import copy

# Input families: the element type, its accumulator, and how a u32 `v` becomes an element.
FAMILIES = {
    "i8": ("i32", lambda v: f"({v}) as i8"),
    "u8": ("i32", lambda v: f"({v}) as u8"),
    "f16": ("f32", lambda v: f"f32_to_f16((({v}) % 7) as f32 - 3.0)"),
}
# How a u32 `v` becomes an accumulator element, and how an element `e` becomes a u32.
ACCUMULATORS = {
    "i32": (lambda v: f"({v}) as i32", lambda e: f"{e} as u32"),
    "f32": (lambda v: f"(({v}) % 9) as f32 - 4.0", lambda e: f"{e} as i32 as u32"),
}
# The spellings of the call `#[kernel]` recognises.
CALLS = ["mma", "mma", "mma", "mma", "mma::mma", "ferrocuda_std::mma::mma"]


class MmaStatements:
    """Mixed into `Gen`: `self.rng`, `self.name`, `self.thread_vals`, `self.uniform_vals`,
    `self.acc_update` and `self.stmt_barrier` come from there."""

    def mma_reset(self, enabled):
        self.mma_enabled = enabled
        # Fragments in scope: A and B by family, C (accumulators and results) by accumulator.
        self.frags = {"A": {f: [] for f in FAMILIES}, "B": {f: [] for f in FAMILIES},
                      "C": {a: [] for a in ACCUMULATORS}}
        # The accumulators bound with `let mut` (assignable), by accumulator type.
        self.muts = {a: [] for a in ACCUMULATORS}
        # After a whole warp returned, no thread may meet a barrier (the returned warp never
        # gets there: a divergence the CPU executor reports): only barrier-free statements.
        self.no_barriers = False
        # Inside a split loop: declare fresh names only (shadowing an outer name there keeps
        # the kernel on coroutines; the existing statements do that often enough).
        self.loop_depth = 0
        self.uses_mma = False
        # The fragments the statement being written names (never shadowed before its `mma`).
        self.busy = set()

    def mma_scope(self):
        return copy.deepcopy((self.frags, self.muts))

    def mma_restore(self, saved):
        self.frags, self.muts = saved

    # ---- values ----------------------------------------------------------------------------

    def element_source(self, r, c):
        """A per-thread u32 expression of the element at (`r`, `c`)."""
        rng = self.rng
        v = rng.choice(self.thread_vals + self.uniform_vals)
        return rng.choice([
            f"{v}.rotate_left(({r} * {rng.choice([3, 5, 7])} + {c}) as u32)",
            f"{v} ^ ({r} * 32 + {c}) as u32",
            f"{v}.wrapping_mul({rng.choice([3, 5, 33])}).wrapping_add(({r} ^ {c}) as u32)",
        ])

    def fold(self, d, accum):
        """`acc` updated from every element (or one) of the fragment `d`."""
        to_u32 = ACCUMULATORS[accum][1]
        if self.rng.random() < 0.6:
            return (f"acc = {d}.values.iter().fold(acc, |s, &e| s.rotate_left(5) ^ "
                    f"({to_u32('e')}));")
        j = self.rng.randrange(4)
        return f"acc = acc.wrapping_add({to_u32(f'{d}.values[{j}]')});"

    def call(self, a, b, c):
        return f"{self.rng.choice(CALLS)}(&{a}, &{b}, &{c})"

    # ---- fragments -------------------------------------------------------------------------

    def declare(self, kind, key, name):
        for pool in list(self.frags["A"].values()) + list(self.frags["B"].values()) + \
                list(self.frags["C"].values()) + list(self.muts.values()):
            if name in pool:
                pool.remove(name)
        self.frags[kind][key].append(name)

    def new_name(self, kind, prefix):
        """A fresh name, or (outside split loops, sometimes) an immutable fragment's name in
        scope to shadow, of any type."""
        mutable = {m for pool in self.muts.values() for m in pool}
        olds = [n for pools in self.frags.values() for pool in pools.values() for n in pool
                if n not in mutable and n not in self.busy]
        if self.loop_depth == 0 and olds and self.rng.random() < 0.25:
            return self.rng.choice(olds)
        return self.name(prefix)

    def stmt_frag(self, out, kind, key):
        """`let` of a new A, B (family `key`) or C (accumulator `key`) fragment."""
        if kind == "C" and self.rng.random() < 0.2:
            value = f"FragC::<{key}>::zero()"
        elif kind == "C":
            value = f"FragC::<{key}>::from_fn(|r, c| {ACCUMULATORS[key][0](self.element_source('r', 'c'))})"
        else:
            convert = FAMILIES[key][1]
            value = f"Frag{kind}::<{key}>::from_fn(|r, c| {convert(self.element_source('r', 'c'))})"
        name = self.new_name(kind, {"A": "fa", "B": "fb", "C": "fc"}[kind])
        out.append(f"let {name} = {value};")
        self.declare(kind, key, name)
        self.busy.add(name)
        return name

    def frag(self, out, kind, key, fresh=0.15):
        """A fragment in scope, made first if there is none (or sometimes anyway)."""
        pool = self.frags[kind][key]
        if not pool or self.rng.random() < fresh:
            return self.stmt_frag(out, kind, key)
        name = self.rng.choice(pool)
        self.busy.add(name)
        return name

    def operands(self, out, family=None, fresh=0.15):
        family = family or self.rng.choice(list(FAMILIES))
        accum = FAMILIES[family][0]
        a = self.frag(out, "A", family, fresh)
        b = self.frag(out, "B", family, fresh)
        c = self.frag(out, "C", accum, fresh)
        return family, accum, a, b, c

    def accumulator(self, out, accum):
        """A `let mut` accumulator in scope (declared here if there is none)."""
        if self.muts[accum] and self.rng.random() < 0.7:
            name = self.rng.choice(self.muts[accum])
            self.busy.add(name)
            return name
        name = self.name("cm")
        out.append(f"let mut {name} = FragC::<{accum}>::from_fn(|r, c| "
                   f"{ACCUMULATORS[accum][0](self.element_source('r', 'c'))});")
        self.declare("C", accum, name)
        self.muts[accum].append(name)
        self.busy.add(name)
        return name

    # ---- statements ------------------------------------------------------------------------

    def mma_let(self, out, fold=0.5, ops=None):
        family, accum, a, b, c = ops or self.operands(out)
        # Sometimes the result shadows its own accumulator (`let fc = mma(&fa, &fb, &fc);`).
        shadow = self.loop_depth == 0 and self.rng.random() < 0.15
        d = c if shadow else self.new_name("C", "d")
        out.append(f"let {d} = {self.call(a, b, c)};")
        self.declare("C", accum, d)
        if self.rng.random() < fold:
            out.append(self.fold(d, accum))
        return d, accum

    def mma_assign(self, out):
        family, accum, a, b, _ = self.operands(out)
        m = self.accumulator(out, accum)
        c = m if self.rng.random() < 0.8 else self.frag(out, "C", accum, 0)
        out.append(f"{m} = {self.call(a, b, c)};")
        if self.rng.random() < 0.5:
            out.append(self.fold(m, accum))

    def mma_group(self, out):
        """Two to four independent `mma` statements in a row (one block step on the split
        path): none reads what an earlier one assigns; two may assign the same accumulator."""
        family = self.rng.choice(list(FAMILIES))
        accum = FAMILIES[family][0]
        # Every operand and accumulator first, so that no `let` of one splits the row.
        ops = [self.operands(out, family, fresh=0.1) for _ in range(self.rng.randrange(2, 5))]
        targets = [self.accumulator(out, accum) if self.rng.random() < 0.5 else None for _ in ops]
        written, results = set(), []
        for (_, _, a, b, c), m in zip(ops, targets):
            if m is not None and self.rng.random() < 0.6:
                c = m
            if c in written:
                unwritten = [n for n in self.frags["C"][accum] if n not in written]
                if not unwritten:
                    continue
                c = self.rng.choice(unwritten)
            if m is None:
                m = self.name("d")
                out.append(f"let {m} = {self.call(a, b, c)};")
                self.declare("C", accum, m)
            else:
                out.append(f"{m} = {self.call(a, b, c)};")
            written.add(m)
            results.append(m)
        for d in dict.fromkeys(results):
            if self.rng.random() < 0.7:
                out.append(self.fold(d, accum))

    def mma_chain(self, out):
        """Two or three `mma`s in a row, each reading the one before: never one group."""
        family, accum, a, b, c = self.operands(out)
        shape = self.rng.random()
        steps = self.rng.randrange(2, 4)
        if shape < 0.35:
            # Through fresh (or shadowed) names.
            for _ in range(steps):
                d = self.new_name("C", "d")
                a2, b2 = self.rng.choice(self.frags["A"][family]), self.rng.choice(self.frags["B"][family])
                out.append(f"let {d} = {self.call(a2, b2, c)};")
                self.declare("C", accum, d)
                c = d
        elif shape < 0.55 and self.loop_depth == 0:
            # One name, shadowed by each result.
            d = self.name("fc")
            out.append(f"let {d} = {self.call(a, b, c)};")
            for _ in range(steps - 1):
                out.append(f"let {d} = {self.call(a, b, d)};")
            self.declare("C", accum, d)
            c = d
        elif shape < 0.8:
            m = self.accumulator(out, accum)
            for _ in range(steps):
                out.append(f"{m} = {self.call(a, b, m)};")
            c = m
        else:
            # Through an array of accumulators: each element from the other.
            arr = self.name("cs")
            out.append(f"let mut {arr} = [{c}, FragC::<{accum}>::zero()];")
            for s in range(steps):
                out.append(f"{arr}[{(s + 1) % 2}] = {self.call(a, b, f'{arr}[{s % 2}]')};")
            out.append(self.fold(f"{arr}[0]", accum))
            c = f"{arr}[1]"
        out.append(self.fold(c, accum))

    def mma_across_barrier(self, out):
        """Fragments made in one region, multiplied in a later one (a result folded in a
        third)."""
        ops = self.operands(out, fresh=0.7)
        self.stmt_barrier(out)
        d, accum = self.mma_let(out, fold=0, ops=ops)
        if self.rng.random() < 0.5:
            self.stmt_barrier(out)
        out.append(self.fold(d, accum))

    def warp_return(self, k=None):
        """An early return of whole warps (each warp's lanes all go, or none)."""
        rng = self.rng
        cond = rng.choice([
            "t / 32 == n % 2",
            f"t >= 32 && n % 3 == {rng.randrange(3)}",
            f"t < 32 && n > {rng.choice([3, 10])}",
            "(t >> 5) != (n & 1)",
        ])
        if k is not None:
            cond = f"{k} == {rng.randrange(3)} && {cond}"
        self.no_barriers = True
        return [f"if {cond} {{",
                "    if i < out.len() { out.set(i, acc ^ 0x3a3a); }",
                "    return;",
                "}"]

    def mma_loop(self, out):
        """A split `for` or `while` loop around `mma`s: with a barrier, or (always after a warp
        returned) with `mma`s only, maybe with a warp's return inside."""
        barriers = not self.no_barriers and self.rng.random() < 0.6
        k = self.name("k")
        saved = (list(self.thread_vals), list(self.uniform_vals), self.mma_scope())
        self.uniform_vals.append(k)
        self.loop_depth += 1
        body = []
        for _ in range(self.rng.randrange(1, 4)):
            self.busy = set()
            r = self.rng.random()
            if r < 0.4:
                self.mma_assign(body)
            elif r < 0.6:
                self.mma_let(body)
            elif r < 0.75:
                self.mma_group(body)
            elif r < 0.85:
                self.mma_chain(body)
            elif barriers:
                self.stmt_barrier(body)
            else:
                body.append(self.acc_update())
        if not barriers and self.rng.random() < 0.3:
            at = self.rng.randrange(len(body) + 1)
            body[at:at] = self.warp_return(k)
        if barriers and "thread::sync_threads();" not in body:
            body.insert(self.rng.randrange(len(body) + 1), "thread::sync_threads();")
        self.loop_depth -= 1
        self.thread_vals, self.uniform_vals = saved[0], saved[1]
        self.mma_restore(saved[2])
        bound = self.rng.choice(["n % 3", "2u32", "3u32"])
        if self.rng.random() < 0.7:
            out.append(f"for {k} in 0..{bound} {{")
            out.extend("    " + s for s in body)
        else:
            out.append(f"let mut {k} = 0u32;")
            out.append(f"while {k} < {bound} {{")
            out.extend("    " + s for s in body)
            out.append(f"    {k} += 1;")
        out.append("}")

    def mma_in_if(self, out):
        """`mma` inside an `if` on a block-uniform or warp-uniform condition, or in an
        expression: not a statement of the body, so the kernel runs on coroutines."""
        family, accum, a, b, c = self.operands(out)
        if self.rng.random() < 0.3:
            j = self.rng.randrange(4)
            out.append(f"acc ^= {ACCUMULATORS[accum][1](f'{self.call(a, b, c)}.values[{j}]')};")
            return
        cond = self.rng.choice(["n % 2 == 0", "n > 4", "t < 32", "t / 32 == n % 2"])
        d = self.name("d")
        out.append(f"if {cond} {{")
        out.append(f"    let {d} = {self.call(a, b, c)};")
        out.append(f"    {self.fold(d, accum)}")
        out.append("}")

    def mma_top(self, out):
        """One `mma` statement (or a few) at the body's level."""
        self.uses_mma = True
        self.busy = set()
        r = self.rng.random()
        if r < 0.2:
            self.mma_let(out)
        elif r < 0.35:
            self.mma_assign(out)
        elif r < 0.5:
            self.mma_group(out)
        elif r < 0.62:
            self.mma_chain(out)
        elif r < 0.72 and not self.no_barriers:
            self.mma_across_barrier(out)
        elif r < 0.86:
            self.mma_loop(out)
        elif r < 0.95 and not self.no_barriers:
            # A warp leaves; an `mma` follows (the rest of the kernel has no barrier).
            out.extend(self.warp_return())
            self.mma_let(out, fold=1)
        elif r < 0.975:
            self.mma_in_if(out)
        else:
            self.mma_let(out)

    def mma_in_split_loop(self, body):
        """An `mma` statement in the body of one of `Gen`'s split loops (fresh names only)."""
        self.uses_mma = True
        self.busy = set()
        self.loop_depth += 1
        r = self.rng.random()
        if r < 0.4:
            self.mma_assign(body)
        elif r < 0.7:
            self.mma_let(body)
        elif r < 0.85:
            self.mma_group(body)
        else:
            self.mma_chain(body)
        self.loop_depth -= 1
