#!/usr/bin/env python3
"""The module import graph of each crate in the workspace: its import circles and its upward imports.

An edge runs from a file to each file of the same crate whose items it names through `crate::`,
`super::` or `self::` paths (in `use` declarations and in expressions alike). A `mod x;`
declaration is not an import. Files that import each other in a circle form one strongly
connected component; the report names every circle of more than two files.

"Upward" imports are counted against the best layering the graph allows: files are ordered so
that as few imports as possible point from a file to one ordered after it (the greedy ordering of
Eades, Lin and Smyth, which is what a person rearranging the modules would do by hand), and the
imports left pointing that way are the upward ones. A graph without circles has none.

Usage: tools/layers/imports.py [CRATE_DIR ...] [--edges] [--check] [--allow=CRATE_DIR,...]
(default: every workspace member with a src/lib.rs, the root crate included). With `--check`
it exits with status 1 if any crate has an import circle of more than two files (what
`make test` enforces, so the layers docs/design.md draws stay true); `--allow` names crates whose
circles are known and still to be broken (reported, not failed).
"""

import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def workspace_members():
    """The root crate and every member the workspace's Cargo.toml lists."""
    manifest = (ROOT / "Cargo.toml").read_text()
    members = re.search(r"members\s*=\s*\[([^\]]*)\]", manifest)
    return ["."] + re.findall(r'"([^"]+)"', members.group(1) if members else "")


def module_files(src: Path):
    """Maps each module path (tuple of names, the crate root is ()) to its file."""
    modules = {}
    for file in src.rglob("*.rs"):
        rel = file.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts[0] == "bin" or parts[0] == "main":
            continue
        if parts[-1] in ("lib", "mod"):
            parts = parts[:-1]
        modules[tuple(parts)] = file
    return modules


COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\])*"')
USE = re.compile(r"\buse\s+([^;]*);", re.S)
PATH = re.compile(r"\b((?:crate|super|self)(?:\s*::\s*(?:\w+|\{))+)")


def expand_use(tree: str):
    """`crate::a::{b, c::{d, e}}` -> ["crate::a::b", "crate::a::c::d", "crate::a::c::e"]."""
    tree = re.sub(r"\s+", "", tree)
    out = []

    def walk(prefix, text):
        depth, start, items = 0, 0, []
        for i, ch in enumerate(text):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                items.append(text[start:i])
                start = i + 1
        items.append(text[start:])
        for item in items:
            if not item:
                continue
            if "{" in item:
                head, rest = item.split("{", 1)
                walk(prefix + head, rest[: rest.rfind("}")])
            else:
                out.append(prefix + item.split(" as ")[0])

    walk("", tree)
    return out


TESTS = re.compile(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{")


INLINE_MOD = re.compile(r"\bmod\s+\w+\s*\{")


def inline_ranges(text: str):
    """The byte ranges of the inline modules (`mod gpu { ... }`) in a file."""
    ranges = []
    for m in INLINE_MOD.finditer(text):
        depth = 0
        for i in range(m.end() - 1, len(text)):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    ranges.append((m.start(), i))
                    break
    return ranges


def references(text: str):
    """(path, inline-module depth) of each path the file names."""
    text = STRING.sub('""', COMMENT.sub("", text))
    # A file's unit tests (`#[cfg(test)] mod tests { use super::*; ... }`, at its end by custom)
    # are not part of its module's dependencies.
    tests = TESTS.search(text)
    if tests:
        text = text[: tests.start()]
    ranges = inline_ranges(text)

    def depth(at):
        return sum(1 for a, b in ranges if a <= at <= b)

    paths = []
    for m in USE.finditer(text):
        paths += [(p, depth(m.start())) for p in expand_use(m.group(1))]
    for m in PATH.finditer(USE.sub(lambda u: " " * len(u.group(0)), text)):
        paths.append((re.sub(r"\s+", "", m.group(1)).rstrip(":{"), depth(m.start())))
    return paths


def reexports(modules):
    """Each module's `pub use` items: name -> the path it re-exports, so that `crate::Foo`
    (re-exported by lib.rs) is an import of the file that defines `Foo`, not of lib.rs."""
    table = {}
    for mod, file in modules.items():
        text = STRING.sub('""', COMMENT.sub("", file.read_text()))
        names = {}
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]*);", text[: (TESTS.search(text) or re.search("$", text)).start()], re.S):
            for path in expand_use(m.group(1)):
                alias = path.split("::")[-1]
                # The first wins: lib.rs's own `pub use thread::Dim3` before its prelude's
                # `pub use crate::Dim3`.
                names.setdefault(alias, path)
        table[mod] = names
    return table


