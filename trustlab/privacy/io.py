"""Streaming vector I/O with bounded memory, and :func:`privatize_file`.

Readers yield ``(words_or_None, float32/float64 chunk)`` so a 10M × 300 file never sits in
memory; writers put the output beside the target under a temporary name and rename it
into place only when every chunk succeeded (nothing is ever written half-way).

Formats (chosen by extension, or ``fmt=``):

========== =========================================================================
``npy``    NumPy .npy (2-D, float32/float64, C order); read with plain file reads
``w2v``    word2vec text (``.txt``, ``.vec``): header ``n d``, then ``word v1 … vd``
``w2vbin`` word2vec binary (``.bin``): header ``n d\\n``, then ``word`` + d float32 LE
``parquet`` one list/fixed-size-list column of floats (``vector``/``embedding`` or the
           only list column) plus an optional string column ``word``; needs pyarrow
``kv``     gensim ``KeyedVectors`` (``.kv``, ``.model``); read only, needs gensim
========== =========================================================================
"""
from __future__ import annotations

import contextlib
import io as _io
import numbers
import os
import time
import warnings
from pathlib import Path
from typing import Iterator

import numpy as np

from trustlab._settings import UNSET
from trustlab._validation import Interval, check_int, validate_params
from trustlab.privacy.settings import ReleaseSettings

__all__ = ["VectorSource", "open_vectors", "read_vectors", "write_vectors", "privatize_file", "FORMATS"]

FORMATS = ("npy", "w2v", "w2vbin", "parquet", "kv")
_EXT = {".npy": "npy", ".txt": "w2v", ".vec": "w2v", ".bin": "w2vbin", ".parquet": "parquet",
        ".pq": "parquet", ".kv": "kv", ".model": "kv"}


def guess_format(path, fmt: str | None = None) -> str:
    if fmt is not None:
        if fmt not in FORMATS:
            raise ValueError(f"Unknown vector format {fmt!r}. Valid choices are: {list(FORMATS)}.")
        return fmt
    ext = Path(path).suffix.lower()
    if ext not in _EXT:
        raise ValueError(
            f"Cannot tell the vector format of {str(path)!r} from its extension {ext!r}; "
            f"use one of {sorted(_EXT)} or, from Python, pass input_format=/output_format= (one of {list(FORMATS)})."
        )
    return _EXT[ext]


