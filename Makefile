# The two commands of the README. Each first runs scripts/setup.sh, which installs only what is
# missing (the kernel toolchain and ptxas).
.PHONY: run test setup bench doctor

## Add two 1,000,000-element vectors on the best device (GPU if present, else CPU) and verify.
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

## Criterion benchmarks.
bench: setup
	cargo bench
