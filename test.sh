#!/usr/bin/env bash
# The tests: the Rust workspace, the shaper with real traffic, then the Python package (built and installed into
# ./.venv, created on first use, so the system's Python stays clean) and its pytest
# suite. Needs Rust and Python 3.9 or newer; fetches the Python packages from PyPI.
set -euo pipefail
cd "$(dirname "$0")"

echo "== cargo test --workspace"
cargo test --workspace --locked
echo "(cargo test: ${SECONDS} s)"
SECONDS=0

# The shaper's rate and latency tests measure, so they run optimised (in the debug run
# above they skip, saying so); without root, iperf3, ping or tc they skip, saying why;
# outside their bounds while the machine was not carrying them (hypervisor steal, or the
# kernel's own HTB short too) they print "inconclusive" instead of failing.
echo "== the shaper with real traffic (release build)"
cargo test --release --locked -p linkshare --test shape
echo "(shaper tests: ${SECONDS} s)"
SECONDS=0

PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  "$PYTHON" -m venv .venv
fi
echo "== installing the linkshare Python package into .venv"
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet "./python[test]"
echo "== pytest"
# From the repository root, so that the installed package is imported, not python/linkshare.
.venv/bin/python -m pytest -q python/tests
echo "(Python package built, installed and tested: ${SECONDS} s)"
