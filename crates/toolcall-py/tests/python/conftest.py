"""Shared helpers of the Python tier (scripts/test-python runs it)."""

import os
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[4]


def required_env(name: str) -> str:
    """The variable's value; a test that needs it fails (never skips) when it is not set."""
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run this tier through scripts/test-python", pytrace=False)
    return value


@pytest.fixture
def root() -> Path:
    return ROOT
