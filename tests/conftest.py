"""Shared fixtures: real Lucene indexes of the hand-made collections, built once per session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
TINY_FR = FIXTURES / "tiny-fr"
TINY_ZH = FIXTURES / "tiny-zh"


@pytest.fixture(scope="session")
def fr_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from clir_toolkit.index import build_index

    index = tmp_path_factory.mktemp("indexes") / "tiny-fr"
    build_index(TINY_FR, index, verbose=False)
    return index


@pytest.fixture(scope="session")
def zh_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from clir_toolkit.index import build_index

    index = tmp_path_factory.mktemp("indexes") / "tiny-zh"
    build_index(TINY_ZH, index, verbose=False)
    return index


def run_clir(*args: str, env: dict[str, str] | None = None,
             cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real ``clir`` command line in a subprocess."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "clir_toolkit.cli", *args], capture_output=True,
                          text=True, env=full_env, cwd=cwd, timeout=300)


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str,
                          status: int = 1) -> None:
    """A bad input gets one line on stderr, the given exit status and no traceback."""
    assert result.returncode == status, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("clir: error: ")
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
