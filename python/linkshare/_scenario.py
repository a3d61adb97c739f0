"""Scenarios: loading and editing by dotted path."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from . import _native


class Scenario:
    """A loaded, valid scenario (see ``scenarios/README.md`` for the format).

    ``with_`` returns an edited copy; the scenario itself never changes. A Scenario
    pickles as its text and edits (to send it to other processes, Ray workers
    included): trace files it names must exist at the same path there."""

    __slots__ = ("_native",)

    def __init__(self, native: "_native.Scenario"):
        self._native = native

    @property
    def name(self) -> str:
        """``[scenario] name``."""
        return self._native.name

    @property
    def description(self) -> Optional[str]:
        """``[scenario] description``."""
        return self._native.description

    @property
    def file(self) -> str:
        """The file it was read from, as named (``<text>`` for text)."""
        return self._native.file

    @property
    def seed(self) -> int:
        """The seed it runs with (``[scenario] seed``)."""
        return self._native.seed

    @property
    def duration_s(self) -> float:
        """Simulated time, seconds."""
        return self._native.duration_s

    @property
    def edits(self) -> list:
        """The edits made so far, ``(path, TOML value)`` in order."""
        return self._native.edits

    def describe(self) -> str:
        """What ``linkshare validate`` prints: links and class trees."""
        return self._native.describe()

    def with_(self, edits: Optional[Mapping[str, Any]] = None, /, **more: Any) -> "Scenario":
        """The scenario with values changed by dotted path, checked like a file.

        Paths name values as the command line's problems do (``class[1].weight``,
        ``link.rate``, ``scenario.seed``) or elements of arrays of tables by name
        (``class.A.weight``, ``flow.voice.source.rate``, ``links.l1.class.A.rt``).
        Values are Python values written as TOML: ``3``, ``"10mbit"``, ``True``,
        ``[["1s", "2s"]]``, ``{"limit": 100}``. Paths with dots are given in a dict,
        ``with_({"class.A.weight": 3})``, or as ``with_(**{"class.A.weight": 3})``.

        Raises ScenarioError with every problem: those with an edited value are at
        ``edit:N:COL`` (N the edit's number among all of this scenario's edits),
        the others in the file."""
        items = dict(edits or {})
        items.update(more)
        pairs = [(str(path), _native.toml_value(value)) for path, value in items.items()]
        return Scenario(self._native.with_edits(pairs))

    def __repr__(self) -> str:
        edits = f", {len(self.edits)} edits" if self.edits else ""
        return f"<linkshare.Scenario {self.name!r} from {self.file}{edits}>"

    def __reduce__(self):
        return (Scenario, (self._native,))


def load(path_or_text: Union[str, "os.PathLike[str]"]) -> Scenario:
    """Loads a scenario from a file (a path, or a string without a line break) or from
    TOML text (a string with line breaks; trace files are then relative to the current
    directory). Raises ScenarioError with every problem, located as on the command
    line."""
    if isinstance(path_or_text, os.PathLike) or "\n" not in str(path_or_text):
        return Scenario(_native.load_file(os.fspath(path_or_text)))
    return Scenario(_native.load_source(str(path_or_text), "<text>", str(Path.cwd())))
