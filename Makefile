# The two commands of the README. Each first runs scripts/setup.sh, which installs only what is
# missing (the kernel toolchain and ptxas).
.PHONY: run test setup setup-sass bench bench-quick doctor compare-python test-numba fuzz

## The seed's table: every workload on one CPU thread, the CPU executor and the GPU, verified.
run: setup
	cargo run --release

## Where this machine stands: driver, GPUs, PTX, kernel toolchain, and where kernels will run.
doctor: setup
	cargo run --release -- doctor

## Every test of the workspace (GPU tests say "skipped" without a GPU).
test: setup
	@scripts/test.sh

setup:
	@scripts/setup.sh

## Only nvdisasm (also part of setup), for `ferrocuda kernels --sass`.
setup-sass:
	@scripts/setup.sh --sass-only

## Criterion benchmarks.
bench: setup
	cargo bench

## The same benchmarks at a sixteenth of the work, for CI-sized machines.
bench-quick: setup
	cargo bench --bench workloads --bench matmul -- --quick

## The CPU executor beside what a Python user has (Numba, SciPy, NumPy), one run side by side.
compare-python: setup
	@test -x target/python-baseline/bin/python || python3 -m venv target/python-baseline
	@target/python-baseline/bin/pip install -q -r scripts/python_baseline.requirements.txt
	cargo build --release --bin ferrocuda
	target/python-baseline/bin/python scripts/python_baseline.py

## Numba's CUDA test suites on the PTX emulator (a driver client we did not write): passed /
## failed / errors / skipped per suite. Makes its own virtual environment under target/.
test-numba:
	@scripts/test-numba.sh

## The split path's differential test on a new corpus: COUNT generated kernels (default 500) of
## seed SEED (default 2), each on the split path, the coroutine path and the PTX emulator.
SEED ?= 2
COUNT ?= 500
fuzz: setup
	@mkdir -p target/fuzz
	python3 tools/fuzz/gen_kernels.py --seed $(SEED) --count $(COUNT) > target/fuzz/corpus-$(SEED)-$(COUNT).rs
	cargo build -q -p ferrocuda-ptx-emu-driver
	FERROCUDA_FUZZ_CORPUS=$(CURDIR)/target/fuzz/corpus-$(SEED)-$(COUNT).rs \
	FERROCUDA_LIBCUDA=$(CURDIR)/target/debug/libferrocuda_emu_cuda.so FERROCUDA_EXPECT_GPU=1 \
	  cargo test --workspace --test fuzz_split_path
