#!/usr/bin/env bash
# Runs the fuzz targets for MINUTES each (default 10), one after the other, after seeding
# their corpora from the shipped scenarios. Usage: fuzz/run.sh [MINUTES] [TARGET...]
# Targets: scenario, run, units, trace, tc (all by default). Needs cargo-fuzz and a nightly
# toolchain (see fuzz/README.md). Findings land in fuzz/artifacts/TARGET/.
set -eu
cd "$(dirname "$0")"
minutes=${1:-10}
shift || true
targets=${*:-scenario run units trace tc}
./seed.sh
for t in $targets; do
  echo "== $t: $minutes min" >&2
  dict=$t
  [ "$t" = run ] && dict=scenario # the same format as the loader's
  cargo +nightly fuzz run "$t" "corpus/$t" -- \
    -max_total_time=$((minutes * 60)) -dict="dict/$dict.dict" -print_final_stats=1
done
