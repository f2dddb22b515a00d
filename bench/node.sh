#!/usr/bin/env bash
# bench/run's Node rows: builds the release addon (feature `node`), strips a copy into the target
# directory, and runs bench/node.mjs over it.
#
#   bench/node.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
target="${CARGO_TARGET_DIR:-$root/target}"
cargo build --quiet --release -p toolcall-node --features node >&2
mkdir -p "$target/toolcall-node"
addon="$target/toolcall-node/toolcall-score.node"
cp "$target/release/libtoolcall_node.so" "$addon"
strip "$addon"
exec node bench/node.mjs "$addon" "$@"
