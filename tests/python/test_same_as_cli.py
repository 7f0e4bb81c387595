"""`pip install` of the wheel in a fresh venv, then `memtrace.load(f).attribute()` on every
fixture equals `memtrace attribute --json` (wall time aside); a file the CLI refuses raises
`MemtraceError` in Python."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

from conftest import fixture_files, run_cli, wheel, without_wall_time

SCRIPT = r"""
import json, sys
import memtrace
for path in sys.argv[1:]:
    try:
        rows = [v.to_dict() for v in memtrace.load(path).attribute()]
        print(json.dumps({"file": path, "rows": rows}))
    except memtrace.MemtraceError as e:
        print(json.dumps({"file": path, "error_kind": e.kind, "error": e.message}))
"""


def test_fresh_venv_attribute_equals_cli(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps", str(wheel())],
        check=True,
    )
    files = fixture_files()
    out = subprocess.run(
        [str(python), "-c", SCRIPT, *map(str, files)],
        check=True, capture_output=True, text=True, cwd=tmp_path,
    )
    got = {d["file"]: d for d in map(json.loads, out.stdout.splitlines())}
    assert len(got) == len(files)
    verdicts = refused = 0
    for f in files:
        want = run_cli("attribute", "--json", str(f))
        py = got[str(f)]
        if want is None:
            assert "error_kind" in py, f"{f}: the CLI refuses it, Python attributed it"
            refused += 1
            continue
        assert "rows" in py, f"{f}: Python refused it ({py.get('error')}), the CLI did not"
        assert without_wall_time(py["rows"]) == without_wall_time(want), f
        verdicts += sum("error" not in r for r in want)
    print(f"{len(files)} files: {verdicts} verdicts equal, {refused} refused by both", file=sys.stderr)
    assert verdicts >= 20 and refused >= 1
