"""Sweeps: the same table on one thread or several, on Ray or locally, run after run;
invalid combinations as rows; the command line's CSV is the same table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import linkshare
from conftest import SCENARIOS

GRID = {"class.bulk.weight": [1, 4], "link.rate": ["5mbit", "0bit"]}


@pytest.fixture(scope="module")
def base():
    return linkshare.load(SCENARIOS / "two-classes-drr.toml")


def _sweep(base, **kw):
    kw.setdefault("progress", False)
    return linkshare.sweep(base, grid=GRID, seeds=range(3), schedulers=["drr", "fifo"], **kw)


def test_table_shape_and_failed_runs(base):
    t = _sweep(base, jobs=2).table
    assert t["run"].nunique() == 2 * 2 * 2 * 3
    good = t[t["error"].isna()]
    bad = t[t["error"].notna()]
    # 12 valid runs × 3 classes (root, bulk, interactive); 12 runs with rate 0.
    assert len(good) == 12 * 3 and len(bad) == 12
    assert (bad["link.rate"] == "0bit").all()
    assert bad["error"].str.contains("edit:2:13: field `link.rate`: the link rate is zero").all()
    assert bad["class"].isna().all() and bad["packets_sent"].isna().all()
    assert list(t.columns[:5]) == ["run", "scheduler", "seed", "class.bulk.weight", "link.rate"]
    assert t["class.bulk.weight"].dtype == np.int64  # the values as given
    assert set(good["seed"]) == {0, 1, 2}
    # Order: grid first axis slowest, then scheduler, then seed.
    first = t.drop_duplicates("run").head(6)
    assert first["scheduler"].tolist() == ["drr"] * 3 + ["fifo"] * 3
    assert first["seed"].tolist() == [0, 1, 2] * 2


def test_deterministic_whatever_the_threads(base):
    one = _sweep(base, jobs=1).table
    pd.testing.assert_frame_equal(one, _sweep(base, jobs=2).table)
    pd.testing.assert_frame_equal(one, _sweep(base, jobs=0).table)


def test_a_runs_rows_are_its_summary(base):
    res = _sweep(base, keep_runs=True)
    t = res.table
    assert len(res.runs) == 24
    r = linkshare.run(base.with_({"class.bulk.weight": 4, "link.rate": "5mbit"}),
                      scheduler="fifo", seed=2)
    run = t[(t["class.bulk.weight"] == 4) & (t["link.rate"] == "5mbit")
            & (t["scheduler"] == "fifo") & (t["seed"] == 2)]
    index = run["run"].iloc[0]
    assert res.runs[index].summary == r.summary
    for row, c in zip(run.itertuples(), r.summary["classes"]):
        assert row.bytes_delivered == c["bytes_delivered"]
        assert row.delay_p99_s == c["delay_s"]["p99"]
    assert all(res.runs[i] is None for i in t[t["error"].notna()]["run"])


def test_the_command_lines_csv_is_the_same_table(base, tmp_path, cli):
    scenario = SCENARIOS / "two-classes-drr.toml"
    cli("sweep", scenario, "--grid", "class.bulk.weight=1,4", "--grid", "link.rate=5mbit,0bit",
        "--schedulers", "drr,fifo", "--seeds", 3, "--jobs", 2, "--out", tmp_path / "t.csv")
    csv = pd.read_csv(tmp_path / "t.csv")
    table = _sweep(base).table
    assert list(csv.columns) == list(table.columns)
    for col in table.columns:
        a, b = table[col], csv[col]
        if a.dtype.kind == "f":
            assert np.array_equal(a.to_numpy(), b.to_numpy(dtype=float), equal_nan=True), col
        else:
            assert _cells(a) == _cells(b), col


def _cells(series):
    """Cells as the CSV writes them (what read_csv typed as float or bool, back to text)."""
    out = []
    for x in series.astype(object):
        if pd.isna(x):
            out.append(None)
        elif isinstance(x, (bool, np.bool_)):
            out.append(str(bool(x)).lower())
        elif isinstance(x, float) and x.is_integer():
            out.append(str(int(x)))
        else:
            out.append(str(x))
    return out


def test_ray_with_two_workers_gives_the_local_table(base):
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'ray>=2.9'")
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True,
             log_to_driver=False)
    try:
        local = _sweep(base)
        remote = _sweep(base, backend="ray", keep_runs=True)
        pd.testing.assert_frame_equal(local.table, remote.table)
        kept = [r for r in remote.runs if r is not None]
        assert len(kept) == 12 and kept[0].delay is not None
    finally:
        ray.shutdown()


def test_bad_arguments(base):
    with pytest.raises(ValueError, match="has no values"):
        linkshare.sweep(base, grid={"link.rate": []}, progress=False)
    with pytest.raises(linkshare.ScenarioError, match="unknown scheduler"):
        linkshare.sweep(base, schedulers=["nope"], progress=False)
    with pytest.raises(ValueError, match="unknown backend"):
        linkshare.sweep(base, backend="spark", progress=False)
    # More runs than a plan may list: refused before any is listed.
    weights = range(1, 1002)
    with pytest.raises(linkshare.ScenarioError, match="more than 1000000 runs"):
        linkshare.sweep(base, grid={"class.bulk.weight": weights,
                                    "class.interactive.weight": weights}, progress=False)
