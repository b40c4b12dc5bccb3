#!/usr/bin/env bash
# The main job: make and decode IDs in every language shardid ships.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo run --quiet --locked -p shardid --example demo
