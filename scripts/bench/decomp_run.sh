#!/usr/bin/env bash
# The decomposition engine against the compact model (the engine on main) on the classes
# of models/decomposition.md §9: 10-s budget, 2 threads, seed 1, one run each.
# Usage: scripts/bench/decomp_run.sh TESSERA_BINARY OUT_DIR [CLASS...]
set -euo pipefail
bin=$1; out=$2; shift 2
classes=${*:-openb-1024 flat-1024 topo-4096 flat-256 openb-256}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
for c in $classes; do
  inst="$out/$c-s1.yaml"
  [ -f "$inst" ] || "$bin" generate --class "$c" --seed 1 --out "$inst"
  for engine in compact decomposition; do
    dec="$out/$c-$engine.json"
    TESSERA_ENGINE=$engine /usr/bin/time -v "$bin" solve "$inst" --time-limit 10s --threads 2 \
      --output json --out "$dec" 2> "$out/$c-$engine.time"
    rc=0; "$bin" check "$inst" "$dec" > "$out/$c-$engine.check" 2>&1 || rc=$?
    python3 "$here/decomp_rows.py" "$c s1" "$dec" "$out/$c-$engine.time" "$rc"
  done
done
