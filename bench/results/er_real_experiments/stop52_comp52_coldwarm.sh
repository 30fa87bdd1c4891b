#!/bin/bash
# Stop 52 (comp52): cold == warm with the default LP bound. Two files, a fresh Numba cache:
# the first run compiles (cold), the second reads the cache (warm); compare entity_hash and
# the status counts. Usage: stop52_comp52_coldwarm.sh FILES OUTPREFIX
set -e
cd "$(dirname "$0")/../../.."
export NUMBA_CACHE_DIR=$(mktemp -d) TMPDIR=${TMPDIR:-/tmp}
for run in cold warm; do
  nice -n 5 .venv/bin/python bench/er_real.py --data /work/shared/data --systems trustlab --files "$1" --jsonl "$2_$run.jsonl"
done
python3 - "$2_cold.jsonl" "$2_warm.jsonl" <<'PY'
import json, sys
a, b = ([json.loads(l) for l in open(f)] for f in sys.argv[1:3])
for x, y in zip(a, b):
    same = (x["entity_hash"], x["status"]) == (y["entity_hash"], y["status"])
    print(x["file"], x["entity_hash"], y["entity_hash"], x["status"], y["status"], "SAME" if same else "DIFFERENT")
PY