class VectorSource:
    """A streamed vector file: ``n``, ``d``, ``has_words`` and :meth:`chunks`."""

    def __init__(self, path, fmt: str | None = None):
        self.path = Path(path)
        if not self.path.exists():
            raise FileNotFoundError(f"input file {str(path)!r} does not exist")
        if self.path.is_dir():
            raise IsADirectoryError(f"input {str(path)!r} is a directory, not a vector file")
        self.fmt = guess_format(path, fmt)
        getattr(self, f"_open_{self.fmt}")()

    # -- headers -------------------------------------------------------------
    def _open_npy(self):
        with open(self.path, "rb") as f:
            try:
                version = np.lib.format.read_magic(f)
                reader = (
                    np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                )
                shape, fortran, dtype = reader(f)
            except ValueError as exc:
                raise ValueError(f"{self.path} is not a valid .npy file: {exc}") from None
            self._data_offset = f.tell()
        if len(shape) != 2:
            raise ValueError(f"{self.path}: expected a 2-D array of vectors, got shape {shape}.")
        if fortran:
            raise ValueError(f"{self.path}: Fortran-ordered .npy is not supported for streaming; save with C order.")
        if dtype not in (np.dtype("<f4"), np.dtype("<f8")):
            raise ValueError(f"{self.path}: expected little-endian float32/float64 data, got {dtype}.")
        self.n, self.d = int(shape[0]), int(shape[1])
        if self.d == 0 and self.n > 0:
            raise ValueError(f"{self.path}: the vectors have 0 dimensions (shape {shape}); "
                             "expected an (n, d) array with d >= 1.")
        # check the declared size against the file before anything is sized from it
        # (a corrupt or hostile header could announce an array of exabytes)
        need = self.n * self.d * dtype.itemsize
        have = self.path.stat().st_size - self._data_offset
        if need > have:
            raise ValueError(f"{self.path}: file is truncated: its header declares shape {shape} "
                             f"({need:,} bytes of {dtype}) but only {max(have, 0):,} bytes of data follow.")
        self.dtype = dtype
        self.has_words = False

    def _read_w2v_header(self, f):
        line = f.readline()
        parts = line.split()
        try:
            n, d = int(parts[0]), int(parts[1])
            if len(parts) != 2 or n < 0 or d < 1:
                raise ValueError
        except (ValueError, IndexError):
            try:
                got = repr(line[:80].decode("utf-8"))
            except UnicodeDecodeError:
                got = "binary data"
            raise ValueError(
                f"{self.path}: the first line must be the word2vec header 'n_vectors dimension', got {got}."
            ) from None
        return n, d

    def _open_w2v(self):
        with open(self.path, "rb") as f:
            self.n, self.d = self._read_w2v_header(f)
        self.dtype = np.dtype(np.float32)
        self.has_words = True

    _open_w2vbin = _open_w2v

    def _open_parquet(self):
        try:
            import pyarrow.parquet as pq
        except ImportError:  # pragma: no cover
            raise ValueError("reading parquet needs pyarrow: pip install 'trustlab[parquet]'") from None
        pf = pq.ParquetFile(self.path)
        import pyarrow as pa

        schema = pf.schema_arrow
        lists = [f.name for f in schema if pa.types.is_list(f.type) or pa.types.is_fixed_size_list(f.type)
                 or pa.types.is_large_list(f.type)]
        col = next((c for c in ("vector", "embedding", "vectors") if c in lists), None)
        if col is None:
            if len(lists) != 1:
                raise ValueError(f"{self.path}: expected one list column of floats named 'vector' or 'embedding'; "
                                 f"found list columns {lists}.")
            col = lists[0]
        self._col = col
        self.has_words = "word" in schema.names
        self.n = pf.metadata.num_rows
        self.dtype = np.dtype(np.float32)
        first = next(pf.iter_batches(batch_size=1, columns=[col]), None)
        if first is None:
            raise ValueError(f"{self.path} holds no vectors.")
        self.d = len(first.column(0)[0].as_py())

    def _open_kv(self):
        try:
            from gensim.models import KeyedVectors
        except ImportError:
            raise ValueError("reading gensim KeyedVectors needs gensim: pip install gensim") from None
        kv = KeyedVectors.load(str(self.path), mmap="r")
        self._kv = kv
        self.n, self.d = kv.vectors.shape
        self.dtype = kv.vectors.dtype
        self.has_words = True

    # -- chunk iterators --------------------------------------------------------
    def chunks(self, chunk_size: int = 16384) -> Iterator[tuple[list | None, np.ndarray]]:
        """Yield ``(words or None, array (k, d))`` chunks in file order."""
        chunk_size = check_int(chunk_size, "chunk_size", low=1)
        seen = 0
        for words, X in getattr(self, f"_chunks_{self.fmt}")(chunk_size):
            if X.shape[1] != self.d:
                raise ValueError(f"{self.path}: vector {seen + 1} has dimension {X.shape[1]}, expected {self.d}.")
            bad = ~np.isfinite(X)
            if bad.any():
                r, c = np.argwhere(bad)[0]
                raise ValueError(f"{self.path}: vector {seen + int(r) + 1} contains NaN or infinity "
                                 f"(column {int(c)}); remove or impute it first.")
            seen += X.shape[0]
            yield words, X
        if seen != self.n:
            raise ValueError(f"{self.path}: the header announces {self.n} vectors but the file holds {seen}.")

    def _chunks_npy(self, cs):
        row_bytes = self.d * self.dtype.itemsize
        with open(self.path, "rb") as f:
            f.seek(self._data_offset)
            left = self.n
            while left > 0:
                k = min(cs, left)
                buf = np.empty((k, self.d), dtype=self.dtype)
                got = f.readinto(memoryview(buf).cast("B"))
                if got != k * row_bytes:
                    raise ValueError(f"{self.path}: file is truncated (expected {self.n} rows).")
                left -= k
                yield None, buf

    def _chunks_w2v(self, cs):
        with open(self.path, "rb") as f:
            self._read_w2v_header(f)
            words: list[str] = []
            rows: list[list[str]] = []
            lineno = 1
            for raw in f:
                lineno += 1
                parts = raw.rstrip(b"\r\n").split(b" ")
                parts = [p for p in parts if p]
                if not parts:
                    continue
                if len(parts) != self.d + 1:
                    raise ValueError(
                        f"{self.path}: line {lineno} has {len(parts) - 1} values, expected {self.d} "
                        "(ragged or malformed word2vec text file)."
                    )
                words.append(parts[0].decode("utf-8", errors="replace"))
                rows.append(parts[1:])
                if len(rows) == cs:
                    yield words, self._parse_rows(rows, lineno)
                    words, rows = [], []
            if rows:
                yield words, self._parse_rows(rows, lineno)

    def _parse_rows(self, rows, lineno):
        try:
            return np.array(rows, dtype=np.float32)
        except ValueError as exc:
            raise ValueError(f"{self.path}: non-numeric value near line {lineno}: {exc}") from None

    def _chunks_w2vbin(self, cs):
        row_bytes = 4 * self.d
        with open(self.path, "rb") as f:
            self._read_w2v_header(f)
            buf = b""
            pos = 0
            eof = False
            left = self.n
            done = 0
            while left > 0:
                k = min(cs, left)
                words = []
                out = np.empty((k, self.d), dtype="<f4")
                for i in range(k):
                    while True:  # need "word " + row_bytes available in buf[pos:]
                        sp = buf.find(b" ", pos)
                        if sp >= 0 and len(buf) - sp - 1 >= row_bytes:
                            break
                        if eof:
                            raise ValueError(f"{self.path}: file is truncated at vector {done + i + 1}.")
                        more = f.read(1 << 20)
                        eof = not more
                        buf = buf[pos:] + more
                        pos = 0
                    words.append(buf[pos:sp].strip(b"\n").decode("utf-8", errors="replace"))
                    out[i] = np.frombuffer(buf, dtype="<f4", count=self.d, offset=sp + 1)
                    pos = sp + 1 + row_bytes
                left -= k
                done += k
                yield words, out

    def _chunks_parquet(self, cs):
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(self.path)
        cols = [self._col] + (["word"] if self.has_words else [])
        for batch in pf.iter_batches(batch_size=cs, columns=cols):
            arr = batch.column(0)
            try:
                flat = arr.flatten().to_numpy(zero_copy_only=False).astype(np.float64)
                lengths = np.diff(arr.offsets.to_numpy()) if hasattr(arr, "offsets") else None
            except Exception as exc:  # pragma: no cover
                raise ValueError(f"{self.path}: column {self._col!r} is not a list of floats ({exc}).") from None
            if lengths is not None and (lengths != self.d).any():
                bad = int(np.nonzero(lengths != self.d)[0][0])
                raise ValueError(
                    f"{self.path}: a vector has {int(lengths[bad])} values, expected {self.d} (ragged column)."
                )
            if arr.null_count:
                raise ValueError(f"{self.path}: column {self._col!r} has missing vectors.")
            words = batch.column(1).to_pylist() if self.has_words else None
            yield words, flat.reshape(-1, self.d)

    def _chunks_kv(self, cs):
        kv = self._kv
        for lo in range(0, self.n, cs):
            hi = min(self.n, lo + cs)
            yield list(kv.index_to_key[lo:hi]), np.array(kv.vectors[lo:hi])


