"""The Python API: errors, frames and their units, and equality with the command line's
outputs for the same scenario and seed."""

from __future__ import annotations

import json
import os
import pickle
import signal
import threading

import numpy as np
import pandas as pd
import pytest

import linkshare

TWO = "two-classes-drr.toml"


def test_load_from_a_file_or_text(scenarios):
    s = linkshare.load(scenarios / TWO)
    assert s.name == "two-classes-drr"
    assert s.seed == 1 and s.duration_s == 10.0
    t = linkshare.load((scenarios / TWO).read_text())
    assert t.file == "<text>" and t.name == s.name
    assert "bulk" in s.describe()


def test_errors_are_the_command_lines(tmp_path, cli):
    bad = tmp_path / "bad.toml"
    bad.write_text('[scenario]\nname = "b"\nduration = "1s"\n\n[link]\nrate = "10 mbit"\n\n'
                   '[[class]]\nname = "A"\nweigth = 2\n\n[[flow]]\nname = "f"\nclass = "B"\n'
                   'source = { type = "cbr", rate = "1mbit", size = "100b" }\n')
    with pytest.raises(linkshare.ScenarioError) as e:
        linkshare.load(bad)
    printed = cli("validate", bad, check=False)
    assert printed.returncode == 2
    assert str(e.value) == printed.stderr.rstrip("\n")
    first = e.value.problems[0]
    assert (first.file, first.line, first.field) == (str(bad), 6, "link.rate")
    assert isinstance(e.value, ValueError)
    with pytest.raises(linkshare.ScenarioError, match="cannot read the scenario file"):
        linkshare.load(tmp_path / "missing.toml")


def test_edits_by_name_or_index_are_the_same_scenario(scenarios):
    s = linkshare.load(scenarios / TWO)
    by_name = linkshare.run(s.with_({"class.bulk.weight": 5, "link.rate": "20mbit"}))
    by_index = linkshare.run(s.with_(**{"class[0].weight": 5}).with_({"link.rate": "20mbit"}))
    assert by_name.summary == by_index.summary
    assert by_name.summary != linkshare.run(s).summary
    assert s.edits == []


def test_edit_problems_point_at_the_edit(scenarios):
    s = linkshare.load(scenarios / TWO)
    with pytest.raises(linkshare.ScenarioError) as e:
        s.with_({"link.rate": "20mbit", "class.bulk.weigth": 3})
    (p,) = e.value.problems
    assert (p.file, p.line) == ("edit", 2)
    assert "did you mean `weight`?" in p.fix
    with pytest.raises(linkshare.ScenarioError, match="no `class` is named `bluk`"):
        s.with_({"class.bluk.weight": 3})
    with pytest.raises(ValueError, match="cannot write"):
        s.with_({"class.bulk.weight": object()})


def test_unknown_scheduler_suggests(scenarios):
    s = linkshare.load(scenarios / TWO)
    with pytest.raises(linkshare.ScenarioError, match="did you mean `drr`"):
        linkshare.run(s, scheduler="dr")


def test_frames_have_typed_columns_in_si_units(scenarios):
    r = linkshare.run(linkshare.load(scenarios / TWO), seed=3)
    t = r.throughput
    assert list(t.columns) == ["window_start_s", "window_end_s", "class", "bytes", "rate_bps"]
    assert t["bytes"].dtype == np.int64 and t["rate_bps"].dtype == np.float64
    assert isinstance(t["class"].dtype, pd.CategoricalDtype)
    # rate_bps is bytes * 8 over the window, in bit/s (windows of 200 ms).
    width = t["window_end_s"] - t["window_start_s"]
    assert np.allclose(width, 0.2)
    assert np.allclose(t["rate_bps"], t["bytes"] * 8 / width)
    d = r.delay
    assert list(d.columns) == ["class", "flow", "arrival_s", "departure_s", "delay_s"]
    assert np.allclose(d["delay_s"], d["departure_s"] - d["arrival_s"])
    assert r.summary["seed"] == 3
    assert set(r.frames()) == {"throughput", "flow_throughput", "delay", "backlog", "drops",
                               "flows", "bursts"}
    assert r.tcp_trace is None
    classes = r.classes
    assert {"name", "mean_rate_bps", "delay_p99_s"} <= set(classes.columns)


def _same(frame: pd.DataFrame, csv: pd.DataFrame,
          rounded=("rate_bps", "goodput_bps", "drop_rate")):
    assert list(frame.columns) == list(csv.columns)
    assert len(frame) == len(csv)
    for col in frame.columns:
        a, b = frame[col], csv[col]
        if col in rounded:
            # The CSV rounds rates (three decimals) and drop rates (six); the frame keeps
            # every digit.
            assert np.allclose(a.astype(float), b.astype(float), rtol=0, atol=5e-4, equal_nan=True), col
        elif a.dtype.kind == "f":
            # Times: the double nearest the CSV's exact nine decimals, so equal.
            assert np.array_equal(a.to_numpy(), b.to_numpy(dtype=float), equal_nan=True), col
        else:
            left = a.astype(object).where(a.notna(), None).tolist()
            right = b.astype(object).where(b.notna(), None).tolist()
            assert [str(x) for x in left] == [str(x) for x in right], col


