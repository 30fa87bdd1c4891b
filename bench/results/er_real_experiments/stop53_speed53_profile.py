# usage (repo root): TMPDIR=/tmp/x nice -n 5 .venv/bin/python stop53_speed53_profile.py FILE OUT.prof  -- cProfile (CPU timer, main thread only) of one bench file, every default
# usage: prof.py NAME OUT.prof  -- cProfile of one bench file's resolve (every default)
import sys, time, cProfile, pstats, hashlib, resource
from pathlib import Path
sys.path.insert(0, "bench")
import numpy as np
import er_real
name, out = sys.argv[1], sys.argv[2]
inputs, keys, truth = er_real.load(name, Path("/work/shared/data"))
import trustlab
pr = cProfile.Profile(time.process_time)
t0, c0 = time.perf_counter(), time.process_time()
pr.enable()
pred, info = er_real.trustlab_run(inputs, keys)
pr.disable()
print(name, "wall", round(time.perf_counter()-t0,1), "cpu", round(time.process_time()-c0,1), "peak", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss//1024, info["entity_hash"], info["status"])
pr.dump_stats(out)
st = pstats.Stats(out); st.sort_stats("cumulative").print_stats(60)
st.sort_stats("tottime").print_stats(40)
