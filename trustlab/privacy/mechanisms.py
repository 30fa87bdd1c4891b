"""PrivEmb (M2) and the M1 baseline: the in-memory API and the per-chunk engine.

Every vector gets its own noise stream keyed by (secret noise key, global row index), so
results do not depend on chunking or thread count, and the streaming, Dask and in-memory
paths release identical vectors for the same ``random_state``.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import math
import numbers
import secrets
from typing import Any, Iterator

import numpy as np

from trustlab._backend import resolve_backend
from trustlab._scale import pow2_scale
from trustlab._settings import UNSET
from trustlab._validation import (
    Interval,
    Registry,
    check_finite_array,
    check_int,
    check_memory,
    check_option,
    check_random_state,
    validate_params,
)
from trustlab.privacy.calibration import PROJECTIONS, calibrate_m, empirical_sensitivity, projection_matrix
from trustlab.privacy.settings import ReleaseSettings

__all__ = [
    "MECHANISMS",
    "ReleaseRecord",
    "PrivateRelease",
    "Mechanism",
    "make_mechanism",
    "privatize",
    "privatize_dask",
    "nearest_neighbor_swap",
]

MECHANISMS = Registry("mechanism")
MECHANISMS.register("privemb", "privemb")
MECHANISMS.register("m1", "m1")


@dataclasses.dataclass(frozen=True)
class ReleaseRecord:
    """What a private release publishes about itself (never the noise key).

    Attributes
    ----------
    mechanism : str
        ``"privemb"`` (M2) or ``"m1"``.
    epsilon, delta, beta : float
        Privacy parameters (M1 is (ε, 0)-private: ``delta=0``, ``beta=None``).
    n, d, m : int
        Number of vectors, input and output dimension.
    phi_seed : int or None
        Seed of the public projection Φ (rebuild with
        :func:`trustlab.privacy.projection_matrix`); ``None`` for M1.
    calibration : str
        ``"default"`` (the fitted formula), ``"explicit"`` or ``"none"`` (M1).
    noise_scale : float
        Noise density ∝ exp(−‖z‖/noise_scale): (1+β)/ε for M2, 1/ε for M1.
    empirical_sensitivity : float or None
        max ‖Φx−Φx'‖/‖x−x'‖ over a sample of the input (PrivEmb paper, Def. 2). Computed from the
        **private input, without noise** (up to 256 rows): a diagnostic for the data
        owner that says a little about those rows. Drop it before publishing the record.
    spectral_norm : float or None
        ‖Φ‖₂, the sensitivity over all of R^d (≈ 1+√(d/m); larger than 1+β for m < d).
    projection : str
        Φ's kind: ``"gaussian"`` (the paper's), ``"achlioptas"`` or ``"very_sparse"``
        (``trustlab.privacy.calibration.PROJECTIONS``; ``"none"`` for M1); rebuild it with
        ``projection_matrix(m, d, phi_seed, **PROJECTIONS[projection])``.
    library, version, created : str
        ``trustlab``, its version and the UTC time of the release.

    Examples
    --------
    >>> import numpy as np
    >>> rec = privatize(np.ones((3, 300)), epsilon=10, random_state=0).record
    >>> rec.mechanism, rec.n, rec.d, rec.m, rec.calibration
    ('privemb', 3, 300, 54, 'default')
    >>> sorted(rec.to_dict())[:3]
    ['beta', 'calibration', 'created']
    """

    mechanism: str
    epsilon: float
    delta: float
    beta: float | None
    n: int
    d: int
    m: int
    phi_seed: int | None
    calibration: str
    noise_scale: float
    empirical_sensitivity: float | None
    spectral_norm: float | None
    vocab_swap: bool = False
    projection: str = "gaussian"
    library: str = "trustlab"
    version: str = ""
    created: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=False)

    def release_settings(self) -> ReleaseSettings:
        """The :class:`~trustlab.privacy.ReleaseSettings` of this release: another release
        with them has the same mechanism, ε, δ, β and m and, for PrivEmb, the same public Φ
        (``phi_seed``; its noise comes from the new call's ``random_state``).

        Returns
        -------
        ReleaseSettings

        Examples
        --------
        >>> import numpy as np
        >>> X = np.random.default_rng(0).standard_normal((10, 300))
        >>> rec = privatize(X, epsilon=10, random_state=0).record
        >>> s = rec.release_settings()
        >>> (s.epsilon, s.m, s.phi_seed == rec.phi_seed)
        (10.0, 54, True)
        """
        if self.mechanism == "m1":
            return ReleaseSettings(epsilon=self.epsilon, mechanism="m1")
        return ReleaseSettings(epsilon=self.epsilon, mechanism=self.mechanism, delta=self.delta, beta=self.beta,
                               m=self.m, projection=self.projection, phi_seed=self.phi_seed,
                               allow_m_above_d=self.m > self.d)


@dataclasses.dataclass
class PrivateRelease:
    """Result of :func:`privatize`; unpacks as ``vectors, record = privatize(...)``.

    ``indices`` holds the chosen vocabulary rows when M1's nearest-neighbour swap ran.

    Attributes
    ----------
    vectors : numpy.ndarray of shape (n, m)
        The released vectors (``m = d`` for M1).
    record : ReleaseRecord
        What the release publishes about itself.
    indices : numpy.ndarray or None
        M1 with ``vocab``: the vocabulary row each vector was swapped to.

    Examples
    --------
    >>> import numpy as np
    >>> rel = privatize(np.ones((3, 300)), epsilon=10, random_state=0)
    >>> vectors, record = rel
    >>> vectors.shape, record.m, rel.indices is None
    ((3, 54), 54, True)
    """

    vectors: Any
    record: ReleaseRecord
    indices: np.ndarray | None = None

    def __iter__(self):
        return iter((self.vectors, self.record))

    def __getitem__(self, i):
        return (self.vectors, self.record)[i]

    def __len__(self) -> int:
        return 2


_BLAS_CONTROLLER = None


def _one_blas_thread():
    """Context manager: BLAS limited to one thread (threadpoolctl; the controller, which
    scans the loaded libraries, is built once)."""
    global _BLAS_CONTROLLER
    if _BLAS_CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _BLAS_CONTROLLER = ThreadpoolController()
    return _BLAS_CONTROLLER.limit(limits=1, user_api="blas")


def _version() -> str:
    from trustlab import __version__

    return __version__


def _keys_from(random_state) -> tuple[int, np.uint64, np.uint64]:
    """(public Φ seed, secret noise key words). OS entropy unless a seed is given.

    With a seed, Φ's seed and the noise key come from two *independent* children of
    one :class:`numpy.random.SeedSequence` (``spawn(2)``), so the published
    ``phi_seed`` is not an output of the stream the key is drawn from and cannot be
    used to reproduce the noise. A guessable seed (a small integer) can still be
    confirmed by recomputing ``phi_seed`` for each guess, and the key then follows:
    integer seeds are for tests and reproducible experiments only, never for a real
    release (:func:`trustlab.privacy.privatize_file` warns when one is used).
    """
    if random_state is None:
        phi_seed = secrets.randbits(63)
        k = secrets.randbits(128)
        return phi_seed, np.uint64(k & (2**64 - 1)), np.uint64(k >> 64)
    if isinstance(random_state, (numbers.Integral, np.integer)) and not isinstance(random_state, bool):
        check_random_state(random_state)  # the usual validation and message (negative, ...)
        root = np.random.SeedSequence(int(random_state))
    elif isinstance(random_state, np.random.SeedSequence):
        root = random_state
    else:
        rng = check_random_state(random_state)
        root = np.random.SeedSequence([int(w) for w in rng.integers(0, 2**64, size=4, dtype=np.uint64)])
    phi_ss, noise_ss = root.spawn(2)
    phi_seed = int(phi_ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))  # 63 bits
    kw = noise_ss.generate_state(2, dtype=np.uint64)
    return phi_seed, np.uint64(kw[0]), np.uint64(kw[1])


# Chunks with fewer rows than this run the single-threaded noise kernel (same bits),
# so small releases never start Numba's parallel runtime.
_PARALLEL_ROWS = 4096

# While a noise kernel is neither compiled in this process nor in Numba's on-disk cache,
# chunks run its exact NumPy twin (trustlab.kernels.privacy_numpy: the same bits) instead
# of compiling it (~5 s of CPU), up to this much work per process (projection multiply-adds
# plus 50 per noise coordinate, the twin's relative cost: about 1 s of CPU), after which
# the kernel compiles. A count of work, not a timer, so the choice is deterministic (and
# the release is the same bits either way).
_TWIN_WORK = 1 << 28
_twin_work_left = [_TWIN_WORK]


def _use_twin(kernel, work: int) -> bool:
    """True when this chunk should run the NumPy twin of ``kernel`` (see ``_TWIN_WORK``)."""
    if work > _twin_work_left[0]:
        return False
    from trustlab.kernels._jit import kernel_ready

    if kernel_ready(kernel):
        return False
    _twin_work_left[0] -= work
    return True


class Mechanism:
    """A configured release: validated parameters, Φ and the secret noise key.

    Built by :func:`make_mechanism`; :meth:`apply` privatises one chunk of rows given
    their global offset. Used by :func:`privatize`, the streaming writer and Dask.
    """

    def __init__(self, *, name, d, epsilon, delta, beta, m, calibration, phi_seed, key0, key1, backend,
                 projection="gaussian"):
        self.name = name
        self.d = d
        self.epsilon = epsilon
        self.delta = delta
        self.beta = beta
        self.m = m
        self.calibration = calibration
        self.phi_seed = phi_seed
        self._key0 = key0
        self._key1 = key1
        self.backend = backend
        self.projection = projection
        if name == "privemb":
            self.phi = projection_matrix(m, d, phi_seed, **PROJECTIONS[projection])
            self.noise_scale = (1.0 + beta) / epsilon
        else:
            self.phi = None
            self.noise_scale = 1.0 / epsilon
        self._gpu_key = None  # the Philox key of the GPU release (derived on first use)
        self._phiT_gpu = {}  # Φᵀ on the device, per input dtype
        self._bt32 = None

    def __repr__(self) -> str:  # never shows the key
        return (f"Mechanism({self.name!r}, d={self.d}, m={self.m}, epsilon={self.epsilon}, "
                f"delta={self.delta}, beta={self.beta}, backend={self.backend!r})")

    @property
    def out_dim(self) -> int:
        return self.m

    def apply(self, X: np.ndarray, row_offset: int, out: np.ndarray | None = None,
              dtype=None) -> np.ndarray:
        """Privatise rows ``X`` (float32/float64, 2-D, C-contiguous) whose first row has
        global index ``row_offset``.

        Returns an (n, out_dim) array of ``dtype`` (default: float32 for float32 input,
        else float64), written into ``out`` when given (C-contiguous float32/float64;
        its dtype wins). The CPU path writes the projection straight into the output
        (float32 input: a fused kernel that projects each block of rows in float32 and
        noises it while it is in cache; float64 input: one float64 GEMM) and one
        in-place pass draws the noise, adds it in float64, rounds once to the output
        dtype and counts non-finite results; a non-finite release raises
        ``ValueError`` (NaN/inf in ``X``, or an overflow), so ``X`` itself is never
        scanned on the way in.
        """
        n = X.shape[0]
        if out is None:
            if dtype is None:
                dtype = np.float32 if X.dtype == np.float32 else np.float64
            out = np.empty((n, self.out_dim), dtype=dtype)
        if self.backend == "gpu":
            bad = self._apply_gpu(X, row_offset, out)
        else:
            from trustlab.kernels import privacy_cpu as K

            parallel = n >= _PARALLEL_ROWS
            if self.phi is not None and X.dtype == np.float32:
                # float32 input: one fused pass per block of rows, the float32 projection
                # (FMA accumulation; its rounding, ~d 2^-24 relative, is far below the
                # noise) straight into the output, then the noise while the rows are in cache
                if self._bt32 is None:
                    self._bt32 = K.padded_projection(self.phi)
                kernel = K.project_noise_into if parallel else K.project_noise_into_serial
                if _use_twin(kernel, n * self.out_dim * (self.d + 50)):
                    from trustlab.kernels import privacy_numpy

                    kernel = privacy_numpy.project_noise_into
                bad = kernel(out, np.ascontiguousarray(X), self._bt32, self.noise_scale,
                             self._key0, self._key1, np.int64(row_offset))
            else:
                if self.phi is None:
                    P = X  # M1: noise in the input space
                elif out.dtype == np.float64:
                    P = np.matmul(X, self.phi.T, out=out)
                else:
                    P = X @ self.phi.T
                kernel = K.noise_into if parallel else K.noise_into_serial
                if _use_twin(kernel, n * self.out_dim * 50):
                    from trustlab.kernels import privacy_numpy

                    kernel = privacy_numpy.noise_into
                bad = kernel(out, P, self.noise_scale, self._key0, self._key1, np.int64(row_offset))
        if bad:
            if _is_device_array(out):
                X, out = X.get(), out.get()
            _raise_nonfinite(X, out, row_offset, self.noise_scale)
        return out

    def _apply_gpu(self, X, row_offset, out) -> int:
        """The device release (:mod:`trustlab.kernels.privacy_gpu`): device arrays in and
        out stay on the device; host arrays are copied in their own dtype, released on the
        device and copied back into ``out``."""
        from trustlab.kernels import privacy_gpu

        cp = privacy_gpu.get_cupy()
        if self._gpu_key is None:
            self._gpu_key = privacy_gpu.philox_key(self._key0, self._key1)
        on_device = _is_device_array(out)
        Xd = X if _is_device_array(X) else cp.asarray(X)
        phiT = None
        if self.phi is not None:
            dt = np.dtype(Xd.dtype)
            if dt not in self._phiT_gpu:
                self._phiT_gpu[dt] = cp.asarray(np.ascontiguousarray(self.phi.T, dtype=dt))
            phiT = self._phiT_gpu[dt]
        outd = out if on_device else cp.empty(out.shape, dtype=out.dtype)
        bad = privacy_gpu.release_on_device(Xd, phiT, self.noise_scale, self._gpu_key, int(row_offset), outd)
        if not on_device:
            if out.flags.c_contiguous:
                outd.get(out=out)
            else:
                out[...] = outd.get()
        return bad

    def record(self, n: int, sample: np.ndarray | None, vocab_swap: bool = False) -> ReleaseRecord:
        emp = spec = None
        if self.phi is not None:
            # a few sub-millisecond products (<= 256 x 256): on one BLAS thread, since waking
            # OpenBLAS's workers for each costs more than the product (up to ~5 ms each on a busy 2-core box)
            with _one_blas_thread():
                spec = float(np.sqrt(np.linalg.eigvalsh(self.phi @ self.phi.T)[-1]))  # = ||Φ||₂
                if sample is not None and sample.shape[0] >= 2:
                    emp = empirical_sensitivity(self.phi, sample, max_points=256)
            if emp is not None and not math.isfinite(emp):  # every sampled pair coincides (or overflowed)
                emp = None
        return ReleaseRecord(
            mechanism=self.name,
            epsilon=self.epsilon,
            delta=self.delta if self.name == "privemb" else 0.0,
            beta=self.beta if self.name == "privemb" else None,
            n=int(n), d=self.d, m=self.m,
            phi_seed=self.phi_seed if self.name == "privemb" else None,
            calibration=self.calibration,
            noise_scale=self.noise_scale,
            empirical_sensitivity=emp,
            spectral_norm=spec,
            vocab_swap=vocab_swap,
            projection=self.projection if self.name == "privemb" else "none",
            version=_version(),
            created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        )


@validate_params(
    {
        "d": [Interval(numbers.Integral, 1, None, closed="left")],
        "settings": [ReleaseSettings, "mapping", None],
        **ReleaseSettings.constraints(),  # the release parameters: declared once, in ReleaseSettings
        "random_state": ["random_state"],
        "backend": [{"auto", "cpu", "gpu"}],
        "n_hint": [Interval(numbers.Integral, 0, None, closed="left"), None],
        "streamed": ["boolean"],
        "func": [str],
    }
)
def make_mechanism(
    d: int,
    *,
    settings: ReleaseSettings | None = None,
    epsilon: float = UNSET,
    delta: float = UNSET,
    beta: float = UNSET,
    m: int | None = UNSET,
    mechanism: str = UNSET,
    backend: str = "auto",
    random_state=None,
    phi_seed: int | None = UNSET,
    allow_m_above_d: bool = UNSET,
    n_hint: int | None = None,
    streamed: bool = False,
    func: str = "privatize",
    projection: str = UNSET,
) -> Mechanism:
    """Validate the release parameters once and build a :class:`Mechanism`.

    See :func:`privatize` for the parameters. ``n_hint`` (number of vectors) feeds
    ``backend="auto"`` and, unless ``streamed`` (the release is written chunk by chunk,
    as :func:`trustlab.privacy.io.privatize_file` does), the memory check of the
    ``n_hint x m`` output.

    Parameters
    ----------
    d : int
        Input dimension of the vectors.
    settings : ReleaseSettings or dict, optional
        The release parameters (:class:`~trustlab.privacy.ReleaseSettings`).
    epsilon, delta, beta, m, mechanism, projection, phi_seed, allow_m_above_d
        Keyword shortcuts for the fields of ``settings`` (defaults there); a keyword
        given beside ``settings`` wins.
    backend : {"auto", "cpu", "gpu"}
        As in :func:`privatize`.
    random_state : None, int or numpy Generator
        Seeds Φ and the noise key (independent ``SeedSequence`` children).
    n_hint : int, optional
        Number of vectors to be released (backend choice and memory check).
    streamed : bool
        The release is written chunk by chunk (no ``n_hint x m`` output in memory).
    func : str
        Name of the calling entry point, used in error messages.

    Examples
    --------
    >>> mech = make_mechanism(300, epsilon=10, random_state=0)
    >>> mech.name, mech.d, mech.m
    ('privemb', 300, 54)
    """
    spec = ReleaseSettings.merge(settings, func=func, epsilon=epsilon, delta=delta, beta=beta, m=m,
                                 mechanism=mechanism, phi_seed=phi_seed, allow_m_above_d=allow_m_above_d,
                                 projection=projection)
    d = int(d)
    mechanism, epsilon, delta, beta, m = spec.mechanism, spec.epsilon, spec.delta, spec.beta, spec.m
    size = None if n_hint is None else int(n_hint) * d
    # auto: the GPU only for large releases on machines of few cores. Measured on an H100
    # machine (bench/results/gpu.md): a 1,000,000 x 300 -> 100 float32 release took 0.28 s
    # on the GPU (host transfers dominate) and 0.12 s on the 16 CPU threads (~0.8 GB/s of
    # input per thread: break-even near 7 threads); float64 0.35 vs 0.38 s
    backend = resolve_backend(backend, size=size, gpu_threshold=50_000_000, gpu_max_cpus=6, func=func)
    seed_phi, k0, k1 = _keys_from(random_state)
    if mechanism == "m1":
        if m is not None and int(m) != d:
            raise ValueError(f"mechanism='m1' adds noise in the input space, so m must be None or d={d}; got m={m!r}.")
        return Mechanism(name="m1", d=d, epsilon=epsilon, delta=delta, beta=beta, m=d,
                         calibration="none", phi_seed=None, key0=k0, key1=k1, backend=backend)
    if d < 2:
        raise ValueError("PrivEmb needs input dimension d >= 2; got d=1.")
    if m is None:
        m = calibrate_m(d, delta, beta)
        calibration = "default"
    else:
        calibration = "explicit"
    if m > d and not spec.allow_m_above_d:
        raise ValueError(
            f"The projection dimension m={m} exceeds the input dimension d={d} "
            f"({'calibrated from' if calibration == 'default' else 'given with'} beta={beta:g}, delta={delta:g}): "
            "the release would be larger and noisier than M1. Increase beta, pass a smaller m, "
            "or pass allow_m_above_d=True (CLI: --allow-m-above-d) to override."
        )
    if spec.phi_seed is not None:
        seed_phi = spec.phi_seed
    held = None if (n_hint is None or streamed) else int(n_hint)  # output rows held in memory
    check_memory(8 * m * d + (0 if held is None else 4 * held * m),
                 f"the {m} x {d} projection" + ("" if held is None else f" and the {held} x {m} output"),
                 "pass a smaller m (or let it be calibrated) or release in chunks (privatize_file)", func=func)
    return Mechanism(name="privemb", d=d, epsilon=epsilon, delta=delta, beta=beta, m=m,
                     calibration=calibration, phi_seed=seed_phi, key0=k0, key1=k1, backend=backend,
                     projection=spec.projection)


def _is_device_array(a) -> bool:
    """A CuPy array (the device-resident release path)."""
    return type(a).__module__.split(".", 1)[0] == "cupy"


def _raise_nonfinite(X, out, row_offset, noise_scale):
    """Explain a release with NaN/inf values: bad input, or an overflow."""
    if X.dtype.kind == "f":
        bad_in = ~np.isfinite(X)
        if bad_in.any():
            i, j = np.argwhere(bad_in)[0]
            raise ValueError(
                f"X contains NaN or infinity ({int(bad_in.sum())} value(s); first at index "
                f"({int(i) + int(row_offset)}, {int(j)})). Remove or impute them first."
            )
    r = int(np.argwhere(~np.isfinite(out))[0][0]) + int(row_offset)
    big = float(np.max(np.abs(X))) if X.size else 0.0
    if not np.isfinite(noise_scale):
        fix = "epsilon is so small that the noise scale itself overflows: use a larger epsilon"
    elif out.dtype != np.float64:
        fix = "Rescale X, use a larger epsilon, or release in float64 (dtype=np.float64)"
    else:
        fix = "Rescale X or use a larger epsilon"
    raise ValueError(
        f"the release overflowed {out.dtype.name} (first non-finite value in row {r}; max |X| = {big:g}, "
        f"noise scale = {noise_scale:g}). {fix}."
    )


def _check_dtype(dtype, func="privatize") -> np.dtype:
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"{func}: dtype must be 'float32' or 'float64' (or None to follow X); got {dtype!r}.")
    return dt


def _as_matrix(X, name: str = "X", func: str = "privatize"):
    """Embeddings as they come, as something ``np.asarray`` reads: a gensim ``KeyedVectors``
    (duck-typed: ``.vectors`` and ``.index_to_key``; gensim is not imported) gives its
    ``.vectors`` (rows in ``index_to_key`` order); a SciPy sparse matrix is densified (the
    release is dense anyway; refused when the dense copy would not fit in memory); anything
    that is not a matrix of numbers is refused with a message naming what was received."""
    import sys

    if hasattr(X, "vectors") and hasattr(X, "index_to_key"):
        return X.vectors
    sp = sys.modules.get("scipy.sparse")
    if sp is not None and sp.issparse(X):
        if X.ndim != 2:
            raise ValueError(f"{func}: {name} must be 2-D (n vectors x d dimensions); got a sparse array of "
                             f"shape {X.shape}.")
        dt = np.float32 if X.dtype == np.float32 else np.float64
        check_memory(int(X.shape[0]) * int(X.shape[1]) * np.dtype(dt).itemsize,
                     f"the dense copy of the {X.shape[0]} x {X.shape[1]} sparse {name}",
                     "privatize it in row blocks (X[i:j]) or use privatize_file", func=func)
        return X.toarray().astype(dt, copy=False)
    if X is None or isinstance(X, (str, bytes, dict, set)):
        raise TypeError(f"{func}: {name} must be a 2-D array of embedding vectors (NumPy array, list of rows, "
                        f"SciPy sparse matrix or gensim KeyedVectors); got {type(X).__name__}.")
    return X


def _validate_X(X, func="privatize") -> np.ndarray:
    """2-D float32/float64 C-contiguous X. An array that already has that form is
    returned as is (no copy, no scan): finiteness is checked on the release itself
    (the noise kernels count non-finite outputs), which also catches overflow."""
    X = _as_matrix(X, "X", func)
    if (isinstance(X, np.ndarray) and X.dtype in (np.float32, np.float64) and X.ndim == 2
            and X.size and X.flags.c_contiguous):
        return X
    dtype = np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64
    return check_finite_array(X, "X", ndim=2, dtype=dtype)


@validate_params({
    "X": [object], "settings": [ReleaseSettings, "mapping", None],
    **ReleaseSettings.constraints(),  # the release parameters: declared once, in ReleaseSettings
    "random_state": ["random_state"], "backend": [{"auto", "cpu", "gpu"}],
    "vocab": [object, None], "chunk_size": [Interval(numbers.Integral, 1, None, closed="left")],
})
def privatize(
    X,
    *,
    settings: ReleaseSettings | None = None,
    epsilon: float = UNSET,
    delta: float = UNSET,
    beta: float = UNSET,
    m: int | None = UNSET,
    mechanism: str = UNSET,
    backend: str = "auto",
    random_state=None,
    vocab=None,
    phi_seed: int | None = UNSET,
    allow_m_above_d: bool = UNSET,
    chunk_size: int = 262144,
    dtype=None,
    projection: str = UNSET,
) -> PrivateRelease:
    """Release private versions of embedding vectors under (ε, δ)-Lipschitz privacy.

    ``privemb`` (M2, Feyisetan & Kasiviswanathan): ``w_i = Φ x_i + κ_i`` with a public
    Φ ∈ R^{m×d} of i.i.d. N(0, 1/m) entries and κ_i of density ∝ exp(−ε‖z‖/(1+β)) in R^m
    (uniform direction × Gamma(m, (1+β)/ε) radius), fresh for every vector.
    ``m1`` (Feyisetan et al. 2020): ``v_i = x_i + N_i`` with N_i ∝ exp(−ε‖z‖) in R^d,
    optionally swapped to the exact nearest ``vocab`` row.

    Parameters
    ----------
    X : array-like of shape (n, d), scipy.sparse matrix or gensim KeyedVectors
        Finite vectors. A C-contiguous float32/float64 array is used without a copy;
        NaN/inf (or an overflowing release) raise ``ValueError``. A sparse matrix is
        densified (refused when the dense copy would not fit in memory); a
        ``KeyedVectors`` (anything with ``.vectors`` and ``.index_to_key``) gives its
        vectors, so row ``i`` of the release belongs to ``X.index_to_key[i]``.
    settings : ReleaseSettings or dict, optional
        The release parameters as one object (:class:`~trustlab.privacy.ReleaseSettings`,
        or its ``to_dict()``). ``epsilon`` through ``allow_m_above_d`` and ``projection``
        below are keyword shortcuts for its fields, with its defaults; a keyword given
        beside ``settings`` wins (``privatize(X, settings=s, epsilon=2)`` is
        ``privatize(X, settings=s.replace(epsilon=2))``).
    epsilon : float
        Privacy parameter ε > 0 (required, here or in ``settings``).
    delta : float, default 1e-6
        δ ∈ (0, 1) (PrivEmb's JL failure probability; M1 is (ε, 0)-private).
    beta : float, default 0.9
        JL distortion β ∈ (0, 1) (PrivEmb only). Larger β → smaller m → less noise.
    m : int, optional
        Projection dimension; default :func:`trustlab.privacy.calibrate_m` (d, δ, β).
    mechanism : {"privemb", "m1"}
    projection : {"gaussian", "achlioptas", "very_sparse"}
        PrivEmb's Φ: i.i.d. N(0, 1/m) (default, the paper's), Achlioptas's sparse ±√(3/m)
        matrix (density 1/3; Achlioptas proves the Gaussian JL bound for it) or Li et al.'s
        very sparse one (density 1/√d; JL only asymptotically, and far worse on sparse
        inputs). Φ is stored dense either way (same speed); the record names the kind.
        Check a sparse Φ on your data with :func:`trustlab.privacy.privacy_loss` (its
        ``guaranteed``) or :func:`trustlab.privacy.jl_distortion`.
    backend : {"auto", "cpu", "gpu"}
        ``gpu``: a cuBLAS projection and counter-based Philox noise kernels
        (:mod:`trustlab.kernels.privacy_gpu`; same distribution as the CPU, different
        bits; a fixed key gives the same release whatever the chunking). For host
        arrays ``auto`` takes the GPU only for releases of at least 5e7 input values on
        machines of at most 6 CPU threads (measured break-even: bench/results/gpu.md).
        A **CuPy array** ``X`` is released on the device and the vectors come back as a
        CuPy array (``auto`` and ``gpu``; ``cpu`` is refused, as is ``vocab``).
    random_state : None, int or numpy Generator
        ``None`` (default): OS entropy. Fix it only when you need reproducibility — anyone
        knowing (or guessing) the seed can remove the noise; integer seeds are for tests.
        Φ's seed and the noise key come from independent ``SeedSequence`` children, so
        the published ``phi_seed`` does not reproduce the noise.
    vocab : array-like of shape (V, d), scipy.sparse matrix or KeyedVectors, optional
        M1 only: swap each noisy vector to its exact Euclidean nearest vocabulary row.
    phi_seed : int, optional
        Reuse the public Φ of an earlier release.
    allow_m_above_d : bool
        Permit m > d.
    chunk_size : int
        Rows per batch (bounds temporary memory to about chunk_size × m floats). Large
        batches keep the BLAS and Numba thread pools from thrashing on small CPUs.
    dtype : {None, "float32", "float64"}
        dtype of the release; ``None`` (default) follows X (float32 in → float32 out,
        anything else → float64).

    Returns
    -------
    PrivateRelease
        Unpacks as ``(vectors, record)``: array (n, m) of ``dtype`` and :class:`ReleaseRecord`.

    Notes
    -----
    **Precision.** float32 input with a float32 release runs float32 end to end where
    it is only rounding: Φx is computed in float32 (fused multiply-adds in input order,
    row by row, so the same bits whatever the chunking; relative error ~d·2⁻²⁴, orders
    of magnitude below the noise) straight into the output buffer, and the noise is
    added to each block of rows while it is in cache. What stays float64, and why: the secret key
    expansion and the uniform/normal variates (52-53-bit ziggurat magnitudes), the
    Gamma(m, (1+β)/ε) radius, the normalisation ‖z‖ of the direction, and the sum
    ``Φx + κ`` itself, which is formed in float64 and rounded *once* to float32. So the
    radius and direction are sampled exactly as in the float64 release (same streams,
    same bits) and the float32 release is exactly the float32 rounding of the
    float64 release computed from the float32 projection; rounding the released value
    is post-processing. As for any floating-point implementation of a continuous
    mechanism (Mironov, CCS 2012), the guarantee is that of the real-valued mechanism.

    **Speed on few cores.** After a multi-threaded BLAS call (yours, before
    ``privatize``, or the float64 path's GEMM), OpenBLAS keeps its idle worker threads
    spinning for ~0.1 s, and the release that follows shares the cores with them (100k x
    300 float32 on a busy 2-core box: ~85 ms instead of ~60 ms, against a ~55 ms bare
    GEMM; bench/results/perf.md). Setting ``OPENBLAS_THREAD_TIMEOUT=4`` in the
    environment *before NumPy is imported* makes them sleep at once; the ``trustlab``
    console command does this itself.

    Raises
    ------
    ValueError
        ε ≤ 0, δ or β outside (0, 1), m > d without override, NaN/inf in X or vocab,
        vocab dimension different from d, unknown mechanism/backend.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).standard_normal((100, 300))
    >>> W, rec = privatize(X, epsilon=10, beta=0.9, random_state=0)
    >>> W.shape, rec.m, rec.mechanism
    ((100, 54), 54, 'privemb')
    >>> V, rec1 = privatize(X, epsilon=10, mechanism="m1", random_state=0)
    >>> V.shape
    (100, 300)
    """
    spec = ReleaseSettings.merge(settings, func="privatize", epsilon=epsilon, delta=delta, beta=beta, m=m,
                                 mechanism=mechanism, phi_seed=phi_seed, allow_m_above_d=allow_m_above_d,
                                 projection=projection)
    if _is_device_array(X):
        return _privatize_device(X, spec, backend, random_state, vocab, dtype)
    X = _validate_X(X)
    n, d = X.shape
    mech = make_mechanism(d, settings=spec, backend=backend, random_state=random_state, n_hint=n)
    V = None
    if vocab is not None:
        if mech.name != "m1":
            raise ValueError("vocab (nearest-neighbour swap) applies to mechanism='m1' only.")
        V = check_finite_array(_as_matrix(vocab, "vocab"), "vocab", ndim=2)
        if V.shape[1] != d:
            raise ValueError(f"vocab has dimension {V.shape[1]} but X has dimension {d}; they must match.")
    if dtype is None:
        dtype = np.float32 if X.dtype == np.float32 else np.float64
    dtype = _check_dtype(dtype)
    out = np.empty((n, mech.out_dim), dtype=dtype)
    for lo in range(0, n, chunk_size):
        hi = min(n, lo + chunk_size)
        mech.apply(X[lo:hi], lo, out=out[lo:hi])
    idx = None
    if V is not None:
        idx = nearest_neighbor_swap(out, V)
        out = V[idx].astype(dtype, copy=False)
    return PrivateRelease(out, mech.record(n, X[: min(n, 256)], vocab_swap=V is not None), idx)


def _privatize_device(X, spec, backend, random_state, vocab, dtype) -> PrivateRelease:
    """:func:`privatize` on a CuPy array: the release is computed and returned on the device."""
    if backend == "cpu":
        raise ValueError(
            "X is a CuPy (device) array but backend='cpu' was requested. Pass backend='gpu' (or 'auto') "
            "to release it on the device, or X.get() to release a host copy on the CPU."
        )
    if vocab is not None:
        raise ValueError(
            "vocab (M1's nearest-neighbour swap) is not available for a CuPy (device) X; "
            "pass X.get() to release on the host with the swap."
        )
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must be a non-empty 2-D array of shape (n, d); got a CuPy array of shape {X.shape}.")
    if X.dtype.kind not in "fiub":
        raise ValueError(f"X must hold real numbers; got a CuPy array of dtype {X.dtype}.")
    from trustlab._backend import get_cupy

    cp = get_cupy()
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    X = cp.ascontiguousarray(X)
    n, d = X.shape
    mech = make_mechanism(d, settings=spec, backend="gpu", random_state=random_state, n_hint=None)
    if dtype is None:
        dtype = np.float32 if X.dtype == np.float32 else np.float64
    dtype = _check_dtype(dtype)
    try:
        out = cp.empty((n, mech.out_dim), dtype=dtype)
        mech.apply(X, 0, out=out)  # one GEMM and two kernels over the whole array
    except cp.cuda.memory.OutOfMemoryError as exc:
        raise MemoryError(
            f"the device release of {n:,} x {d} -> {mech.out_dim} ({np.dtype(dtype).name}) does not fit in "
            f"the GPU's free memory ({exc}). Pass a host array (X.get()), which is released in chunks, or "
            "release from a file with privatize_file."
        ) from None
    return PrivateRelease(out, mech.record(n, cp.asnumpy(X[: min(n, 256)])), None)


@validate_params({"Q": ["array-like"], "vocab": ["array-like"],
                  "block": [Interval(numbers.Integral, 1, None, closed="left")], "precision": [{"float64", "float32"}]})
def nearest_neighbor_swap(Q, vocab, *, block: int = 8192, precision: str = "float64") -> np.ndarray:
    """Exact Euclidean nearest vocabulary row for each query (M1's swap step).

    Blocked GEMM + running argmin of ``‖e_j‖² − 2⟨q, e_j⟩`` in float64 (never
    TF32/fp16). With ``precision="float32"`` the GEMM runs in float32 and every row whose
    winner is not separated from the runner-up by a rigorous rounding bound is recomputed
    exactly in float64, so the answer is still exact. Ties go to the lowest index.

    Parameters
    ----------
    Q : array-like (n, d)
    vocab : array-like (V, d)
    block : int
        Vocabulary rows per GEMM block.
    precision : {"float64", "float32"}

    Returns
    -------
    ndarray of int64, shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> E = np.eye(3)
    >>> nearest_neighbor_swap(np.array([[0.9, 0.1, 0.0], [0.0, 0.2, 1.1]]), E)
    array([0, 2])
    """
    precision = check_option(precision, "precision", ["float64", "float32"], func="nearest_neighbor_swap")
    Q = check_finite_array(Q, "Q", ndim=2)
    V = check_finite_array(vocab, "vocab", ndim=2)
    if Q.shape[1] != V.shape[1]:
        raise ValueError(
            f"vocab has dimension {V.shape[1]} but the queries have dimension {Q.shape[1]}; they must match."
        )
    block = check_int(block, "block", low=1, func="nearest_neighbor_swap")
    # the nearest row does not depend on the scale, but squared norms overflow (float32:
    # entries beyond ~1e19; float64: ~1e154) or underflow: rescale such inputs exactly
    lim = 2.0**60 if precision == "float32" else 2.0**500
    f = pow2_scale(Q, V, keep=(1.0 / lim, lim))
    if f != 1.0:
        Q, V = Q * f, V * f
    norms = np.einsum("ij,ij->i", V, V)
    if precision == "float64":
        return _exact_rows(Q, V, norms, block)[1]
    from trustlab.kernels.privacy_cpu import nn_top2_update

    n, d = Q.shape
    Q32 = Q.astype(np.float32)
    V32 = V.astype(np.float32)
    best = np.full(n, np.inf)
    second = np.full(n, np.inf)
    bidx = np.zeros(n, dtype=np.int64)
    for lo in range(0, V.shape[0], block):
        hi = min(V.shape[0], lo + block)
        G = np.ascontiguousarray((Q32 @ V32[lo:hi].T).astype(np.float64))
        nn_top2_update(G, np.ascontiguousarray(norms[lo:hi]), np.int64(lo), best, bidx, second)
    # Rounding bound on a float32 score: inputs rounded (2u) plus a length-d dot
    # product (gamma_d), times 2 for the factor in -2<q,e>; doubled again for safety.
    u = 2.0**-24
    gam = (d + 2) * u / (1 - (d + 2) * u)
    tol = 4.0 * (gam + 2 * u) * np.linalg.norm(Q, axis=1) * math.sqrt(norms.max()) + 1e-300
    exact_best = norms[bidx] - 2.0 * np.einsum("ij,ij->i", Q, V[bidx])
    # every column that could beat (or tie) the winner has float32 score <= exact_best + tol
    suspect = np.nonzero(second <= exact_best + 2 * tol)[0]
    if suspect.size:
        bidx[suspect] = _exact_rows(np.ascontiguousarray(Q[suspect]), V, norms, block)[1]
    return bidx


def _exact_rows(Q, V, norms, block):
    from trustlab.kernels.privacy_cpu import nn_argmin_update

    n = Q.shape[0]
    best = np.full(n, np.inf)
    bidx = np.zeros(n, dtype=np.int64)
    for lo in range(0, V.shape[0], block):
        hi = min(V.shape[0], lo + block)
        G = np.ascontiguousarray(Q @ V[lo:hi].T)
        nn_argmin_update(G, np.ascontiguousarray(norms[lo:hi]), np.int64(lo), best, bidx)
    return best, bidx


def iter_chunks(mech: Mechanism, chunks: Iterator[np.ndarray]) -> Iterator[np.ndarray]:
    """Privatise an iterator of row chunks, keeping global row offsets."""
    off = 0
    for C in chunks:
        yield mech.apply(C, off)
        off += C.shape[0]


@validate_params({"X": [object], "settings": [ReleaseSettings, "mapping", None],
                  **ReleaseSettings.constraints(),  # the release parameters: declared once, in ReleaseSettings
                  "random_state": ["random_state"]})
def privatize_dask(X, *, settings: ReleaseSettings | None = None, epsilon: float = UNSET, delta: float = UNSET,
                   beta: float = UNSET, m: int | None = UNSET, mechanism: str = UNSET, random_state=None,
                   phi_seed: int | None = UNSET, allow_m_above_d: bool = UNSET, projection: str = UNSET):
    """Dask-array path for a cluster: each block is privatised where it lives.

    Rows keep their global index as the noise-stream counter, so the result equals
    :func:`privatize` on the same data with the same ``random_state``. Non-finite
    values are detected lazily (the computation raises). Returns ``(dask_array, record)``;
    the record's ``empirical_sensitivity`` is ``None`` (no eager sample).

    Parameters
    ----------
    X : dask.array.Array of shape (n, d)
        The vectors, chunked by rows (columns are rechunked into one block).
    settings : ReleaseSettings or dict, optional
        The release parameters (:class:`~trustlab.privacy.ReleaseSettings`).
    epsilon, delta, beta, m, mechanism, phi_seed, allow_m_above_d, projection
        Keyword shortcuts for the fields of ``settings`` (defaults there; ``epsilon`` is
        required, here or in ``settings``); a keyword given beside ``settings`` wins.
    random_state : None, int or numpy Generator
        As in :func:`privatize`; the same seed gives the same release as :func:`privatize`.

    Examples
    --------
    >>> import numpy as np, dask.array as da
    >>> X = np.random.default_rng(0).standard_normal((50, 300))
    >>> W, rec = privatize_dask(da.from_array(X, chunks=(20, 300)), epsilon=5, random_state=1)
    >>> np.allclose(W.compute(), privatize(X, epsilon=5, random_state=1).vectors)
    True
    """
    import dask.array  # noqa: F401  (fail early, with the import error, without dask)

    spec = ReleaseSettings.merge(settings, func="privatize_dask", epsilon=epsilon, delta=delta, beta=beta, m=m,
                                 mechanism=mechanism, phi_seed=phi_seed, allow_m_above_d=allow_m_above_d,
                                 projection=projection)
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D dask array, got {X.ndim}D with shape {X.shape}.")
    n, d = X.shape
    mech = make_mechanism(int(d), settings=spec, backend="cpu", random_state=random_state, func="privatize_dask")
    X = X.rechunk({1: -1})

    def _blk(xb, block_info=None):
        off = block_info[0]["array-location"][0][0]
        xb = _validate_X(xb)
        return mech.apply(xb, off, dtype=np.float64)

    out = X.map_blocks(_blk, dtype=np.float64, chunks=(X.chunks[0], (mech.out_dim,)))
    return out, mech.record(int(n), None)
