#!/usr/bin/env bash
# Benchmark: `toolcall replay` vs the MCP Python SDK client, same six-step flow, same server
# (the example refund server). Builds release binaries, installs the SDK into .cache/bench-venv,
# then prints medians, the ratio and toolcall's overhead beyond the server's own start-up.
#
#   bench/replay.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-30}"
MCP_SDK="mcp==2.3.0"

cargo build --release --quiet -p toolcall-cli -p toolcall-mcp-servers
target="${CARGO_TARGET_DIR:-target}/release"

venv=.cache/bench-venv
if [[ ! -f "$venv/.installed" || "$(cat "$venv/.installed")" != "$MCP_SDK" ]]; then
  [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "$MCP_SDK"
  printf '%s' "$MCP_SDK" > "$venv/.installed"
fi

python3 bench/replay.py --toolcall "$target/toolcall" --server "$target/refund-server" \
  --python "$venv/bin/python" --flow flows/refund.json --runs "$runs"
