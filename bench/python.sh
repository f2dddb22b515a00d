#!/usr/bin/env bash
# bench/run's Python rows: builds the release wheel (maturin, stripped), installs it with the
# pinned jsonschema into .cache/pybench-venv (outside the timings), and runs bench/python.py.
#
#   bench/python.sh [--quick]     needs ATP_TAU_BENCH_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv="$root/.cache/pybench-venv"
target="${CARGO_TARGET_DIR:-$root/target}"
want="maturin==1.16.0 jsonschema==4.26.0"
if [[ ! -f "$venv/.installed" || "$(cat "$venv/.installed")" != "$want" ]]; then
  [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
  # shellcheck disable=SC2086
  "$venv/bin/pip" install --quiet --disable-pip-version-check $want >&2
  printf '%s' "$want" > "$venv/.installed"
fi
rm -rf "$target/wheels/bench"
"$venv/bin/maturin" build --quiet --release --strip -m crates/toolcall-py/Cargo.toml \
  --interpreter "$venv/bin/python" --out "$target/wheels/bench" >&2
wheel=$(ls "$target"/wheels/bench/toolcall_score-*.whl)
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel" >&2
exec "$venv/bin/python" bench/python.py "$wheel" "$@"
