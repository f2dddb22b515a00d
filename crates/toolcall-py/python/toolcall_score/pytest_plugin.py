"""The pytest plugin: a project's ``cases/`` and ``recorded/<agent>/`` as pytest tests.

Point it at the folder holding ``cases/``, ``recorded/`` and ``baselines/`` with
``--toolcall-root DIR`` or the ini key ``toolcall_root``; each test the Rust harness
(toolcall-harness) would run becomes a pytest item of the same name, ``toolcall::<agent>::<case-id>``,
judged by the harness itself through the binding: the same baseline files, the same ratchet and
the same messages. A known failure (listed in ``baselines/<agent>.json`` with its fingerprint) is
an expected failure (xfailed); a new or different failure fails, and so does a listed case that
now passes. ``ATP_BASELINE_WRITE=1 pytest`` rewrites the baselines before the tests run; the
other ``ATP_*`` variables (``ATP_CASES``, ``ATP_RECORDED``, ``ATP_BASELINES``) apply as they do
for ``cargo test``.
"""

from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from . import _native


def pytest_addoption(parser: "pytest.Parser") -> None:
    group = parser.getgroup("toolcall", "toolcall-score suite (cases/, recorded/, baselines/)")
    group.addoption(
        "--toolcall-root",
        default=None,
        metavar="DIR",
        help="collect DIR/cases x DIR/recorded/<agent> as tests, with DIR/baselines",
    )
    parser.addini(
        "toolcall_root",
        "the folder holding cases/, recorded/ and baselines/ (relative to the ini file)",
        default=None,
    )


def _root(config: "pytest.Config") -> Optional[Path]:
    option = config.getoption("--toolcall-root")
    if option:
        return Path(option)
    ini = config.getini("toolcall_root")
    if ini:
        base = config.inipath.parent if config.inipath else config.rootpath
        return base / ini
    return None


class ToolcallFailure(Exception):
    """A suite test failed: the harness's message, shown as it is."""


class ToolcallSuite(pytest.Collector):
    """The suite under one root; its items are the harness's tests."""

    def __init__(self, *, results: List[Dict[str, Any]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.results = results

    def collect(self) -> List["ToolcallItem"]:
        return [
            ToolcallItem.from_parent(self, name=result["name"], result=result)
            for result in self.results
        ]


class ToolcallItem(pytest.Item):
    """One test of the suite, already judged by the harness."""

    def __init__(self, *, result: Dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.result = result
        if result["status"] == "xfail":
            self.add_marker(pytest.mark.toolcall_known_failure)

    def runtest(self) -> None:
        for note in self.result["notes"]:
            print(f"note: {self.name}: {note}")
        status = self.result["status"]
        if status == "xfail":
            pytest.xfail(self.result["message"])
        if status != "pass":
            raise ToolcallFailure(self.result["message"])

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, ToolcallFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self):
        line = self.result["line"]
        return self.result["file"], (line - 1 if line else None), f"toolcall: {self.name}"


def pytest_configure(config: "pytest.Config") -> None:
    config.addinivalue_line(
        "markers", "toolcall_known_failure: a suite test its baseline lists as a known failure"
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: "pytest.Session", config: "pytest.Config", items: List["pytest.Item"]
) -> None:
    root = _root(config)
    if root is None:
        return
    try:
        results = _native.suite_results(str(root))
    except ValueError as e:  # an invalid ATP_* value, a baseline that could not be rewritten
        raise pytest.UsageError(f"toolcall: {e}") from e
    suite = ToolcallSuite.from_parent(
        session, name="toolcall", nodeid="toolcall", path=config.rootpath, results=results
    )
    items.extend(suite.collect())


def pytest_report_header(config: "pytest.Config") -> Optional[str]:
    root = _root(config)
    return None if root is None else f"toolcall suite: {root}"
