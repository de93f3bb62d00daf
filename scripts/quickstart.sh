#!/usr/bin/env bash
# Builds Tessera (release; the first build compiles HiGHS, ~5-15 min on 2 cores), solves
# the bundled quickstart instance and validates the decision with the independent checker.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --locked
bin="${CARGO_TARGET_DIR:-target}/release/tessera"
out="$(mktemp -d)/decision.yaml"
"$bin" solve instances/quickstart.yaml --out "$out"
cat "$out"
echo "--- tessera check instances/quickstart.yaml $out"
"$bin" check instances/quickstart.yaml "$out"
