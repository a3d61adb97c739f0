"""A run's results: the summary as a dict, the tables as DataFrames, the plots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Optional

import pandas as pd

from . import _frames


class Result:
    """What a run gives: ``summary`` (the dict of ``summary.json``) and its tables as
    DataFrames with the columns of the CSV files of ``linkshare run`` (seconds, bit/s,
    bytes; names as categories; empty cells as missing):

    * ``throughput``: bytes sent per leaf class per window, ``rate_bps``;
    * ``flow_throughput``: bytes delivered per flow per window;
    * ``delay``: one row per packet and port (``delay_s``), or ``None`` when the run
      was too large and kept ``delay_histogram`` (``class, delay_s, count``) instead;
    * ``backlog``, ``drops``, ``flows``, ``bursts``, and ``tcp_trace`` (TCP flows with
      ``trace = true``, else ``None``).

    ``plot()`` draws the command line's plots with matplotlib; ``svgs`` has the SVG
    files' text; ``write(dir)`` writes every output of ``linkshare run``. A Result
    pickles with its tables (the SVGs and ``write`` then stay behind)."""

    def __init__(self, native=None, *, state=None):
        self._native = native
        if state is not None:
            self.summary, self._frames, self._charts = state
        else:
            self.summary = json.loads(native.summary_json())
            self._frames = None
            self._charts = None

    # -- tables ---------------------------------------------------------------
    def frames(self) -> Dict[str, pd.DataFrame]:
        """Every table by name (the CSV file's stem)."""
        if self._frames is None:
            self._frames = {name: _frames.frame(cols) for name, cols in self._native.frames()}
        return self._frames

    def _get(self, name: str) -> Optional[pd.DataFrame]:
        return self.frames().get(name)

    throughput = property(lambda self: self._get("throughput"))
    flow_throughput = property(lambda self: self._get("flow_throughput"))
    delay = property(lambda self: self._get("delay"))
    delay_histogram = property(lambda self: self._get("delay_histogram"))
    backlog = property(lambda self: self._get("backlog"))
    drops = property(lambda self: self._get("drops"))
    flows = property(lambda self: self._get("flows"))
    bursts = property(lambda self: self._get("bursts"))
    tcp_trace = property(lambda self: self._get("tcp_trace"))

    @property
    def classes(self) -> pd.DataFrame:
        """The summary's classes as a DataFrame (one row per class of every link)."""
        rows = []
        for c in self.summary["classes"]:
            row = {k: v for k, v in c.items() if k not in ("delay_s", "drops_by_reason")}
            row.update({f"delay_{k}_s" if k != "count" else "delay_count": v
                        for k, v in c["delay_s"].items()})
            rows.append(row)
        return pd.DataFrame(rows)

    # -- plots ------------------------------------------------------------------
    def _chart_list(self):
        if self._charts is None:
            self._charts = [(name, data, svg) for name, data, svg in self._native.charts()]
        return self._charts

    @property
    def svgs(self) -> Dict[str, str]:
        """The SVG plots of ``linkshare run`` by file stem (``throughput``,
        ``delay_cdf``, ``backlog``, ``tcp_cwnd``)."""
        return {name: svg for name, _, svg in self._chart_list()}

    def plot(self, which: Optional[List[str]] = None, axes=None):
        """Draws the plots of ``linkshare run`` (the same series as its SVGs) with
        matplotlib, one axes each; returns the figure."""
        from ._plot import draw

        charts = [(n, d) for n, d, _ in self._chart_list() if which is None or n in which]
        return draw([d for _, d in charts], axes=axes)

    # -- files --------------------------------------------------------------------
    def write(self, out) -> List[Path]:
        """Writes every output of ``linkshare run`` to the directory ``out``; returns
        the files."""
        if self._native is None:
            raise ValueError("this Result was unpickled: its outputs can be written only "
                             "where it was made")
        return [Path(p) for p in self._native.write(str(out))]

    def table(self) -> str:
        """The table ``linkshare run`` prints."""
        return self._native.table() if self._native is not None else ""

    def __repr__(self) -> str:
        s = self.summary
        schedulers = ",".join(sorted({l["scheduler"] for l in s["links"]}))
        return (f"<linkshare.Result {s['scenario']!r} under {schedulers}, seed {s['seed']}, "
                f"{s['duration_s']} s>")

    def __getstate__(self):
        return (self.summary, self.frames(), [(n, d, s) for n, d, s in self._chart_list()])

    def __setstate__(self, state):
        self._native = None
        self.summary, self._frames, self._charts = state
