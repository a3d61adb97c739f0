#!/usr/bin/env bash
# Seeds the fuzz corpora from the shipped scenarios (idempotent): every scenario file for
# `scenario` and `run`, every trace file for `trace`, every tc script for `tc`, and every
# quoted quantity written in a scenario ("10mbit", "1500b", "5ms") for `units`.
set -eu
cd "$(dirname "$0")"
scenarios=../scenarios
mkdir -p corpus/scenario corpus/run corpus/trace corpus/tc corpus/units
cp "$scenarios"/*.toml corpus/scenario/
cp "$scenarios"/*.toml "$scenarios"/shaper/*.toml corpus/run/
cp "$scenarios"/traces/*.csv corpus/trace/
cp "$scenarios"/tc/*.sh corpus/tc/
grep -ohE '"[0-9][0-9.eE+-]*[a-zA-Z]*"' "$scenarios"/*.toml | tr -d '"' | sort -u |
  while read -r q; do printf '%s' "$q" > "corpus/units/seed-$q"; done
