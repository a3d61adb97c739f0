"""linkshare: hierarchical link sharing and QoS packet scheduling from Python.

A thin face over the same library crates as the ``linkshare`` command line: a scenario
loaded here runs exactly as ``linkshare run`` runs it, and gives the same numbers.

    import linkshare
    s = linkshare.load("scenarios/two-classes-drr.toml")
    r = linkshare.run(s.with_({"class.bulk.weight": 4}), scheduler="drr", seed=2)
    r.summary["classes"][1]["mean_rate_bps"], r.throughput.head(), r.plot()
    t = linkshare.sweep(s, grid={"link.rate": ["5mbit", "10mbit"]}, seeds=range(10)).table
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from . import _native
from ._errors import Problem, ScenarioError
from ._result import Result
from ._scenario import Scenario, load
from ._sweep import SweepResult, sweep

__all__ = [
    "Comparison",
    "Problem",
    "Result",
    "Scenario",
    "ScenarioError",
    "SweepResult",
    "SCHEDULERS",
    "alloc",
    "bounds",
    "check",
    "compare",
    "load",
    "repro",
    "reproductions",
    "run",
    "sweep",
]

#: The names of the schedulers this build has.
SCHEDULERS: List[str] = list(_native.SCHEDULERS)


def run(scenario: Scenario, scheduler: Optional[str] = None, seed: Optional[int] = None) -> Result:
    """Runs ``scenario`` (every link under ``scheduler`` and with ``seed`` when given,
    as ``linkshare run --scheduler --seed``). The GIL is released while it runs;
    Ctrl-C stops it (``KeyboardInterrupt``)."""
    return Result(_native.run(scenario._native, scheduler, seed))


class Comparison:
    """``runs``: each scheduler's Result, in the order asked; ``text``: the table
    ``linkshare compare`` prints; ``files``: what was written (with ``out``)."""

    def __init__(self, runs: Dict[str, Result], text: str, files: List[Path]):
        self.runs = runs
        self.text = text
        self.files = files

    def __repr__(self) -> str:
        return self.text


def compare(scenario: Scenario, schedulers: Sequence[str], seed: Optional[int] = None,
            out=None) -> Comparison:
    """The same traffic (same seed) under each of ``schedulers``, as ``linkshare
    compare``; with ``out``, its files are written there too."""
    runs, text, files = _native.compare(scenario._native, list(schedulers), seed,
                                        None if out is None else str(out))
    return Comparison({name: Result(r) for name, r in runs}, text, [Path(f) for f in files])


class Analysis(dict):
    """The JSON document of ``linkshare alloc/bounds/check --json`` as a dict; ``text``
    is what the command prints without ``--json``."""

    text: str = ""

    def __repr__(self) -> str:
        return self.text


def _analysis(doc: str, text: str) -> Analysis:
    a = Analysis(json.loads(doc))
    a.text = text
    return a


def alloc(scenario: Scenario) -> Analysis:
    """The reference (hierarchical max-min fair) rate of every class in every interval
    of constant demand: ``linkshare alloc --json``."""
    return _analysis(*_native.alloc(scenario._native))


def bounds(scenario: Scenario) -> Analysis:
    """The fairness and transmission-gap bounds of HLS and HDRR: ``linkshare bounds
    --json``."""
    return _analysis(*_native.bounds(scenario._native))


def check(scenario: Scenario) -> Analysis:
    """Admission control of the service curves and delay bounds: ``linkshare check
    --json``, plus ``admissible`` (the command's exit status 0 or 1)."""
    doc, text, admissible = _native.check(scenario._native)
    a = _analysis(doc, text)
    a.admissible = admissible
    return a


def reproductions() -> Dict[str, str]:
    """The reproductions by name, with what each reproduces."""
    return dict(_native.repro_list())


def repro(
    name: str,
    out=None,
    schedulers: Optional[Sequence[str]] = None,
    shorten: int = 1,
    seeds: int = 5,
) -> str:
    """Runs reproduction ``name`` as ``linkshare repro NAME`` (its files go to ``out``,
    by default ``./linkshare-out/repro/NAME/``; ``seeds`` runs per configuration where
    the traffic is random); returns what the command prints."""
    out = Path("linkshare-out") / "repro" / name if out is None else Path(out)
    return _native.repro(
        name, str(out), None if schedulers is None else list(schedulers), shorten, seeds
    )
