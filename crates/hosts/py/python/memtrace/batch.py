"""Attribute a folder (or an object-store prefix) of traces on a Dask distributed cluster.

One task per trace. Each verdict becomes one row with the fields of ``memtrace attribute
--json`` and ``file`` (the trace's path under the folder); a trace that does not load becomes
one row ``{"file", "error", "error_kind"}`` and the batch goes on. Rows are appended to a JSON
Lines file as tasks finish, and the finished traces to ``OUT.done``: a rerun skips them.
``to_parquet`` writes the rows as Parquet (pyarrow).

    from dask.distributed import Client
    from memtrace import batch
    with Client("tcp://scheduler:8786") as client:     # or Client() for a local cluster
        batch.attribute_folder("s3://bucket/traces/", "verdicts.jsonl", client=client)

Workers need ``memtrace`` installed and read the traces themselves (a shared folder, or an
object store that fsspec reaches, e.g. ``s3://`` with s3fs installed).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Sequence, Set

import fsspec

from ._errors import MemtraceError
from ._trace import Provider, load

if TYPE_CHECKING:
    from distributed import Client

# What counts as a trace file in a folder (compressed ones too).
SUFFIXES = (".json", ".jsonl", ".pb", ".gz", ".zst")


@dataclass(frozen=True)
class Summary:
    """What one ``attribute_folder`` run did."""

    traces: int  # traces attributed in this run
    skipped: int  # traces already done by an earlier run
    verdicts: int  # rows with a verdict
    errors: int  # rows with an error (a trace that did not load, a case without verdict)
    seconds: float

    @property
    def traces_per_second(self) -> float:
        return self.traces / self.seconds if self.seconds > 0 else 0.0


def list_traces(source: str, suffixes: Sequence[str] = SUFFIXES) -> List[str]:
    """The trace files under ``source`` (a folder or an fsspec URL prefix), sorted; sidecar
    annotation files (``*.annotations.json``) left out."""
    fs, root = fsspec.core.url_to_fs(source)
    out = []
    for path in fs.find(root):
        if path.endswith(tuple(suffixes)) and not path.endswith(".annotations.json"):
            proto = source.split("://", 1)[0] + "://" if "://" in source else ""
            out.append(proto + path)
    return sorted(out)


def sidecar(path: str) -> str:
    """Where the annotations of a trace are: ``26.pb.gz`` → ``26.annotations.json``."""
    base = path
    for ext in (".gz", ".zst", ".pb", ".jsonl", ".json"):
        base = base[: -len(ext)] if base.endswith(ext) else base
    return base + ".annotations.json"


def attribute_file(
    path: str,
    name: str,
    method: str = "infoflow",
    provider: Optional[Provider] = None,
    options: Optional[Dict[str, Any]] = None,
    sidecars: bool = False,
) -> List[Dict[str, Any]]:
    """One task: the rows of one trace file (its verdicts, or one error row), each with
    ``file`` set to ``name``; with ``sidecars``, the trace's ``.annotations.json`` beside it
    (see ``sidecar``) is merged when there is one."""
    try:
        with fsspec.open(path, "rb") as f:
            data = f.read()
        annotations = None
        fs, side = fsspec.core.url_to_fs(sidecar(path))
        if sidecars and fs.exists(side):
            annotations = fs.cat_file(side)
        trace = load(data, name=name, annotations=annotations)
        verdicts = trace.attribute(method, provider=provider, **(options or {}))
    except MemtraceError as e:
        return [{"file": name, "error": e.message, "error_kind": e.kind}]
    except OSError as e:
        return [{"file": name, "error": str(e), "error_kind": "io"}]
    return [{"file": name, **v.to_dict()} for v in verdicts]


def _done(out: str) -> Set[str]:
    try:
        with open(out + ".done", encoding="utf-8") as f:
            return {line.rstrip("\n") for line in f if line.strip()}
    except FileNotFoundError:
        return set()


def attribute_folder(
    source: str,
    out: str,
    *,
    client: Optional["Client"] = None,
    method: str = "infoflow",
    provider: Optional[Provider] = None,
    files: Optional[Iterable[str]] = None,
    sidecars: bool = False,
    **options: Any,
) -> Summary:
    """Attributes every trace under ``source`` with ``method``, one Dask task per trace, and
    appends the rows to ``out`` (JSON Lines) as tasks finish.

    client: a ``dask.distributed.Client`` (default: the current one, else a local cluster).
    provider: the LLM for graphtrace / obstrace / the baselines (``memtrace.Provider``).
    files: the trace paths to run (default: ``list_traces(source)``).
    sidecars: merge each trace's ``NAME.annotations.json`` ground truth when it is there.
    options: more keyword arguments of ``Trace.attribute`` (``roles``, ``prior``, …).
    Traces listed in ``out + ".done"`` (finished by an earlier run) are skipped.
    """
    from distributed import Client, as_completed, get_client

    started = time.perf_counter()
    paths = list(files) if files is not None else list_traces(source)
    base = source.rstrip("/")
    names = {p: os.path.relpath(p, base) if "://" not in p else p[len(base) + 1:] for p in paths}
    done = _done(out)
    todo = [p for p in paths if names[p] not in done]
    own = None
    if client is None:
        try:
            client = get_client()
        except ValueError:
            client = own = Client(processes=True)
    verdicts = errors = 0
    try:
        futures = client.map(
            attribute_file,
            todo,
            [names[p] for p in todo],
            method=method,
            provider=provider,
            options=options,
            sidecars=sidecars,
            pure=False,
        )
        by_key = {f.key: names[p] for f, p in zip(futures, todo)}
        with open(out, "a", encoding="utf-8") as rows, open(out + ".done", "a", encoding="utf-8") as marks:
            for future in as_completed(futures):
                result = future.result()
                for row in result:
                    rows.write(json.dumps(row, ensure_ascii=False) + "\n")
                    if "error" in row:
                        errors += 1
                    else:
                        verdicts += 1
                rows.flush()
                # A trace without failed cases (no rows) is done too.
                marks.write(by_key[future.key] + "\n")
                marks.flush()
    finally:
        if own is not None:
            own.close()
    return Summary(len(todo), len(paths) - len(todo), verdicts, errors, time.perf_counter() - started)


def read_rows(out: str) -> List[Dict[str, Any]]:
    """The rows of a JSON Lines file ``attribute_folder`` wrote."""
    with open(out, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def to_parquet(out: str, parquet: str) -> int:
    """Writes the rows of ``out`` as a Parquet file (nested ``question`` and ``cost`` as
    structs); returns the row count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = read_rows(out)
    # The schema from every row (an error row lacks the verdict's fields), not the first.
    pq.write_table(pa.Table.from_struct_array(pa.array(rows)), parquet)
    return len(rows)
