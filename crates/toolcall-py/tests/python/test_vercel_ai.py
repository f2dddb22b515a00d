"""Every pair of ../shared/external/vercel-ai (the Vercel AI SDK's 217 recorded provider
responses and streams) scored from Python, with the same verdict as the `toolcall` CLI gives.

Only where the data is: marker `vercel_ai`, run by .ci/run with ATP_VERCEL_AI_DIR set
(`pytest -m vercel_ai`); scripts/test-python deselects it. Selected without the data, it fails."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import required_env
from parity import score_files

pytestmark = pytest.mark.vercel_ai


def test_every_pair_scores_as_the_cli_scores_it():
    data = Path(required_env("ATP_VERCEL_AI_DIR"))
    manifest = data / "manifest.json"
    assert manifest.is_file(), f"ATP_VERCEL_AI_DIR is set to {data}, which holds no manifest.json"
    cli = required_env("ATP_TOOLCALL_BIN")
    pairs = json.loads(manifest.read_text())
    assert len(pairs) >= 200
    differences = []
    for pair in pairs:
        folder = data / pair["dir"]
        tools, response = folder / "tools.json", folder / pair["response_file"]
        python = score_files(tools, response, tools_only=True)
        run = subprocess.run(
            [cli, "score", "--tools", str(tools), "--response", str(response), "--json"],
            capture_output=True,
            text=True,
        )
        if run.returncode == 2:
            rust = {"error": run.stderr.strip()}
        else:
            out = json.loads(run.stdout)
            rust = {k: out[k] for k in ("verdict", "findings", "notes") if k in out}
        if ("error" in rust) != ("error" in python) or ("error" not in rust and rust != python):
            differences.append(f"{pair['dir']}:\n  cli    {rust}\n  python {python}")
    assert not differences, f"{len(differences)} of {len(pairs)} pairs differ:\n" + "\n".join(differences)
