"""A warp's `mma_tiles` product for tools/fuzz/gen_kernels.py (after gen_mma.py's `mma`).

`#[kernel]` makes `let d = mma_tiles(&a, &b, &c);` or `d = mma_tiles(..);` at statement level a
block step of the split path (grouped with neighbouring independent `mma`s); elsewhere it is a
warp rendezvous, on the emulator `ldmatrix` (or element loads) and `mma.sync`. These statements
cover: `let` and assignment, chained (`ct = mma_tiles(.., &ct)` twice), results and windows
shadowing earlier names, next to plain `mma` statements (one group), in split loops (with and
without barriers, windows moving with the trip), after whole warps returned, the shared arrays
restaged between barriers, and rarely inside a warp-uniform `if` (the kernel stays on
coroutines). Shapes: MT 1..=2, NT 1..=3, depth 1..=3 times K.

A kernel's products are of one family (a kernel in three: one pair of arrays to stage). Its A and B
live in `shared!` arrays staged (every element, by the block) before the
first barrier of the kernel, so every window reads written elements; a restage writes them anew
between two barriers. Windows are warp-uniform (their offsets depend on `t / 32` and block-uniform
values only): lanes with windows of their own are reported as warp divergence, a bug of the
kernel, not of the executor. Values are integer-exact as in gen_mma.py.
"""

from gen_mma import FAMILIES, ACCUMULATORS, MmaStatements

# The shape's K by family (m16n8k32 for 8-bit integers, m16n8k16 for f16).
K = {"i8": 32, "u8": 32, "f16": 16}
# Elements past the windows for the largest offset (2 * 8 + 8 + 5).
ROOM = 32


def layout(family):
    """(A's row stride, A's length, B's row stride, B's length) of `family`'s arrays: A 32 rows
    of 3K (+ padding), B 3K rows of 24 (+ padding)."""
    a_stride, b_stride = 3 * K[family] + 8, 32
    return a_stride, 32 * a_stride + ROOM, b_stride, 3 * K[family] * b_stride + ROOM


