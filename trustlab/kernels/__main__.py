"""``python -m trustlab.kernels``: fill the Numba on-disk cache once (post-install step)."""
from trustlab.kernels._startup import warm_caches

warm_caches(verbose=True)
