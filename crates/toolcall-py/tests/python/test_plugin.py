"""The pytest plugin over the repository's bundled cases/, recorded/ and baselines/ (copied, so
the ratchet can be moved): known failures xfail, and the ratchet is seen failing and passing."""

import json
import shutil

import pytest

from conftest import ROOT


@pytest.fixture
def tree(tmp_path):
    for name in ["cases", "recorded", "baselines", "schemas"]:
        shutil.copytree(ROOT / name, tmp_path / name)
    return tmp_path


def run(pytester, tree, *args):
    return pytester.runpytest_subprocess("--toolcall-root", str(tree), "-p", "no:cacheprovider", "-rxX", *args)


def baseline(tree, agent="example-anthropic"):
    path = tree / "baselines" / f"{agent}.json"
    return path, json.loads(path.read_text())


def test_the_bundled_suite_passes_with_its_known_failures_xfailed(pytester, tree):
    result = run(pytester, tree)
    outcomes = result.parseoutcomes()
    assert result.ret == 0, result.stdout.str()
    assert outcomes.get("failed", 0) == 0
    assert outcomes["passed"] > 100 and outcomes["xfailed"] > 100
    result.stdout.fnmatch_lines(["*XFAIL*toolcall::example-anthropic::billing/drift-in-tool-description*a known failure*"])


def test_a_failure_the_baseline_does_not_list_fails_then_write_mode_accepts_it(pytester, tree, monkeypatch):
    path, entries = baseline(tree)
    del entries["billing/drift-in-tool-description"]
    path.write_text(json.dumps(entries, indent=2))
    result = run(pytester, tree, "-k", "example-anthropic")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*agent `example-anthropic` fails case `billing/drift-in-tool-description`*does not list it:*",
            "*ATP_BASELINE_WRITE=1 pytest*",
        ]
    )
    assert result.parseoutcomes()["failed"] == 1
    monkeypatch.setenv("ATP_BASELINE_WRITE", "1")
    assert run(pytester, tree).ret == 0
    assert "billing/drift-in-tool-description" in baseline(tree)[1]
    monkeypatch.delenv("ATP_BASELINE_WRITE")
    assert run(pytester, tree).ret == 0


def test_a_listed_case_that_now_passes_fails(pytester, tree):
    path, entries = baseline(tree)
    passing = "billing/balance-lookup"
    assert (tree / "cases" / f"{passing}.json").is_file()
    entries[passing] = {"fingerprint": ["get_invoices (invented)"]}
    path.write_text(json.dumps(entries, indent=2))
    result = run(pytester, tree, "-k", "example-anthropic")
    assert result.ret == 1
    result.stdout.fnmatch_lines([f"*now passes: remove it from*example-anthropic.json*"])


def test_a_known_failure_failing_differently_fails(pytester, tree):
    path, entries = baseline(tree)
    entries["billing/drift-in-tool-description"] = {"fingerprint": ["drift: some_other_tool"]}
    path.write_text(json.dumps(entries, indent=2))
    result = run(pytester, tree, "-k", "drift-in-tool-description")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*differently than*records*", "*-drift: some_other_tool*", "*+drift: get_account_summary*"])


def test_an_invalid_write_setting_is_a_usage_error(pytester, tree, monkeypatch):
    monkeypatch.setenv("ATP_BASELINE_WRITE", "yes")
    result = run(pytester, tree)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*ATP_BASELINE_WRITE*"])


def test_without_a_root_the_plugin_collects_nothing(pytester):
    pytester.makepyfile("def test_one():\n    assert True\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.parseoutcomes() == {"passed": 1}