@pytest.mark.parametrize("name,scheduler,seed", [
    (TWO, None, 7),
    ("onoff-mix.toml", "hfsc", 2),
    ("tcp-mix.toml", None, 1),
])
def test_run_equals_the_command_line(tmp_path, cli, scenarios, name, scheduler, seed):
    s = linkshare.load(scenarios / name)
    r = linkshare.run(s, scheduler=scheduler, seed=seed)
    args = ["run", scenarios / name, "--out", tmp_path, "--seed", seed]
    if scheduler:
        args += ["--scheduler", scheduler]
    cli(*args)
    assert r.summary == json.loads((tmp_path / "summary.json").read_text())
    for stem, frame in r.frames().items():
        csv = pd.read_csv(tmp_path / f"{stem}.csv", keep_default_na=False, na_values=[""])
        _same(frame, csv)
    for stem, svg in r.svgs.items():
        assert svg == (tmp_path / f"{stem}.svg").read_text(), stem
    written = r.write(tmp_path / "again")
    for f in written:
        assert f.read_bytes() == (tmp_path / f.name).read_bytes(), f.name


def test_compare_alloc_bounds_check_equal_the_command_line(tmp_path, cli, scenarios):
    s = linkshare.load(scenarios / "hls-fig1.toml")
    for name, args in [("alloc", linkshare.alloc), ("bounds", linkshare.bounds)]:
        got = args(s)
        assert dict(got) == json.loads(cli(name, scenarios / "hls-fig1.toml", "--json").stdout)
        assert got.text == cli(name, scenarios / "hls-fig1.toml").stdout
    hfsc = linkshare.load(scenarios / "hfsc-delay.toml")
    c = linkshare.check(hfsc)
    printed = cli("check", scenarios / "hfsc-delay.toml", "--json", check=False)
    assert dict(c) == json.loads(printed.stdout)
    assert c.admissible == (printed.returncode == 0)

    two = linkshare.load(scenarios / TWO)
    cmp = linkshare.compare(two, ["fifo", "drr"], seed=4, out=tmp_path / "py")
    printed = cli("compare", scenarios / TWO, "--schedulers", "fifo,drr", "--seed", 4,
                  "--out", tmp_path / "cli")
    assert printed.stdout.startswith(cmp.text)
    assert list(cmp.runs) == ["fifo", "drr"]
    for sched, r in cmp.runs.items():
        assert r.summary == json.loads((tmp_path / "cli" / sched / "summary.json").read_text())
    for f in cmp.files:
        rel = f.relative_to(tmp_path / "py")
        assert f.read_bytes() == (tmp_path / "cli" / rel).read_bytes(), rel


def test_repro_prints_what_the_command_line_prints(tmp_path, cli):
    assert "hls-bounds" in linkshare.reproductions()
    text = linkshare.repro("hls-bounds", out=tmp_path / "py")
    printed = cli("repro", "hls-bounds", "--out", tmp_path / "cli").stdout
    assert text.replace(str(tmp_path / "py"), "OUT") == printed.replace(str(tmp_path / "cli"), "OUT")
    assert (tmp_path / "py" / "bounds.csv").read_bytes() == (tmp_path / "cli" / "bounds.csv").read_bytes()
    with pytest.raises(linkshare.ScenarioError, match="did you mean `hls-bounds`"):
        linkshare.repro("hls-bound")


def test_plot_draws_the_command_lines_charts(scenarios):
    import matplotlib

    matplotlib.use("Agg")
    r = linkshare.run(linkshare.load(scenarios / TWO))
    fig = r.plot()
    titles = [ax.get_title() for ax in fig.axes]
    assert len(titles) == 3 and titles[0].startswith("Throughput")
    assert fig.axes[0].get_ylabel() == "throughput (Mbit/s)"
    assert set(r.svgs) == {"throughput", "delay_cdf", "backlog"}


def test_scenarios_results_and_errors_pickle(scenarios):
    s = linkshare.load(scenarios / TWO).with_({"class.bulk.weight": 3})
    s2 = pickle.loads(pickle.dumps(s))
    assert s2.edits == s.edits
    r = linkshare.run(s)
    assert linkshare.run(s2).summary == r.summary
    r2 = pickle.loads(pickle.dumps(r))
    assert r2.summary == r.summary
    pd.testing.assert_frame_equal(r2.delay, r.delay)
    assert r2.svgs == r.svgs
    try:
        s.with_({"class.bulk.weight": "x"})
    except linkshare.ScenarioError as e:
        again = pickle.loads(pickle.dumps(e))
        assert again.problems == e.problems


def test_ctrl_c_stops_a_long_run(scenarios):
    # hls-fig1 runs 2 s of 1 Gbit/s in about half a second; a thousand times longer
    # would take minutes: the interrupt must stop it.
    s = linkshare.load(scenarios / "hls-fig1.toml").with_({"scenario.duration": "2000s"})
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        linkshare.run(s)
    timer.join()