class MmaTilesStatements(MmaStatements):
    """`mma_tiles` statements, mixed into `Gen` over gen_mma's `mma` ones."""

    def mma_reset(self, enabled):
        super().mma_reset(enabled)
        # The one family of the kernel's `mma_tiles` (one pair of arrays to stage: staging is
        # most of these kernels' time on the CPU), and whether they are staged.
        self.tiles_family = self.rng.choice(list(FAMILIES))
        self.staged = set()
        # Accumulator tiles in scope: name -> (accumulator, MT, NT); and the `let mut` ones.
        self.acc_tiles = {}
        self.mut_tiles = set()
        self.uses_tiles = False

    def mma_scope(self):
        return super().mma_scope(), dict(self.acc_tiles), set(self.mut_tiles)

    def mma_restore(self, saved):
        super().mma_restore(saved[0])
        self.acc_tiles, self.mut_tiles = dict(saved[1]), set(saved[2])

    # ---- shared arrays ---------------------------------------------------------------------

    def staging(self, family, fresh):
        """Lines writing every element of `family`'s arrays, each by one thread."""
        convert = FAMILIES[family][1]
        a_stride, a_len, b_stride, b_len = layout(family)
        lines = []
        for kind, length in (("a", a_len), ("b", b_len)):
            src = (f"x[(e * {self.rng.choice([3, 7, 13])} + {self.rng.randrange(5)}) % x.len()]"
                   f" ^ (e as u32).wrapping_mul(n | 1)")
            if fresh:
                src = f"acc.rotate_left(e as u32 % 32) ^ (e as u32).wrapping_mul({self.const()})"
            lines += [f"for e in (t as usize..{length}).step_by(64) {{",
                      f"    s{kind}_{family}.set(e, {convert(src)});",
                      "}"]
        return lines

    def prologue(self):
        """The shared arrays of the families used, staged, then a barrier."""
        lines = []
        for family in sorted(self.staged):
            _, a_len, _, b_len = layout(family)
            lines.append(f"let sa_{family} = shared!([{family}; {a_len}]);")
            lines.append(f"let sb_{family} = shared!([{family}; {b_len}]);")
        for family in sorted(self.staged):
            lines += self.staging(family, fresh=False)
        return lines + ["thread::sync_threads();"]

    def restage(self, out):
        """The arrays written anew from per-thread values, between two barriers."""
        family = self.tiles_family
        self.staged.add(family)
        out.append("thread::sync_threads();")
        out += self.staging(family, fresh=True)
        out.append("thread::sync_threads();")

    # ---- windows and accumulators ----------------------------------------------------------

    def offset(self):
        """A warp-uniform offset into an array, below 25."""
        u = self.rng.choice(self.uniform_vals)
        return self.rng.choice([
            "0", f"({u} % 3) as usize * 8", "(t / 32) as usize * 8", "(t >> 5) as usize * 5",
            f"(({u} ^ (t / 32)) % 3) as usize * 8 + {self.rng.choice([0, 3])}",
        ])

    def windows(self, out, family, mt, nt):
        """`let` of A's (16·MT)×depth and B's depth×(8·NT) windows; their names."""
        a_stride, _, b_stride, _ = layout(family)
        # Mostly one k-step: in CPU checked mode each lane's reads of the windows are recorded.
        depth = K[family] * self.rng.choice([1, 1, 1, 2, 3])
        self.staged.add(family)
        names = []
        for kind, shape, stride in (("a", f"({16 * mt}, {depth})", a_stride),
                                    ("b", f"({depth}, {8 * nt})", b_stride)):
            w = self.name(f"w{kind}")
            out.append(f"let {w} = mma::SharedTile::new(s{kind}_{family}, {self.offset()}, "
                       f"{shape}, {stride});")
            names.append(w)
        return names

    def acc_tile(self, out, accum, mt, nt, mutable=False):
        """An accumulator tile of this shape in scope, or a new one."""
        fits = [n for n, s in self.acc_tiles.items() if s == (accum, mt, nt)
                and (not mutable or n in self.mut_tiles)]
        if fits and self.rng.random() < 0.6:
            return self.rng.choice(fits)
        name = self.tile_name("ct")
        if self.rng.random() < 0.25:
            value = f"AccTile::<{accum}, {mt}, {nt}>::zero()"
        else:
            frag = f"FragC::<{accum}>::from_fn(|r, c| {ACCUMULATORS[accum][0](self.element_source('r', 'c'))})"
            value = f"AccTile {{ frags: [[{frag}; {nt}]; {mt}] }}"
        out.append(f"let {'mut ' if mutable else ''}{name} = {value};")
        self.acc_tiles[name] = (accum, mt, nt)
        if mutable:
            self.mut_tiles.add(name)
        else:
            self.mut_tiles.discard(name)
        return name

    def tile_name(self, prefix):
        """A fresh name, or (outside split loops, sometimes) an immutable tile's, shadowed."""
        olds = [n for n in self.acc_tiles if n not in self.mut_tiles]
        if self.loop_depth == 0 and olds and self.rng.random() < 0.25:
            return self.rng.choice(olds)
        return self.name(prefix)

    def fold_tile(self, d, mt, nt, accum):
        i, j = self.rng.randrange(mt), self.rng.randrange(nt)
        return self.fold(f"{d}.frags[{i}][{j}]", accum)

    def shape(self):
        family = self.tiles_family
        return family, FAMILIES[family][0], self.rng.randint(1, 2), self.rng.randint(1, 3)

    # ---- statements ------------------------------------------------------------------------

    def tiles_call(self, a, b, c):
        return f"{self.rng.choice(['mma_tiles', 'mma_tiles', 'mma::mma_tiles'])}(&{a}, &{b}, &{c})"

    def tiles_let(self, out, next_to_mma=False):
        """`let d = mma_tiles(..);` (maybe shadowing its accumulator), folded; maybe with a
        plain `mma` right after it (one group on the split path)."""
        family, accum, mt, nt = self.shape()
        wa, wb = self.windows(out, family, mt, nt)
        c = self.acc_tile(out, accum, mt, nt)
        plain = self.operands(out, fresh=0.3) if next_to_mma else None
        d = c if self.loop_depth == 0 and self.rng.random() < 0.3 else self.tile_name("dt")
        out.append(f"let {d} = {self.tiles_call(wa, wb, c)};")
        self.acc_tiles[d] = (accum, mt, nt)
        self.mut_tiles.discard(d)
        if plain:
            self.mma_let(out, fold=1, ops=plain)
        out.append(self.fold_tile(d, mt, nt, accum))

    def tiles_assign(self, out):
        """`ct = mma_tiles(.., &ct);` once or twice (chained), folded."""
        family, accum, mt, nt = self.shape()
        wa, wb = self.windows(out, family, mt, nt)
        m = self.acc_tile(out, accum, mt, nt, mutable=True)
        for _ in range(self.rng.randint(1, 2)):
            out.append(f"{m} = {self.tiles_call(wa, wb, m)};")
        out.append(self.fold_tile(m, mt, nt, accum))

    def tiles_loop(self, out):
        """A split loop whose trips multiply windows moving with the trip (a k-loop), with a
        barrier (maybe a restage) or, after a warp returned, none."""
        family, accum, mt, nt = self.shape()
        m = self.acc_tile(out, accum, mt, nt, mutable=True)
        k = self.name("k")
        saved = (list(self.uniform_vals), self.mma_scope())
        self.uniform_vals.append(k)
        self.loop_depth += 1
        body = []
        if not self.no_barriers and self.rng.random() < 0.15:
            self.restage(body)
        wa, wb = self.windows(body, family, mt, nt)
        body.append(f"{m} = {self.tiles_call(wa, wb, m)};")
        if self.rng.random() < 0.4:
            self.mma_in_split_loop(body)
        if not self.no_barriers and self.rng.random() < 0.6:
            # First or last: a restage's lines are loops no barrier may go into.
            body.insert(self.rng.choice([0, len(body)]), "thread::sync_threads();")
        self.loop_depth -= 1
        self.uniform_vals = saved[0]
        self.mma_restore(saved[1])
        out.append(f"for {k} in 0..{self.rng.choice(['n % 3', '2u32', '3u32'])} {{")
        out.extend("    " + s for s in body)
        out.append("}")
        out.append(self.fold_tile(m, mt, nt, accum))

    def tiles_in_if(self, out):
        """`mma_tiles` in an `if` on a warp-uniform condition: the kernel stays on coroutines."""
        family, accum, mt, nt = self.shape()
        wa, wb = self.windows(out, family, mt, nt)
        c = self.acc_tile(out, accum, mt, nt)
        d = self.name("dt")
        out.append(f"if {self.rng.choice(['n % 2 == 0', 't < 32', 't / 32 == n % 2'])} {{")
        out.append(f"    let {d} = {self.tiles_call(wa, wb, c)};")
        out.append(f"    {self.fold_tile(d, mt, nt, accum)}")
        out.append("}")

    def tiles_top(self, out):
        """One `mma_tiles` statement (or a few) at the body's level."""
        self.uses_mma = self.uses_tiles = True
        self.busy = set()
        r = self.rng.random()
        if r < 0.25:
            self.tiles_let(out)
        elif r < 0.45:
            self.tiles_assign(out)
        elif r < 0.6:
            self.tiles_let(out, next_to_mma=True)
        elif r < 0.8:
            self.tiles_loop(out)
        elif r < 0.9 and not self.no_barriers:
            self.restage(out)
            self.tiles_let(out)
        elif r < 0.95 and not self.no_barriers:
            # A warp leaves; a product follows (the rest of the kernel has no barrier).
            out.extend(self.warp_return())
            self.tiles_assign(out)
        else:
            self.tiles_in_if(out)

    def mma_top(self, out):
        if self.rng.random() < 0.4:
            return self.tiles_top(out)
        return super().mma_top(out)

    def mma_in_split_loop(self, body):
        if self.rng.random() < 0.3:
            self.uses_mma = self.uses_tiles = True
            self.loop_depth += 1
            self.busy = set()
            if self.rng.random() < 0.5:
                self.tiles_let(body, next_to_mma=self.rng.random() < 0.4)
            else:
                self.tiles_assign(body)
            self.loop_depth -= 1
            return
        super().mma_in_split_loop(body)
