"""Long loops end promptly on SIGTERM and keep their memory bounded (issue 28, items 4 and 5).

The statuses are asserted, not the seconds: a SIGTERM sent while the work is running
must end the process with 128 + 15 long before the work itself could finish (the
counting below would take hours)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

_HOOK = textwrap.dedent(
    """
    import sys
    import {module} as m
    orig = m.{name}
    def hooked(*a, **k):
        print("ready", flush=True)
        return orig(*a, **k)
    m.{name} = hooked
    sys.argv = ["trustlab"] + sys.argv[1:]
    from trustlab.cli import console_main
    console_main()
    """
)


def _sigterm_status(tmp_path, module, name, *argv):
    proc = subprocess.Popen([sys.executable, "-c", _HOOK.format(module=module, name=name), *map(str, argv)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        import time

        time.sleep(1.0)  # let the long loop start (a signal before it must work too)
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=60)  # would run for hours if the signal were ignored
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return rc, proc.stderr.read()


def _moon_moser(path, parts: int) -> None:
    with open(path, "w") as fh:
        for u in range(3 * parts):
            for v in range(u + 1, 3 * parts):
                if u // 3 != v // 3:
                    fh.write(f"{u} {v}\n")


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or os.name != "posix", reason="POSIX signals")
def test_cliques_count_on_moon_moser_ends_on_sigterm(tmp_path):
    _moon_moser(tmp_path / "mm.txt", 26)  # 3**26 = 2.5e12 maximal cliques
    rc, err = _sigterm_status(tmp_path, "trustlab.cliques", "_run_chunks", "cliques", "mm.txt", "--count",
                              "--max-count", "0")
    assert rc == 128 + signal.SIGTERM, err
    assert "terminated by signal 15" in err and "Traceback" not in err


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or os.name != "posix", reason="POSIX signals")
def test_maximal_cliques_on_moon_moser_ends_on_sigterm(tmp_path):
    _moon_moser(tmp_path / "mm.txt", 26)
    rc, err = _sigterm_status(tmp_path, "trustlab.cliques", "_run_chunks", "cliques", "mm.txt",
                              "--max-output-bytes", "0", "-o", "out.txt")
    assert rc == 128 + signal.SIGTERM, err
    assert sorted(os.listdir(tmp_path)) == ["mm.txt"]


def test_weat_many_permutations_stream_in_bounded_batches(monkeypatch):
    from trustlab.metrics.bias import _permutation as P

    monkeypatch.setattr(P, "DISTINCT_MAX", 1000)
    monkeypatch.setattr(P, "_DRAW_BATCH", 256)
    sizes = []
    orig = P._draw_one

    def spy(s, k, seed, start, m, *a):
        sizes.append(m)
        return orig(s, k, seed, start, m, *a)

    def no_distinct(*a, **k):
        raise AssertionError("distinct sampling keeps every split in memory")

    monkeypatch.setattr(P, "_draw_one", spy)
    monkeypatch.setattr(P, "_sample_distinct", no_distinct)
    s = np.random.default_rng(0).standard_normal(20)
    s[:10] += 0.4
    r = P.weat_permutation_test(s, 10, permutations=20_000, random_state=0, backend="cpu")
    exact = P.weat_permutation_test(s, 10, permutations="exact")
    assert r.method == "monte-carlo" and r.n_permutations == 20_000
    assert max(sizes) <= 256 and sum(sizes) >= 20_000  # batch by batch, never all at once
    assert abs(r.p_value - exact.p_value) < 5 * r.p_value_se + 1e-3


def test_weat_distinct_draws_come_in_bounded_kernel_calls(monkeypatch):
    from trustlab.metrics.bias import _permutation as P

    monkeypatch.setattr(P, "_DRAW_BATCH", 512)
    sizes = []
    orig = P._draw_one

    def spy(s, k, seed, start, m, *a):
        sizes.append(m)
        return orig(s, k, seed, start, m, *a)

    s = np.random.default_rng(1).standard_normal(30)
    before = P.weat_permutation_test(s, 15, permutations=5000, random_state=3, backend="cpu")
    monkeypatch.setattr(P, "_draw_one", spy)
    after = P.weat_permutation_test(s, 15, permutations=5000, random_state=3, backend="cpu")
    assert max(sizes) <= 512
    assert after.p_value == before.p_value  # the same draws, only cut into smaller calls


def test_exact_enumeration_in_blocks_equals_itertools(monkeypatch):
    import itertools

    from trustlab.metrics.bias import _permutation as P

    monkeypatch.setattr(P, "_DRAW_BATCH", 8)  # blocks of 32 ranks
    s = np.random.default_rng(5).standard_normal(10)
    got = P._exact_sums(s, 5)
    want = np.array([s[list(c)].sum() for c in itertools.combinations(range(10), 5)])
    assert got.shape == want.shape and np.allclose(got, want, rtol=0, atol=1e-12)
