#!/usr/bin/env bash
# One short device run (see bench/gpu_api_overhead.py): the GPU clique public API's time
# past the kernel, and the opt-in host outputs (touch = default, threads, threads_copy,
# pinned) against the same machine's CPU kernel, on G(300, 0.5), G(100k, 1M), RGG(20k).
# Runs from the repository root with the machine's python3 (CuPy, numba-cuda); about
# 40-70 s, most of it compiling (the CPU clique kernels, then the GPU ones). Logs to $OUT.
set -u
export PYTHONPATH=. PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore TRUSTLAB_CLIQUES_PYTHON=0
OUT=${OUT:-bench/results/gpu_raw}; mkdir -p "$OUT"
PY=${PY:-python3}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$OUT/nvidia_smi.txt"
OUT="$OUT" ROUNDS=${ROUNDS:-5} timeout "${API_S:-150}" $PY bench/gpu_api_overhead.py 2>&1 | tail -80
echo "exit ${PIPESTATUS[0]}"
