#!/usr/bin/env bash
# The test suite: unit, integration, property (vs the brute-force reference) and doc tests.
# Release profile, so HiGHS is built once and shared with scripts/quickstart.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo test --release --locked "$@"
