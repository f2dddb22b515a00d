"""Times `toolcall replay` against the MCP Python SDK client on the same six-step flow and server.

Prints medians of whole-process wall times (spawn to exit, measured from this process), the
ratio toolcall / Python SDK (target <= 0.5), and toolcall's own overhead beyond the server: its
whole-process time minus the time the server alone takes to start, answer the same JSON-RPC
lines written straight to its stdin, and exit (target <= 20 ms). Runs are interleaved so that
load from elsewhere on the machine hits all three alike.
"""

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path


def raw_server(server: str, flow: dict) -> float:
    """The server on its own: the same requests, no client logic. Returns seconds."""
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    ] + [
        {"jsonrpc": "2.0", "id": 2 + i, "method": "tools/call",
         "params": {"name": c["name"], "arguments": c.get("input", {})}}
        for i, c in enumerate(flow["calls"])
    ]
    start = time.perf_counter()
    proc = subprocess.Popen([server], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    for line in lines:
        proc.stdin.write((json.dumps(line) + "\n").encode())
        proc.stdin.flush()
        if "id" in line:
            answer = json.loads(proc.stdout.readline())
            assert answer.get("id") == line["id"], answer
            assert not answer.get("result", {}).get("isError"), answer
    proc.stdin.close()
    proc.wait()
    elapsed = time.perf_counter() - start
    proc.stdout.close()
    return elapsed


def whole_process(argv: list[str], env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n"
                         f"{done.stdout.decode()}{done.stderr.decode()}")
    return elapsed


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--toolcall", required=True)
    p.add_argument("--server", required=True)
    p.add_argument("--python", required=True, help="the venv python with the mcp SDK")
    p.add_argument("--flow", required=True)
    p.add_argument("--runs", type=int, default=30)
    args = p.parse_args()

    flow = json.loads(Path(args.flow).read_text())
    assert len(flow["calls"]) == 6, "the benchmark flow has six steps"
    env = {**os.environ, "ATP_REFUND_SERVER": os.path.abspath(args.server)}
    client = str(Path(__file__).with_name("replay_client.py"))
    runs = {
        "server alone": lambda: raw_server(args.server, flow),
        "toolcall replay": lambda: whole_process([args.toolcall, "replay", args.flow], env),
        "python sdk client": lambda: whole_process([args.python, client, args.flow], env),
        # For reading the figure above: how much of it is the SDK's import alone.
        "python import mcp": lambda: whole_process([args.python, "-c", "import mcp"], env),
    }
    for run in runs.values():  # warm caches
        run()
    times = {name: [] for name in runs}
    for _ in range(args.runs):
        for name, run in runs.items():
            times[name].append(run())

    med = {name: statistics.median(t) * 1000 for name, t in times.items()}
    for name, t in times.items():
        print(f"{name:18} median {med[name]:7.1f} ms   min {min(t) * 1000:7.1f} ms"
              f"   ({args.runs} runs)")
    ratio = med["toolcall replay"] / med["python sdk client"]
    overhead = med["toolcall replay"] - med["server alone"]
    print(f"ratio toolcall / python sdk (whole process): {ratio:.2f}x   (target <= 0.5x)")
    print(f"toolcall overhead beyond the server alone:   {overhead:.1f} ms  (target <= 20 ms)")


if __name__ == "__main__":
    main()