def open_vectors(path, fmt: str | None = None) -> VectorSource:
    """Open a vector file for streaming (see the module docstring for formats).

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.npy"); np.save(p, np.ones((5, 3)))
    >>> src = open_vectors(p); (src.n, src.d, src.fmt)
    (5, 3, 'npy')
    """
    return VectorSource(path, fmt)


def read_vectors(path, fmt: str | None = None):
    """Read a whole vector file: ``(words or None, float array (n, d))``.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.npy"); np.save(p, np.eye(3))
    >>> read_vectors(p)[1].shape
    (3, 3)
    """
    src = open_vectors(path, fmt)
    words, parts = [], []
    for w, X in src.chunks(65536):
        parts.append(X)
        if w is not None:
            words.extend(w)
    X = np.concatenate(parts) if parts else np.empty((0, src.d))
    return (words if src.has_words else None), X


class _Writer:
    def __init__(self, tmp: Path, fmt: str, n: int, k: int, dtype):
        self.fmt = fmt
        self.n, self.k = n, k
        self.dtype = np.dtype(dtype)
        self.count = 0
        if fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            self._pa = pa
            self._schema = pa.schema(
                [
                    ("word", pa.string()),
                    ("vector", pa.list_(pa.float32() if self.dtype == np.float32 else pa.float64(), k)),
                ]
            )
            self._pw = pq.ParquetWriter(str(tmp), self._schema)
            return
        self.f = open(tmp, "wb")
        if fmt == "npy":
            np.lib.format.write_array_header_1_0(
                self.f, {"descr": np.lib.format.dtype_to_descr(self.dtype), "fortran_order": False, "shape": (n, k)})
        elif fmt in ("w2v", "w2vbin"):
            self.f.write(f"{n} {k}\n".encode())
        else:
            raise ValueError(f"Cannot write format {fmt!r}; choose one of ['npy', 'w2v', 'w2vbin', 'parquet'].")

    def write(self, words, Y):
        Y = np.ascontiguousarray(Y, dtype=self.dtype if self.fmt != "w2vbin" else np.float32)
        if words is None and self.fmt != "npy":
            words = [f"v{self.count + i}" for i in range(Y.shape[0])]
        if self.fmt == "npy":
            self.f.write(Y.tobytes())
        elif self.fmt == "w2vbin":
            Yb = Y.astype("<f4")
            buf = _io.BytesIO()
            for w, row in zip(words, Yb):
                buf.write(w.encode() + b" " + row.tobytes() + b"\n")
            self.f.write(buf.getvalue())
        elif self.fmt == "w2v":
            fmtstr = "%.7g" if self.dtype == np.float32 else "%.17g"
            buf = _io.StringIO()
            body = np.char.mod(fmtstr, Y)
            for w, row in zip(words, body):
                buf.write(w + " " + " ".join(row) + "\n")
            self.f.write(buf.getvalue().encode())
        else:
            pa = self._pa
            flat = pa.array(Y.ravel(), type=self._schema.field("vector").type.value_type)
            vec = pa.FixedSizeListArray.from_arrays(flat, self.k)
            self._pw.write_table(pa.table({"word": pa.array(list(words), pa.string()), "vector": vec},
                                          schema=self._schema))
        self.count += Y.shape[0]

    def close(self):
        if self.fmt == "parquet":
            self._pw.close()
        else:
            self.f.flush()
            os.fsync(self.f.fileno())
            self.f.close()

    def abort(self):
        with contextlib.suppress(Exception):
            if self.fmt == "parquet":
                self._pw.close()
            else:
                self.f.close()


