"""The errors of the linkshare module."""

from __future__ import annotations

from typing import NamedTuple, Optional


class Problem(NamedTuple):
    """One problem of a scenario, as the command line prints it:
    ``FILE:LINE:COL: field `PATH`: PROBLEM; FIX``.

    ``file``, ``line`` and ``column`` are ``None`` for a problem without a position
    (an argument of a call); ``file`` is ``"edit"`` for a problem with an edited value,
    ``line`` then being the edit's number (see ``Scenario.with_``)."""

    file: Optional[str]
    line: Optional[int]
    column: Optional[int]
    field: Optional[str]
    problem: str
    fix: str

    def __str__(self) -> str:
        out = ""
        if self.file is not None:
            out += f"{self.file}:{self.line}:{self.column}: "
        if self.field is not None:
            out += f"field `{self.field}`: "
        out += self.problem
        if self.fix:
            out += f"; {self.fix}"
        return out


class ScenarioError(ValueError):
    """A scenario (or an argument naming part of one) is not valid. ``problems`` lists
    every problem found, located as on the command line; ``str()`` prints them one per
    line, exactly as the command line does."""

    def __init__(self, problems):
        self.problems = [p if isinstance(p, Problem) else Problem(*p) for p in problems]
        super().__init__("\n".join(str(p) for p in self.problems))

    def __reduce__(self):
        return (ScenarioError, ([tuple(p) for p in self.problems],))
