# stop 48 (cora48): put this directory on PYTHONPATH as sitecustomize.py, with stop48_cora_patches.py copied to /tmp/cora48/patches.py; EXP_PATCH=1 turns the switches on in every subprocess of bench/er_real.py
import os, sys
if os.environ.get("EXP_PATCH"):
    sys.path.insert(0, "/tmp/cora48")
    import patches  # noqa
