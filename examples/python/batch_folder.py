"""Attribute a folder of traces on a Dask cluster: one task per trace, verdicts as JSON Lines
and Parquet, a corrupt trace as one error row; a rerun skips the traces already done.

    python examples/python/batch_folder.py TRACES_DIR OUT.jsonl [--workers 2] [--scheduler tcp://host:8786]

Without --scheduler it starts a local cluster of --workers processes.
"""

from __future__ import annotations

import argparse

from dask.distributed import Client, LocalCluster

from memtrace import batch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("traces")
    ap.add_argument("out")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--scheduler", help="address of a running Dask scheduler")
    ap.add_argument("--method", default="infoflow")
    ap.add_argument("--sidecars", action="store_true", help="merge NAME.annotations.json beside each trace")
    args = ap.parse_args()
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=None)
        client = Client(cluster)
    with client:
        s = batch.attribute_folder(
            args.traces, args.out, client=client, method=args.method, sidecars=args.sidecars
        )
    rows = batch.to_parquet(args.out, args.out.rsplit(".", 1)[0] + ".parquet")
    print(f"{s.traces} traces attributed, {s.skipped} skipped (done before): "
          f"{s.verdicts} verdicts, {s.errors} error rows; {rows} rows in Parquet")


if __name__ == "__main__":
    main()