def _umask_chmod(path) -> None:
    """Temporary files are created 0600; give the final file the usual umask mode."""
    mask = os.umask(0)
    os.umask(mask)
    with contextlib.suppress(OSError):
        os.chmod(path, 0o666 & ~mask)


def write_vectors(path, X, words=None, fmt: str | None = None, dtype=np.float32) -> None:
    """Write vectors atomically (temporary file + rename).

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x.txt")
    >>> write_vectors(p, np.eye(2), ["a", "b"]); read_vectors(p)[0]
    ['a', 'b']
    """
    from trustlab._fileio import atomic_path

    fmt = guess_format(path, fmt)
    X = np.asarray(X)
    with atomic_path(path) as tmp:
        _umask_chmod(tmp)
        w = _Writer(tmp, fmt, X.shape[0], X.shape[1], dtype)
        try:
            w.write(words, X)
        except BaseException:
            w.abort()
            raise
        w.close()


@validate_params(
    {
        "input": ["path"],
        "output": ["path"],
        "settings": [ReleaseSettings, "mapping", None],
        **ReleaseSettings.constraints(),  # the release parameters: declared once, in ReleaseSettings
        "random_state": ["random_state"],
        "backend": [{"auto", "cpu", "gpu"}],
        "chunk_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "input_format": [str, None],
        "output_format": [str, None],
        "progress": ["boolean"],
        "record_path": ["path", None],
    }
)
def privatize_file(
    input,
    output,
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
    chunk_size: int = 65536,
    input_format: str | None = None,
    output_format: str | None = None,
    dtype=np.float32,
    progress: bool = False,
    record_path=None,
    projection: str = UNSET,
) -> dict:
    """Stream a vector file through :func:`trustlab.privacy.privatize` with bounded memory.

    The input is read chunk by chunk (``chunk_size`` rows), each chunk projected and
    noised in one pass, and appended to a temporary file beside ``output`` that is
    renamed into place only at the end. Memory is O(chunk_size · d), independent of n.
    Rows keep their global index as their noise-stream counter, so the output equals
    the in-memory :func:`privatize` result for the same ``random_state``.

    Parameters
    ----------
    input, output : path
        Files; formats from the extension or ``input_format`` / ``output_format``.
    settings : ReleaseSettings or dict, optional
        The release parameters (:class:`~trustlab.privacy.ReleaseSettings`); ``epsilon``,
        ``delta``, ``beta``, ``m``, ``mechanism``, ``projection``, ``phi_seed`` and
        ``allow_m_above_d`` are keyword shortcuts for its fields (a keyword given beside
        ``settings`` wins).
    dtype : numpy dtype, default float32
        Storage dtype of the output. Each chunk is released directly in this dtype:
        the noise is drawn in float64, added to the projection in float64 and rounded
        once (see the Notes of :func:`trustlab.privacy.privatize`).
    random_state : None, int, Generator or SeedSequence
        ``None`` (default) for a real release. An integer seed emits a ``UserWarning``:
        anyone who knows or guesses it can remove the noise (tests only).
    vocab : path or array (V, d), optional
        M1 nearest-neighbour swap vocabulary (held in memory).
    progress : bool
        Show a tqdm progress bar on stderr.
    record_path : path, optional
        Also write the release record as JSON here (atomically).
    Other parameters as in :func:`trustlab.privacy.privatize`.

    Returns
    -------
    dict
        The release record plus ``n``, ``d``, ``m``, ``seconds``, ``vectors_per_second``,
        ``input``, ``output``.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> tmp = tempfile.mkdtemp(); src = os.path.join(tmp, "x.npy"); dst = os.path.join(tmp, "w.npy")
    >>> np.save(src, np.random.default_rng(0).standard_normal((100, 300)))
    >>> info = privatize_file(src, dst, epsilon=5)
    >>> np.load(dst).shape, info["m"]
    ((100, 54), 54)
    """
    from trustlab._fileio import atomic_path
    from trustlab._validation import check_finite_array
    from trustlab.privacy.mechanisms import make_mechanism, nearest_neighbor_swap

    t0 = time.perf_counter()
    spec = ReleaseSettings.merge(settings, func="privatize_file", epsilon=epsilon, delta=delta, beta=beta, m=m,
                                 mechanism=mechanism, phi_seed=phi_seed, allow_m_above_d=allow_m_above_d,
                                 projection=projection)
    src = open_vectors(input, input_format)
    ofmt = guess_format(output, output_format)
    if ofmt == "kv":
        raise ValueError("writing gensim KeyedVectors is not supported; write .npy, .txt, .bin or .parquet.")
    if Path(output).resolve() == src.path.resolve():
        raise ValueError("output must differ from input (the input is read while the output is written).")
    chunk_size = check_int(chunk_size, "chunk_size", low=1, func="privatize_file")
    if isinstance(random_state, (numbers.Integral, np.integer)) and not isinstance(random_state, bool):
        warnings.warn(
            f"random_state={int(random_state)} makes this release reproducible by anyone who knows or "
            "guesses the seed (and so lets them remove the noise): integer seeds are for tests only. "
            "Leave the seed unset (OS entropy) for a release you publish.",
            UserWarning,
            stacklevel=2,
        )
    mech = make_mechanism(src.d, settings=spec, backend=backend, random_state=random_state, n_hint=src.n,
                          streamed=True, func="privatize_file")
    V = None
    vwords = None
    if vocab is not None:
        if mech.name != "m1":
            raise ValueError("vocab (nearest-neighbour swap) applies to mechanism='m1' only.")
        if isinstance(vocab, (str, os.PathLike)):
            vwords, V = read_vectors(vocab)
        else:
            V = vocab
        V = check_finite_array(V, "vocab", ndim=2)
        if V.shape[1] != src.d:
            raise ValueError(f"vocab has dimension {V.shape[1]} but the input has dimension {src.d}; they must match.")
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=src.n, unit="vec", unit_scale=True, desc="privatize", file=None)
    sample = None
    off = 0
    out_dtype = np.float32 if ofmt == "w2vbin" else np.dtype(dtype)
    import contextlib
    import json

    from trustlab._fileio import atomic_write, held_signals

    # the record is committed AFTER the vectors, and both with signals held between the
    # two renames: a kill never leaves a new record (new phi_seed) beside old vectors
    rec_out = atomic_write(record_path) if record_path is not None else contextlib.nullcontext()
    with held_signals() as hold, rec_out as rfh:
        with atomic_path(output) as tmp:
            _umask_chmod(tmp)
            w = _Writer(tmp, ofmt, src.n, mech.out_dim, dtype)
            try:
                for words, X in src.chunks(chunk_size):
                    if X.dtype not in (np.float32, np.float64):
                        X = X.astype(np.float64)
                    X = np.ascontiguousarray(X)
                    if sample is None:
                        sample = np.array(X[:256], dtype=np.float64)
                    # the chunk is released straight in the storage dtype (float32 end to
                    # end for float32 files: one GEMM into the buffer + one noise pass)
                    Y = mech.apply(X, off, dtype=out_dtype)
                    if V is not None:
                        idx = nearest_neighbor_swap(Y, V)
                        Y = V[idx]
                        if vwords is not None:
                            words = [vwords[i] for i in idx]
                    w.write(words, Y)
                    off += X.shape[0]
                    if bar is not None:
                        bar.update(X.shape[0])
            except BaseException:
                w.abort()
                if bar is not None:
                    bar.close()
                raise
            w.close()
            if bar is not None:
                bar.close()
            if src.n == 0:
                raise ValueError(f"{src.path} holds no vectors.")
            rec = mech.record(src.n, sample, vocab_swap=V is not None).to_dict()
            if rfh is not None:
                rfh.write(json.dumps(rec, indent=2) + "\n")
            hold.start()  # from here: vectors renamed, then the record, then signals delivered
    secs = time.perf_counter() - t0
    rec.update({"seconds": secs, "vectors_per_second": src.n / secs if secs > 0 else float("inf"),
                "input": str(input), "output": str(output)})
    return rec
