#!/usr/bin/env bash
# One short device run (see bench/gpu_api_overhead.py): the GPU clique public API's time
# past the kernel, and the opt-in host outputs (touch = default, threads, threads_copy,
# pinned) against the same machine's CPU kernel, on G(300, 0.5), G(100k, 1M), RGG(20k);
# then (TESTS=1, default) the real-target compile test of every CUDA kernel build and the
# real-GPU host-output test. Runs from the repository root with the machine's python3
# (CuPy, numba-cuda). Expected: 40-70 s for the timing (mostly compiling the CPU and GPU
# clique kernels on a fresh machine), 20-40 s for the tests. Logs to $OUT.
set -u
export PYTHONPATH=. PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore TRUSTLAB_CLIQUES_PYTHON=0
OUT=${OUT:-bench/results/gpu_raw}; mkdir -p "$OUT"
PY=${PY:-python3}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/nvidia_smi.txt"
OUT="$OUT" ROUNDS=${ROUNDS:-5} timeout "${API_S:-150}" $PY bench/gpu_api_overhead.py 2>&1 | tail -80
echo "timing exit ${PIPESTATUS[0]}"
if [ "${TESTS:-1}" = 1 ]; then
  timeout "${TESTS_S:-120}" $PY -m pytest -q -p no:cacheprovider tests/kernels/test_cuda_compiles_for_a_device.py \
    "tests/kernels/cliques_cuda/test_cliques_cuda.py::test_real_gpu_host_outputs_agree" 2>&1 | tail -15 \
    | tee "$OUT/tests.log"
fi
