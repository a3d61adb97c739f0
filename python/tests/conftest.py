"""Fixtures: the repository's scenarios and the command line to compare with."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"


def _binary() -> Path:
    explicit = os.environ.get("LINKSHARE_BIN")
    if explicit:
        return Path(explicit)
    # Always through cargo (a no-op when up to date): a binary left by an older build
    # would compare this package with another version of the command line.
    subprocess.run(["cargo", "build", "--release", "--locked", "-p", "linkshare"], cwd=ROOT,
                   check=True)
    return ROOT / "target" / "release" / "linkshare"


@pytest.fixture(scope="session")
def cli():
    """Runs the `linkshare` command line; returns the completed process."""
    binary = _binary()

    def run(*args, cwd=None, check=True):
        p = subprocess.run([str(binary), *map(str, args)], cwd=cwd, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError(f"linkshare {args} failed ({p.returncode}):\n{p.stderr}")
        return p

    return run


@pytest.fixture
def scenarios():
    return SCENARIOS
