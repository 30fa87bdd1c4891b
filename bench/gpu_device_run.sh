#!/usr/bin/env bash
# The GPU lease's one command (see bench/results/gpu.md): device checks, the real-GPU
# tests and the cliques GPU benchmark. Runs from the repository root with the machine's
# own python3 (CuPy, numba-cuda, numba, SciPy, networkx, pytest-benchmark there);
# trustlab is imported from the working tree. Logs and JSON go to $OUT.
# SECTIONS (default environment,privacy,cliques) picks the check script's sections;
# CHECK_S / TESTS_S / COMPILE_S / BENCH_S bound each step; BENCH_K selects benchmarks (pytest -k).
set -u
export PYTHONPATH=. PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
OUT=${OUT:-bench/results/gpu_raw}; mkdir -p "$OUT"
PY=${PY:-python3}
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/nvidia_smi.txt"
$PY -c "import numba, numpy, cupy; print('numba', numba.__version__, 'numpy', numpy.__version__, 'cupy', cupy.__version__)"
lscpu | grep -E 'Model name|^CPU\(s\)' | tee "$OUT/cpu.txt"
SECTIONS=${SECTIONS:-environment,privacy,cliques} timeout "${CHECK_S:-260}" $PY bench/gpu_device_check.py ${CHECK_ARGS:-} 2>&1 | tee "$OUT/check.log"
timeout "${TESTS_S:-90}" $PY -m pytest -q -p no:cacheprovider -m gpu tests/kernels/cliques_cuda 2>&1 | tail -5 | tee "$OUT/tests.log"
# every CUDA kernel build compiled by the device's own numba-cuda / NVVM (no launch; ~20 s)
timeout "${COMPILE_S:-120}" $PY -m pytest -q -p no:cacheprovider tests/kernels/test_cuda_compiles_for_a_device.py 2>&1 \
  | tail -5 | tee -a "$OUT/tests.log"
timeout "${BENCH_S:-200}" $PY -m pytest -p no:cacheprovider bench/bench_cliques_gpu.py --benchmark-enable \
  --benchmark-json="$OUT/cliques_gpu_bench.json" --benchmark-columns=min,median,max,rounds \
  --benchmark-max-time=2 -o addopts="--import-mode=importlib" -q -k "${BENCH_K:-not nothing}" 2>&1 | tee "$OUT/bench.log" | tail -60
grep -E "^\[(FAIL|ERROR)\]|^checks:|^(weat|privacy|cliques) " "$OUT/check.log"
