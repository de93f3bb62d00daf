#!/usr/bin/env bash
# The decomposition engine with a longer budget on instances decomp_run.sh generated:
# a longer budget must not give a lexicographically worse decision (terms 1-3).
# Usage: scripts/bench/decomp_long.sh TESSERA_BINARY OUT_DIR SECONDS CLASS...
set -euo pipefail
bin=$1; out=$2; secs=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
for c in "$@"; do
  inst="$out/$c-s1.yaml"
  dec="$out/$c-decomposition-${secs}s.json"
  TESSERA_ENGINE=decomposition /usr/bin/time -v "$bin" solve "$inst" --time-limit "${secs}s" --threads 2 \
    --output json --out "$dec" 2> "$out/$c-decomposition-${secs}s.time"
  rc=0; "$bin" check "$inst" "$dec" > "$out/$c-decomposition-${secs}s.check" 2>&1 || rc=$?
  python3 "$here/decomp_rows.py" "$c s1, ${secs} s" "$dec" "$out/$c-decomposition-${secs}s.time" "$rc"
done
