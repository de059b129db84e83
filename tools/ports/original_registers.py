#!/usr/bin/env python3
"""Registers and spills of an original CUDA program's kernels, for docs/ports.md.

Takes the program's .cu files (fetched from its repository: they are not kept here), keeps their
#define lines, __constant__ declarations and __global__/__device__ functions (the host code does
not compile under NVRTC), compiles that with NVRTC for compute_90 (-default-device, since no host
code is left) and assembles the PTX with `ptxas -arch=sm_90 -v`, printing ptxas's report. Also
prints the kernels' lines of code (non-blank, not only a comment), as docs/ports.md counts them.

    tools/ports/original_registers.py [-D NAME=VALUE ...] FILE.cu [FILE.cu ...]

Needs NVRTC 12 (`make setup`: PyPI's nvidia-cuda-nvrtc-cu12) and ptxas (nvidia-cuda-nvcc-cu12).
"""
import ctypes, glob, os, re, subprocess, sys, tempfile

def kernels_of(text):
    """The #defines, __constant__ lines and __global__/__device__ functions of `text`."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    out, i = [], 0
    for line in text.splitlines():
        s = line.strip()
        # #defines outside functions, without their #if chains (include guards, RD_WG_SIZE
        # choices: the last #define of a name wins, the default)
        if s.startswith("#define") and "_H_" not in s:
            out.append(line)
        if s.startswith("__constant__") or (s.startswith("struct") and s.endswith("};")):
            out.append(line)
    pieces = []
    for m in re.finditer(r"(__global__|__device__)[^;{]*\{", text):
        start, depth, j = m.start(), 0, m.end() - 1
        while True:
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        pieces.append(text[start:j + 1])
    return "\n".join(out), pieces

def loc(code):
    return sum(1 for l in code.splitlines() if l.strip() and l.strip() not in ("{", "}"))

def main(args):
    defines = [a for a in args if a.startswith("-D")]
    files = [a for a in args if not a.startswith("-D")]
    head, bodies = [], []
    for f in files:
        h, b = kernels_of(open(f).read())
        head.append(h)
        bodies += b
    source = "#define FLT_MAX 3.40282347e+38f\n" + "\n".join(head) + "\n" + "\n".join(bodies)
    print(f"kernel lines of code (non-blank, not a lone brace): {sum(loc(b) for b in bodies)}")
    lib = glob.glob(os.path.join(os.path.dirname(__import__('nvidia').__path__[0] + "/"), "cuda_nvrtc/lib/libnvrtc.so*"))
    nvrtc = ctypes.CDLL(sorted(lib)[0])
    prog = ctypes.c_void_p()
    assert nvrtc.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"port.cu", 0, None, None) == 0
    opts = [b"--gpu-architecture=compute_90", b"-default-device"] + [d.encode() for d in defines]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = nvrtc.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetProgramLog(prog, log)
    if rc != 0:
        sys.exit(f"NVRTC failed:\n{log.value.decode()}\n--- source ---\n{source}")
    nvrtc.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    nvrtc.nvrtcGetPTX(prog, ptx)
    with tempfile.NamedTemporaryFile("wb", suffix=".ptx", delete=False) as f:
        f.write(ptx.value)
    ptxas = glob.glob(__import__('nvidia').__path__[0] + "/cuda_nvcc/bin/ptxas")[0]
    report = subprocess.run([ptxas, "-arch=sm_90", "-v", f.name, "-o", os.devnull], capture_output=True, text=True)
    print(report.stdout + report.stderr)

if __name__ == "__main__":
    main(sys.argv[1:])
