"""Speed of the Python face (BENCHMARKS.md, "Python face and sweeps"). Not a test.

    .venv/bin/python python/benches/bench.py overhead [--reps 15]   # one run: Python vs the command line
    .venv/bin/python python/benches/bench.py sweep [--runs 60]      # local sweep: runs/s on 1 and 2 threads
    .venv/bin/python python/benches/bench.py ray [--runs 200]       # Ray's per-task overhead

The command line used is target/release/linkshare (build it with `cargo build
--release`). Times are wall-clock medians of alternating runs, so that both sides see
the same load on a shared machine.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import linkshare

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "target" / "release" / "linkshare"


def overhead(reps: int, scenario: str) -> None:
    path = ROOT / "scenarios" / scenario
    cli, py, py_frames = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(reps):
            t = time.perf_counter()
            subprocess.run([CLI, "run", path, "--out", f"{tmp}/cli"], check=True,
                           capture_output=True)
            cli.append(time.perf_counter() - t)
            t = time.perf_counter()
            r = linkshare.run(linkshare.load(path))
            r.write(f"{tmp}/py")
            py.append(time.perf_counter() - t)
            t = time.perf_counter()
            r.frames()
            py_frames.append(time.perf_counter() - t)
    c, p, f = (statistics.median(x) for x in (cli, py, py_frames))
    print(f"{scenario}: median of {reps} alternating runs")
    print(f"  linkshare run --out DIR (whole process)        {c * 1e3:8.1f} ms")
    print(f"  linkshare.run(load(...)).write(DIR) (in Python) {p * 1e3:8.1f} ms  "
          f"({(p / c - 1) * 100:+.1f} %)")
    print(f"  then .frames() (every table as DataFrames)      {f * 1e3:8.1f} ms")


def _plan(runs: int, scenario: str = "two-classes-drr.toml"):
    base = linkshare.load(ROOT / "scenarios" / scenario)
    return base, {"scenario.seed": list(range(runs))}


def sweep(runs: int, scenario: str) -> None:
    base, grid = _plan(runs, scenario)
    times = {1: [], 2: []}
    cpu = {1: [], 2: []}
    for _ in range(5):
        for jobs in (1, 2):
            t, c = time.perf_counter(), time.process_time()
            linkshare.sweep(base, grid=grid, jobs=jobs, progress=False)
            times[jobs].append(time.perf_counter() - t)
            cpu[jobs].append(time.process_time() - c)
    for jobs, ts in times.items():
        m, c = statistics.median(ts), statistics.median(cpu[jobs])
        print(f"local, {jobs} thread(s): {runs} runs in {m:.2f} s = {runs / m:.1f} runs/s; "
              f"{c / runs * 1e3:.1f} ms of CPU per run, {c / m:.2f} cores busy (median of 5)")


def ray_overhead(runs: int) -> None:
    import ray

    t = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    print(f"ray.init (local instance, 2 CPUs): {time.perf_counter() - t:.1f} s")
    base, grid = _plan(runs)
    # Each run is 100 ms of simulated time: a few ms of work, so the task's own cost
    # shows.
    base = base.with_({"scenario.duration": "100ms", "flow.interactive.off": []})
    linkshare.sweep(base, grid=grid, backend="ray", progress=False)  # warm the workers
    local, remote = [], []
    for _ in range(5):
        t = time.perf_counter()
        linkshare.sweep(base, grid=grid, jobs=2, progress=False)
        local.append(time.perf_counter() - t)
        t = time.perf_counter()
        linkshare.sweep(base, grid=grid, backend="ray", progress=False)
        remote.append(time.perf_counter() - t)
    lo, re_ = statistics.median(local), statistics.median(remote)
    print(f"{runs} runs of 100 ms simulated, median of 5:")
    print(f"  local, 2 threads: {lo:.2f} s ({lo / runs * 1e3:.2f} ms per run)")
    print(f"  Ray, 2 workers:   {re_:.2f} s ({re_ / runs * 1e3:.2f} ms per run)")
    print(f"  Ray's overhead per task (2 workers): {(re_ - lo) / runs * 2 * 1e3:.2f} ms of a "
          f"worker's time")
    ray.shutdown()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("what", choices=["overhead", "sweep", "ray"])
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--runs", type=int, default=0)
    p.add_argument("--scenario", default="hls-fig1.toml")
    a = p.parse_args()
    if a.what == "overhead":
        overhead(a.reps, a.scenario)
    elif a.what == "sweep":
        sweep(a.runs or 40, a.scenario)
    else:
        ray_overhead(a.runs or 200)


if __name__ == "__main__":
    main()
