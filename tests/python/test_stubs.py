"""The package's stubs and annotations type-check (mypy --strict), with a user's script."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import memtrace
from conftest import ROOT


# Dask, fsspec and pyarrow ship untyped functions or no stubs: calls into them are not checked.
def test_mypy_strict_on_the_package_and_the_examples(tmp_path: Path) -> None:
    package = Path(memtrace.__file__).parent
    # A copy, so mypy does not see the rest of site-packages as top-level modules.
    shutil.copytree(package, tmp_path / "memtrace", ignore=shutil.ignore_patterns("__pycache__"))
    assert (package / "py.typed").is_file() and (package / "_native.pyi").is_file()
    examples = sorted(str(p) for p in (ROOT / "examples" / "python").glob("*.py"))
    assert examples
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--allow-untyped-calls", "--ignore-missing-imports", "--no-incremental",
         "memtrace", *examples],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_catches_a_wrong_call(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import memtrace\nmemtrace.load('x').attribute(method=3)\n")
    r = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", str(bad)], capture_output=True, text=True)
    assert r.returncode == 1 and "method" in r.stdout, r.stdout
