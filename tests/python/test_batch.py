"""The Dask example on a local cluster of two workers: the same rows as the CLI, one error row
for a corrupt trace, a rerun that skips what was done, and Parquet."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List

import pyarrow.parquet as pq

from conftest import ROOT, run_cli, without_wall_time
from memtrace import batch

FIXTURES = [
    "smartcomment/mem0_commented.json",
    "smartcomment/mem0_bare.json",
    "otlp/mem0_openinference.jsonl",
    "otlp/mem0_llm_judge.jsonl",
    "otel/genai_traces.pb.gz",
    "otel/openinference_traces.pb.zst",
    "langfuse/mem0_traces.json",
]


def run_example(folder: Path, out: Path) -> str:
    r = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "python" / "batch_folder.py"), str(folder), str(out), "--workers", "2"],
        capture_output=True, text=True, timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_dask_example_two_workers(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    for name in FIXTURES:
        shutil.copy(ROOT / "tests" / "fixtures" / name, folder / name.replace("/", "-"))
    (folder / "corrupt.json").write_bytes(b'{"data": {"nodes": [{"id": ')
    out = tmp_path / "verdicts.jsonl"

    first = run_example(folder, out)
    rows = batch.read_rows(str(out))
    errors = [r for r in rows if r.get("error_kind")]
    assert errors == [{"file": "corrupt.json", "error": errors[0]["error"], "error_kind": "json"}], errors
    assert "line 1" in errors[0]["error"]

    by_file: Dict[str, List[Dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if not r.get("error_kind"):
            by_file[r.pop("file")].append(r)
    verdicts = 0
    for name in FIXTURES:
        want = run_cli("attribute", "--json", str(ROOT / "tests" / "fixtures" / name))
        assert want is not None, name
        assert without_wall_time(by_file.get(name.replace("/", "-"), [])) == without_wall_time(want), name
        verdicts += len(want)
    assert verdicts >= 5
    assert f"{len(FIXTURES) + 1} traces attributed, 0 skipped" in first, first

    second = run_example(folder, out)
    assert f"0 traces attributed, {len(FIXTURES) + 1} skipped" in second, second
    assert len(batch.read_rows(str(out))) == len(rows)
    table = pq.read_table(str(tmp_path / "verdicts.parquet"))
    assert table.num_rows == len(rows)
    assert {"file", "case_id", "op_id", "error_type", "question", "error", "error_kind"} <= set(table.column_names)


def test_sidecar_annotations_are_merged(tmp_path: Path) -> None:
    from dask.distributed import Client, LocalCluster

    lab = ROOT / "tests" / "data" / "lab" / "mem0ai" / "openinference"
    folder = tmp_path / "traces"
    folder.mkdir()
    for name in ("26.pb.gz", "26.annotations.json"):
        shutil.copy(lab / name, folder / name)
    out = tmp_path / "rows.jsonl"
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, Client(cluster) as client:
        s = batch.attribute_folder(str(folder), str(out), client=client, sidecars=True)
    assert (s.traces, s.skipped, s.errors) == (1, 0, 0)
    want = run_cli("attribute", "--json", str(lab / "26.pb.gz"), "--annotations", str(lab / "26.annotations.json"))
    got = [{k: v for k, v in r.items() if k != "file"} for r in batch.read_rows(str(out))]
    assert want and without_wall_time(got) == without_wall_time(want)
