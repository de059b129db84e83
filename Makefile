# The two commands of the README. Each first runs scripts/setup.sh, which installs only what is
# missing (the kernel toolchain and ptxas).
.PHONY: run test setup setup-sass bench bench-quick doctor compare-python test-numba

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