def resolve(path: str, here: tuple, modules, exports=None, depth=0, inline=0):
    parts = [p for p in path.split("::") if p]
    if not parts:
        return None
    # Inside an inline module, `super::` first climbs to the file's own module, and `self::` is
    # the inline module: both name this file.
    if inline and parts[0] in ("self", "super"):
        while inline and parts and parts[0] in ("self", "super"):
            if parts[0] == "super":
                inline -= 1
            parts = parts[1:]
            if parts[:1] == ["self"]:
                parts = parts[1:]
        if inline or not parts or parts[0] not in ("super",):
            return here
        
    if parts[0] == "crate":
        base, rest = (), parts[1:]
    else:
        base = list(here)
        rest = parts
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
        base = tuple(base)
    best = base if base in modules else None
    used = 0
    for i in range(1, len(rest) + 1):
        cand = base + tuple(rest[:i])
        if cand in modules:
            best, used = cand, i
        else:
            break
    # Follow a re-export: `crate::Item` where lib.rs says `pub use device::Item`. An item that
    # the module re-exports from another crate is no import of a file of this one.
    if exports and best is not None and used < len(rest) and depth < 8:
        via = exports.get(best, {}).get(rest[used])
        if via is not None:
            head = via.split("::")[0]
            if head not in ("crate", "self", "super") and best + (head,) not in modules:
                return None
            again = resolve(via, best, modules, exports, depth + 1)
            if again is not None:
                return again
    return best


def graph(crate: Path):
    src = crate / "src"
    modules = module_files(src)
    exports = reexports(modules)
    edges = defaultdict(set)
    for mod, file in modules.items():
        for path, inline in references(file.read_text()):
            # `self::x` inside a file means a child of this module only when the file is a
            # mod.rs/lib.rs; for a leaf file the module path is the file's own, which is the same.
            target = resolve(path, mod, modules, exports, inline=inline)
            if target is not None and target != mod:
                edges[mod].add(target)
    return modules, edges


def sccs(nodes, edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    for v in nodes:
        if v not in index:
            strong(v)
    return out


def eades_order(nodes, edges):
    """A vertex order with few edges pointing forward (Eades, Lin, Smyth 1993)."""
    succ = {v: set(edges.get(v, ())) & set(nodes) for v in nodes}
    pred = {v: set() for v in nodes}
    for v in nodes:
        for w in succ[v]:
            pred[w].add(v)
    left, right, alive = [], [], set(nodes)
    while alive:
        changed = True
        while changed:
            changed = False
            for v in sorted(alive):
                if not (succ[v] & alive):  # imports nothing left: lowest layer
                    right.append(v)
                    alive.discard(v)
                    changed = True
                elif not (pred[v] & alive):  # imported by nothing left: top layer
                    left.append(v)
                    alive.discard(v)
                    changed = True
        if alive:
            v = max(sorted(alive), key=lambda u: len(pred[u] & alive) - len(succ[u] & alive))
            # Most imported, least importing: put it low.
            right.append(v)
            alive.discard(v)
    # `left` runs from the top down, `right` from the bottom up.
    return left + right[::-1]


def name(mod):
    return "::".join(mod) or "lib"


def report(crate: Path, show_edges: bool) -> int:
    """Prints the crate's summary (and its upward imports); returns its largest circle's size."""
    modules, edges = graph(crate)
    nodes = sorted(modules)
    comps = sccs(nodes, edges)
    order = eades_order(nodes, edges)
    rank = {v: i for i, v in enumerate(order)}  # 0 is the top
    upward = [(v, w) for v in nodes for w in edges.get(v, ()) if rank[w] < rank[v]]
    # Levels: the longest import chain below each component.
    comp_of = {v: i for i, c in enumerate(comps) for v in c}
    level = {}

    def depth(c):
        if c in level:
            return level[c]
        level[c] = 0
        below = {comp_of[w] for v in comps[c] for w in edges.get(v, ()) if comp_of[w] != c}
        level[c] = 1 + max((depth(d) for d in below), default=0)
        return level[c]

    levels = max((depth(c) for c in range(len(comps))), default=0)
    circles = sorted((c for c in comps if len(c) > 1), key=len, reverse=True)
    label = crate.name if str(crate) != str(ROOT) else "ferrocuda (root)"
    n_edges = sum(len(e) for e in edges.values())
    print(f"{label}: {len(nodes)} files, {n_edges} imports, {levels} levels, {len(upward)} upward, "
          f"largest circle {len(circles[0]) if circles else 0} files, "
          f"{sum(1 for c in circles if len(c) > 2)} circles of more than two files")
    for c in circles:
        print(f"  circle of {len(c)}: " + ", ".join(sorted(name(v) for v in c)))
    if show_edges:
        for v, w in sorted(upward):
            print(f"  upward: {name(v)} -> {name(w)}")
    return len(circles[0]) if circles else 0


def main(argv):
    show_edges = "--edges" in argv
    crates = [a for a in argv if not a.startswith("--")] or workspace_members()
    allowed = {c for a in argv if a.startswith("--allow=") for c in a[len("--allow="):].split(",")}
    tangled = []
    for c in crates:
        path = (ROOT / c).resolve()
        if (path / "src" / "lib.rs").exists() and report(path, show_edges) > 2 and c not in allowed:
            tangled.append(c)
    if "--check" in argv and tangled:
        print(f"import circles of more than two files in: {', '.join(tangled)} "
              "(docs/design.md: each crate's files import downward; break the circle by moving "
              "what both sides need into a file below them)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
