#!/usr/bin/env bash
# Seeds the fuzz corpora from the shipped scenarios (idempotent): every scenario file for
# `scenario`, every trace file for `trace`, and every quoted quantity written in a
# scenario ("10mbit", "1500b", "5ms") for `units`.
set -eu
cd "$(dirname "$0")"
scenarios=../scenarios
mkdir -p corpus/scenario corpus/trace corpus/units
cp "$scenarios"/*.toml corpus/scenario/
cp "$scenarios"/traces/*.csv corpus/trace/
grep -ohE '"[0-9][0-9.eE+-]*[a-zA-Z]*"' "$scenarios"/*.toml | tr -d '"' | sort -u |
  while read -r q; do printf '%s' "$q" > "corpus/units/seed-$q"; done
