"""Traces per second of memtrace.batch on a local Dask cluster with 1 and 2 workers.

    python examples/python/bench_batch.py [--copies 3] [--source tests/data/lab]

The traces are those under --source that load (default: the real mem0ai and LangMem lab traces,
OpenInference protobuf, 14 files), copied --copies times into a temporary folder; each run
starts from an empty output, so nothing is skipped.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from dask.distributed import Client, LocalCluster

import memtrace
from memtrace import batch

ROOT = Path(__file__).resolve().parents[2]


def traces(source: Path, folder: Path, copies: int) -> int:
    n = 0
    for p in batch.list_traces(str(source)):
        try:
            memtrace.load(p)
        except memtrace.MemtraceError:
            continue
        for i in range(copies):
            shutil.copy(p, folder / f"{i}-{Path(p).relative_to(source).as_posix().replace('/', '-')}")
            n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--source", type=Path, default=ROOT / "tests" / "data" / "lab")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "traces"
        folder.mkdir()
        n = traces(args.source.resolve(), folder, args.copies)
        rates = {}
        for workers in (1, 2):
            with LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None) as cluster:
                with Client(cluster) as client:
                    client.run(lambda: __import__("memtrace"))  # import before the clock starts
                    s = batch.attribute_folder(str(folder), f"{tmp}/out{workers}.jsonl", client=client)
            assert s.traces == n and s.skipped == 0
            rates[workers] = s.traces_per_second
        print(f"{n} traces ({args.copies} copies of each under {args.source.name}), infoflow, "
              f"local cluster, 1 thread per worker:")
        print(f"  workers  traces/s")
        for w, r in rates.items():
            print(f"  {w:>7}  {r:8.1f}")
        print(f"  speedup  {rates[2] / rates[1]:8.2f}x")


if __name__ == "__main__":
    main()
