"""How promptly does ``trustlab resolve`` honour a signal? (issue 28: SIGTERM -> exit 143 within 2 s)

Two modes, both on a records file (e.g. one from ``trustlab.er.synthetic.generate_records``):

``python bench/signal_latency.py profile FILE [resolve options...]``
    Runs ``trustlab resolve`` in this process while an interval timer (SIGALRM every 20 ms)
    calls a Python-level handler. A signal handler only runs between bytecodes of the main
    thread, so the gap between two handler calls is the latency a SIGTERM arriving at that
    moment would have seen. Prints the longest gaps with the trustlab line the main thread
    was on when the handler finally ran (the line holding the long C call). Each gap also
    gets the main thread's CPU time during it (``time.thread_time``): on a loaded machine
    the wall gap includes time the process was not scheduled, the CPU time does not, so the
    CPU figures are the part a quieter machine would still see (except for a call that works on
    other threads, e.g. rapidfuzz with ``workers=-1``: the main thread only waits in it).

``python bench/signal_latency.py kill FILE N T_MAX [--min-delay T_MIN] [resolve options...]``
    Starts ``python -m trustlab.cli resolve FILE ...`` N times, sends SIGTERM after a random
    delay in [T_MIN, T_MAX] s (seeded; T_MIN defaults to 2), and prints exit status and latency
    (SIGTERM -> exit) of each, then their distribution, and whether any temporary file was left
    next to the output.

``python bench/signal_latency.py profile-cmd COMMAND [options...]``
    ``profile`` of any subcommand (``cliques``, ``partition``, ``bias``, ``privatize``...).

``python bench/signal_latency.py kill-cmd N T_MIN T_MAX COMMAND [options...]``
    ``kill`` of any subcommand: ``{out}`` in the options becomes a path in a fresh directory
    (checked for leftovers after each run), e.g.
    ``kill-cmd 8 2 20 privatize big.npy --epsilon 1 -o {out}``.

Timings depend on machine load: report them as such.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


def profile(argv: list[str], command: str = "resolve") -> None:
    import traceback

    from trustlab import cli

    gaps: list[tuple[float, float, str]] = []
    last = [time.perf_counter(), time.thread_time()]

    def tick(signum, frame):  # noqa: ARG001
        now, cpu_now = time.perf_counter(), time.thread_time()
        gap, cpu = now - last[0], cpu_now - last[1]
        last[0], last[1] = now, cpu_now
        if gap > 0.15:
            stack = traceback.extract_stack(frame)
            where = [f"{fs.filename.split('trustlab/')[-1]}:{fs.lineno} {fs.name}"
                     for fs in stack if "/trustlab/" in fs.filename][-3:]
            inner = f"{stack[-1].filename.split('/')[-1]}:{stack[-1].lineno} {stack[-1].name}" if stack else "?"
            gaps.append((gap, cpu, f"[{inner}] " + " <- ".join(reversed(where))))

    signal.signal(signal.SIGALRM, tick)
    signal.setitimer(signal.ITIMER_REAL, 0.02, 0.02)
    t0 = time.perf_counter()
    rc = cli.main([command, *argv])
    signal.setitimer(signal.ITIMER_REAL, 0, 0)
    total = time.perf_counter() - t0
    gaps.sort(reverse=True)
    print(f"rc={rc} wall={total:.1f} s; {len(gaps)} gaps > 0.15 s (sum {sum(g[0] for g in gaps):.1f} s); "
          f"over 0.5 s: {sum(g[0] > 0.5 for g in gaps)}, over 1 s: {sum(g[0] > 1 for g in gaps)}; longest:")
    # a signal at a uniformly random moment waits for the rest of the gap it falls in
    for k, name in [(0, "wall"), (1, "main-thread CPU")]:
        wait = {x: sum(max(0.0, g[k] - x) for g in gaps) / total for x in (0.25, 0.5, 1.0, 2.0)}
        print(f"{name}: share of the run in which a signal would wait longer than "
              + ", ".join(f"{x} s: {w:.2%}" for x, w in wait.items())
              + f"; longest wait {max((g[k] for g in gaps), default=0):.2f} s")
    print("   wall     cpu   where the handler ran next [innermost frame] <- trustlab frames")
    for g, cpu, where in gaps[:int(os.environ.get("TOP", 25))]:
        print(f"  {g:6.2f} s {cpu:6.2f} s  {where}")


def kill(argv: list[str]) -> None:
    path, n, t_max, rest = argv[0], int(argv[1]), float(argv[2]), argv[3:]
    t_min = 2.0
    if "--min-delay" in rest:  # e.g. only the late stages (clustering) of a run
        k = rest.index("--min-delay")
        t_min = float(rest[k + 1])
        rest = rest[:k] + rest[k + 2:]
    _kill_runs(["resolve", path, "-o", "{out}", "-q", *rest], n, t_min, t_max)


def kill_cmd(argv: list[str]) -> None:
    n, t_min, t_max, rest = int(argv[0]), float(argv[1]), float(argv[2]), argv[3:]
    _kill_runs(rest, n, t_min, t_max)


def _kill_runs(args: list[str], n: int, t_min: float, t_max: float) -> None:
    import glob
    import random
    import statistics
    import tempfile

    rng = random.Random(0)
    out_dir = tempfile.mkdtemp(prefix="siglat")
    lat, codes = [], []
    for k in range(n):
        delay = rng.uniform(t_min, t_max)
        out = os.path.join(out_dir, "out.csv" if args[0] == "resolve" else "out")
        for f in glob.glob(os.path.join(out_dir, ".*")) + glob.glob(os.path.join(out_dir, "*")):
            os.remove(f)  # e.g. the output of a run that finished before its signal
        cmd = [a.replace("{out}", out) for a in args]
        p = subprocess.Popen([sys.executable, "-m", "trustlab.cli", *cmd],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(delay)
        if p.poll() is not None:
            print(f"{k:2d} delay {delay:5.1f} s: finished before the signal (rc={p.returncode})")
            continue
        t = time.perf_counter()
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        dt = time.perf_counter() - t
        left = glob.glob(os.path.join(out_dir, ".*")) + glob.glob(os.path.join(out_dir, "*"))
        last = p.stderr.read().decode(errors="replace").strip().splitlines()[-1:]
        lat.append(dt)
        codes.append(p.returncode)
        names = [os.path.basename(f) for f in left]
        print(f"{k:2d} delay {delay:5.1f} s: rc={p.returncode} latency {dt:5.2f} s left={names} {last}")
    if lat:
        q = statistics.quantiles(lat, n=10, method="inclusive") if len(lat) > 1 else lat
        print(f"n={len(lat)} rc: {sorted(set(codes))}; latency median {statistics.median(lat):.2f} s, "
              f"p90 {q[-1]:.2f} s, max {max(lat):.2f} s, over 2 s: {sum(x > 2 for x in lat)}")


if __name__ == "__main__":
    mode, rest = sys.argv[1], sys.argv[2:]
    if mode == "profile-cmd":
        profile(rest[1:], rest[0])
    else:
        {"profile": profile, "kill": kill, "kill-cmd": kill_cmd}[mode](rest)
