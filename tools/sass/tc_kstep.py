#!/usr/bin/env python3
"""The k-step of the library's tensor-core matmul (gpu-kernels-tc, `matmul_tc_f16`,
`matmul_tc_bf16` and `matmul_tc_f32`, tf32) against its CUDA C twin
(src/workloads/cuda_c/tensor_cores.cu), in SASS, for issue 32's goal: our k-step at most 1.1x the twin's instructions, with no spills.

    python3 tools/sass/tc_kstep.py [--ptx target/debug/build/ferrocuda-*/out/.../ferrocuda_kernels_tc.ptx]
                                   [--arch sm_80,sm_90] [--kernels matmul_tc_f16] [--json FILE]

Ours: the TENSOR_KERNELS PTX the build made (the newest `ferrocuda_kernels_tc.ptx` under
target/*/build/ unless --ptx), assembled by ptxas for each --arch (the PTX says sm_80; sm_90
assembles it as a GPU of that generation would JIT it). The twin: common.cu + tensor_cores.cu
compiled by NVRTC for compute_XY of the same arch (what the main job's CUDA C column loads),
then the same ptxas. Both disassembled by cuobjdump.

The k-step loop is the smallest loop that holds every HMMA (one trip = one stage of BK). Per
arch and kernel: registers, stack and spill bytes (ptxas -v), the loop's instructions, the
shortest and longest path through one trip (forward branches only: an inner loop counts one
trip), HMMA / LDSM / LDGSTS and ISETP / BRA / BSSY / WARPSYNC in the loop, and the ratio of the
longest paths (ours / twin).

Tools as the shared comparison finds them (../../../shared/sass/compare_sass.py, or $SASS_DIR,
whose functions this reuses): $PTXAS, $CUOBJDUMP, $NVRTC_LIB or pip's nvidia-* wheels.
"""
import argparse
import glob
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SHARED = os.environ.get("SASS_DIR", os.path.join(ROOT, "..", "shared", "sass"))
sys.path.insert(0, SHARED)
import compare_sass as cs  # noqa: E402

TWIN_SOURCES = ["common.cu", "tensor_cores.cu"]
COUNTED = ["HMMA", "LDSM", "LDGSTS", "ISETP", "BRA", "BSSY", "WARPSYNC", "BAR", "STS", "CALL", "LDL", "STL"]


def newest_ptx():
    hits = glob.glob(os.path.join(ROOT, "target", "*", "build", "ferrocuda-*", "out", "**",
                                  "ferrocuda_kernels_tc.ptx"), recursive=True)
    if not hits:
        sys.exit("error: no ferrocuda_kernels_tc.ptx under target/*/build/: `cargo build -p "
                 "ferrocuda` first, or pass --ptx")
    return max(hits, key=os.path.getmtime)


def twin_ptx(nvrtc, arch):
    source = "\n".join(open(os.path.join(ROOT, "src", "workloads", "cuda_c", name)).read()
                       for name in TWIN_SOURCES)
    return nvrtc.compile(source, "tensor_cores.cu",
                         [f"--gpu-architecture=compute_{arch.split('_')[1]}"])


def kstep(ins):
    """The smallest loop span [s, e] holding every HMMA of the function."""
    ins = cs.code_of(ins)
    hmma = [i for i, (_, op, _) in enumerate(ins) if op.startswith("HMMA")]
    if not hmma:
        return ins, None
    _, spans = cs.loops_of(ins)
    holding = [(s, e) for s, e in spans if s <= hmma[0] and hmma[-1] <= e]
    return ins, min(holding, key=lambda span: span[1] - span[0]) if holding else None


def trip_paths(ins, s, e):
    """(shortest, steady, longest) instructions through one trip of the loop [s, e], from its
    header s to its back edge at e, over the forward branches inside it (a branch out of the
    loop, into a trap or to an EXIT is no trip). An inner loop counts one trip: its back edge
    falls through. `steady` is the shortest trip with the most LDGSTS: one that stages the next
    stage by cp.async (the aligned, whole-tile case of every stage but the last)."""
    reaches = cs.trap_targets(ins)
    # best[i]: {LDGSTS count: (shortest, longest)} from i to e.
    best = [None] * (e + 2)
    successors = {}
    for i in range(e, s - 1, -1):
        pred, op, opr = ins[i]
        cost = 0 if op == "NOP" else 1
        copies = 1 if op.startswith("LDGSTS") else 0
        if i == e:
            best[i] = {copies: (cost, cost)}
            continue
        target = cs._target(opr)
        if op.startswith("CALL") and target is not None and reaches(target):
            continue
        succ = []
        if op.startswith(("BRA", "BRX", "JMP")):
            if target is not None and i < target <= e:
                succ.append(target)
            if pred or op.startswith("BRA.DIV") or (target is not None and target <= i):
                succ.append(i + 1)
        elif op.startswith(("EXIT", "RET", "BPT")):
            if pred:
                succ.append(i + 1)
        else:
            succ.append(i + 1)
        successors[i] = succ
        here = {}
        for j in succ:
            for n, (lo, hi) in (best[j] or {}).items():
                old = here.get(n + copies)
                lo, hi = lo + cost, hi + cost
                here[n + copies] = (min(lo, old[0]), max(hi, old[1])) if old else (lo, hi)
        best[i] = here or None
    if not best[s]:
        return None, []
    top = max(best[s])
    # The steady trip itself, for --steady: follow the successors that keep its length.
    steady, i, want = [], s, top
    while i != e:
        steady.append(i)
        pred, op, opr = ins[i]
        want -= 1 if op.startswith("LDGSTS") else 0
        left = best[i][want + (1 if op.startswith("LDGSTS") else 0)][0] - (op != "NOP")
        i = next(j for j in successors[i] if best[j] and best[j].get(want, (None,))[0] == left)
    steady.append(e)
    return (min(lo for lo, _ in best[s].values()), best[s][top][0],
            max(hi for _, hi in best[s].values())), steady


