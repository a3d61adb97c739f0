"""Sweeps: every combination of edited values, schedulers and seeds, on this
machine's cores or on Ray, in one tidy DataFrame."""

from __future__ import annotations

import os
from typing import Any, Iterable, Mapping, Optional, Sequence

import pandas as pd

from . import _frames, _native
from ._result import Result
from ._scenario import Scenario


class SweepResult:
    """``table``: one row per run and class (``run, scheduler, seed``, one column per
    grid path with the values as given, ``link, class, parent, leaf``, the counters
    and delays of ``summary.json``, ``error`` for runs that could not be made);
    ``runs``: each run's Result (``None`` for failed runs) when asked for with
    ``keep_runs=True``."""

    def __init__(self, table: pd.DataFrame, runs: Optional[list]):
        self.table = table
        self.runs = runs

    def __repr__(self) -> str:
        return f"<linkshare.SweepResult {self.table['run'].nunique()} runs, {len(self.table)} rows>"


def _plan(grid: Mapping[str, Sequence[Any]], schedulers, seeds):
    axes = []
    for path, values in grid.items():
        values = list(values)
        if not values:
            raise ValueError(f"the grid's {path!r} has no values")
        axes.append((str(path), [_native.toml_value(v) for v in values], [str(v) for v in values]))
    scheds = [None] if schedulers is None else [None if s is None else str(s) for s in schedulers]
    seed_list = [None] if seeds is None else [int(s) for s in seeds]
    if not scheds or not seed_list:
        raise ValueError("give at least one scheduler and one seed, or None for the scenario's")
    return _native.Plan(axes, scheds, seed_list)


def _table(columns, grid: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    """The table, its grid columns holding the values as given (their codes index the
    grid's lists)."""
    values = {str(k): list(v) for k, v in grid.items()}
    plain = [c for c in columns if c[0] not in values]
    df = _frames.frame(plain)
    import numpy as np

    for i, (name, kind, data, _) in enumerate(columns):
        if name in values:
            codes = np.frombuffer(data, dtype="<i4")
            cells = [values[name][c] if c >= 0 else None for c in codes]
            series = pd.Series(cells, dtype=None if cells else object)
            df.insert(i, name, series)
    return df


class _Bar:
    """A progress bar in notebooks and terminals (tqdm), or nothing."""

    def __init__(self, total: int, show: bool):
        self._bar = None
        if show:
            from tqdm.auto import tqdm

            self._bar = tqdm(total=total, unit="run", desc="sweep")

    def to(self, n: int):
        if self._bar is not None:
            self._bar.update(n - self._bar.n)

    def close(self):
        if self._bar is not None:
            self._bar.close()


def sweep(
    scenario: Scenario,
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    seeds: Optional[Iterable[int]] = None,
    schedulers: Optional[Sequence[Optional[str]]] = None,
    backend: str = "local",
    jobs: int = 0,
    address: Optional[str] = None,
    keep_runs: bool = False,
    progress: bool = True,
) -> SweepResult:
    """Runs ``scenario`` for every combination of the ``grid``'s values (dotted paths,
    as in ``Scenario.with_``), ``schedulers`` (``None``: the scenario's) and ``seeds``
    (``None``: the scenario's), the first grid path varying slowest and the seed
    fastest.

    ``backend="local"`` uses ``jobs`` threads (0: every core) of this process, without
    the GIL; ``backend="ray"`` submits one task per run to Ray: the cluster at
    ``address`` or ``RAY_ADDRESS`` when set, else a local Ray instance (started if none
    is running). Both give the same table. A combination that is not a valid scenario
    is a row with its ``error``. ``keep_runs=True`` also returns each run's Result
    (all of them held in memory). Ctrl-C stops the sweep."""
    grid = dict(grid or {})
    plan = _plan(grid, schedulers, seeds)
    bar = _Bar(len(plan), progress)
    try:
        if backend == "local":
            columns, runs = _native.sweep_local(scenario._native, plan, int(jobs), keep_runs, bar.to)
            bar.to(len(plan))
            kept = [Result(r) if r is not None else None for r in runs] if keep_runs else None
        elif backend == "ray":
            columns, kept = _ray(scenario, plan, keep_runs, address, bar)
        else:
            raise ValueError(f"unknown backend {backend!r}: use \"local\" or \"ray\"")
    finally:
        bar.close()
    return SweepResult(_table(columns, grid), kept)


def _ray_run(scenario_native, plan, index, keep):
    """One Ray task: run ``index`` of ``plan``; its rows as JSON, and its Result (with
    its tables) when kept."""
    rows, run = _native.sweep_run(scenario_native, plan, index, keep)
    return rows, (Result(run) if run is not None else None)


def _ray(scenario: Scenario, plan, keep: bool, address: Optional[str], bar: _Bar):
    import ray

    if not ray.is_initialized():
        address = address or os.environ.get("RAY_ADDRESS")
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    task = ray.remote(_ray_run)
    pending = [task.remote(scenario._native, plan, i, keep) for i in range(len(plan))]
    order = {ref: i for i, ref in enumerate(pending)}
    outcomes = [None] * len(pending)
    waiting = list(pending)
    try:
        while waiting:
            ready, waiting = ray.wait(waiting, num_returns=1, timeout=0.5)
            for ref in ready:
                outcomes[order[ref]] = ray.get(ref)
            bar.to(len(pending) - len(waiting))
    except KeyboardInterrupt:
        for ref in waiting:
            ray.cancel(ref, force=True)
        raise
    rows = [o[0] for o in outcomes]
    columns = _native.sweep_table(plan, rows)
    kept = [o[1] for o in outcomes] if keep else None
    return columns, kept
