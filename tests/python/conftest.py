"""Shared helpers: the fixture files, the CLI binary scripts/test built, its JSON output."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Trace-like files of the repository: every fixture, and the small files of tests/data.
SUFFIXES = (".json", ".jsonl", ".pb", ".gz", ".zst")


def fixture_files() -> List[Path]:
    out = []
    for base in (ROOT / "tests" / "fixtures", ROOT / "tests" / "data"):
        for p in sorted(base.rglob("*")):
            if p.is_file() and p.name.endswith(SUFFIXES) and p.stat().st_size < 2_000_000:
                out.append(p)
    assert len(out) > 30, f"found only {len(out)} fixture files under {ROOT}/tests"
    return out


def cli() -> str:
    path = os.environ.get("MEMTRACE_CLI", str(ROOT / "target" / "debug" / "memtrace"))
    if not os.access(path, os.X_OK):
        pytest.fail(f"no memtrace binary at {path}: build it (cargo build -p memtrace-cli) or set MEMTRACE_CLI")
    return path


def run_cli(*args: str) -> Optional[List[Dict[str, Any]]]:
    """The JSON lines `memtrace ARGS` prints, or None when it exits with an error."""
    r = subprocess.run([cli(), *args], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return None
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


def without_wall_time(rows: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Rows with cost.wall_ms zeroed: the only field that differs between two runs."""
    out = []
    for row in rows:
        row = json.loads(json.dumps(row))
        if isinstance(row.get("cost"), dict):
            row["cost"]["wall_ms"] = 0
        out.append(row)
    return out


def wheel() -> Path:
    w = os.environ.get("MEMTRACE_PY_WHEEL")
    if not w or not Path(w).is_file():
        pytest.fail("MEMTRACE_PY_WHEEL must name the wheel scripts/install-tools built")
    return Path(w)