def measure(tools, ptx_text, arch, kernels, work, show=False):
    ptx = os.path.join(work, f"k_{arch}_{abs(hash(ptx_text))}.ptx")
    with open(ptx, "w") as f:
        f.write(ptx_text)
    cubin = ptx[:-4] + ".cubin"
    resources = cs.ptxas(tools["ptxas"], ptx, cubin, arch)
    functions = cs.disasm(tools["cuobjdump"], cubin)
    out = {}
    for name in kernels:
        if name not in functions:
            sys.exit(f"error: no {name} in {ptx} ({', '.join(sorted(functions))})")
        ins, span = kstep(functions[name])
        res = resources.get(name, {})
        row = {"regs": res.get("regs"), "stack": res.get("stack"),
               "spills": res.get("spill_st", 0) + res.get("spill_ld", 0),
               "instrs": sum(1 for _, op, _ in ins if op != "NOP")}
        if span:
            s, e = span
            loop = [op for _, op, _ in ins[s:e + 1] if op != "NOP"]
            row["loop"] = len(loop)
            row["path"], steady = trip_paths(ins, s, e)
            if show:
                print(f"--- {name}, {arch}: the steady trip")
                for i in steady:
                    pred, op, opr = ins[i]
                    print(f"  {i:5} {pred:>6} {op} {opr}")
            row["inner loops"] = sum(1 for s2, e2 in cs.loops_of(ins)[1]
                                     if s <= s2 and e2 <= e and (s2, e2) != (s, e))
            for key in COUNTED:
                row[key] = sum(1 for op in loop if op.split(".")[0] == key)
        out[name] = row
    return out


def table(arch, name, ours, twin):
    lines = [f"{name}, {arch}: ours | twin"]

    def both(label, fmt):
        lines.append(f"  {label:<38} {fmt(ours):>14} | {fmt(twin)}")

    both("registers", lambda r: str(r["regs"]))
    both("stack, spill bytes", lambda r: f"{r['stack']}, {r['spills']}")
    both("instructions (kernel)", lambda r: str(r["instrs"]))
    both("k-step loop instructions", lambda r: str(r.get("loop")))
    both("loops inside the k-step", lambda r: str(r.get("inner loops")))
    both("paths per k-step: shortest / steady / longest",
         lambda r: "%s / %s / %s" % (r.get("path") or (None, None, None)))
    both("HMMA / LDSM / LDGSTS per k-step",
         lambda r: f"{r.get('HMMA')} / {r.get('LDSM')} / {r.get('LDGSTS')}")
    both("ISETP / BRA / BSSY / WARPSYNC",
         lambda r: f"{r.get('ISETP')} / {r.get('BRA')} / {r.get('BSSY')} / {r.get('WARPSYNC')}")
    # A CALL counts as one instruction on a path (its callee is not followed): a k-step whose
    # element-by-element staging is out of line has a shorter "longest" trip than one that
    # inlines it. (`@!PT LDS RZ, [RZ]`, never executed, which ptxas puts before LDGSTS, count
    # as instructions.)
    both("BAR / STS / CALL", lambda r: f"{r.get('BAR')} / {r.get('STS')} / {r.get('CALL')}")
    # Local memory in the k-step: values (accumulators) the stack frame carries from trip to
    # trip, which ptxas's spill count does not show when the PTX itself keeps them there.
    both("LDL / STL in the k-step", lambda r: f"{r.get('LDL')} / {r.get('STL')}")
    if "path" in ours and "path" in twin:
        ratio = [f"{o / w:.2f}x" for o, w in zip(ours["path"], twin["path"])]
        lines.append(f"  ours / twin: paths {' / '.join(ratio)}, loop "
                     f"{ours['loop'] / twin['loop']:.2f}x")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ptx", help="our TENSOR_KERNELS PTX (default: the newest built)")
    p.add_argument("--arch", default="sm_80,sm_90")
    p.add_argument("--kernels", default="matmul_tc_f16,matmul_tc_bf16,matmul_tc_f32")
    p.add_argument("--json", help="also write the numbers here")
    p.add_argument("--steady", action="store_true", help="list the steady trip's instructions")
    args = p.parse_args()
    tools = cs.tools()
    ptx = args.ptx or newest_ptx()
    kernels = args.kernels.split(",")
    nvrtc = cs.Nvrtc(tools["nvrtc"])
    print(f"ours: {ptx}\ntwin: NVRTC {nvrtc.version}, ptxas {tools['ptxas']}")
    ours_text = open(ptx).read()
    results = {}
    with tempfile.TemporaryDirectory(prefix="tc_kstep_") as work:
        for arch in args.arch.split(","):
            ours = measure(tools, ours_text, arch, kernels, work, args.steady)
            twin = measure(tools, twin_ptx(nvrtc, arch), arch, kernels, work, args.steady)
            results[arch] = {"ours": ours, "twin": twin}
            for name in kernels:
                print(table(arch, name, ours[name], twin[name]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
