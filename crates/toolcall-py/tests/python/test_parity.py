"""Parity: for every pair the Rust tests score (the corpus of real traffic and the bundled suite),
the binding gives the verdict and findings the Rust library gives. The Rust side is one JSON dump
(`cargo run -p toolcall-py --example parity_dump`, its path in ATP_PARITY_DUMP); the Python side
reads the same files the Python way (json.load, so dicts go through the binding's conversion)
and builds its dump from the binding's attributes."""

import json
from pathlib import Path

from conftest import required_env
from parity import score_files


def test_python_and_rust_give_the_same_verdicts():
    dump = json.loads(Path(required_env("ATP_PARITY_DUMP")).read_text())
    assert len(dump) >= 50, "the dump holds too few pairs to mean anything"
    differences = []
    for entry in dump:
        rust = entry["verdict"]
        python = score_files(entry["request"], entry["response"], entry["tools_only"])
        if "error" in rust or "error" in python:
            if ("error" in rust) != ("error" in python):
                differences.append(f"{entry['id']}: rust {rust}, python {python}")
            continue
        if python != rust:
            differences.append(f"{entry['id']}:\n  rust   {rust}\n  python {python}")
    assert not differences, "\n".join(differences)
    verdicts = {entry["verdict"].get("verdict") for entry in dump}
    assert verdicts == {"pass", "fail"}
