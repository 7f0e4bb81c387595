"""``memtrace.load`` and ``Trace``: the core's trace, asked from Python."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import IO, Any, Callable, List, Optional, Sequence, Union

from . import _native
from ._errors import MemtraceError
from ._types import Case, DecisiveSet, Info, RoleInfo, Story, Verdict

Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes]]
Progress = Callable[[int, int], object]

METHODS = ("infoflow", "graphtrace", "obstrace", "all-at-once", "step-by-step", "binary-search")
EXPORTS = ("smartcomment", "results", "csv", "annotations", "html", "markdown")


@dataclass(frozen=True)
class Provider:
    """An LLM for the methods that call one (graphtrace, obstrace and the baselines).

    base_url: up to the version path, e.g. ``http://localhost:11434/v1`` (Ollama); None: the
    provider's public API. model: the model name (``auto`` for a server with one model).
    api_key: sent only to base_url; None: the ``MEMTRACE_API_KEY`` environment variable.
    kind: ``openai`` (any OpenAI-compatible server) or ``anthropic``. concurrency: requests
    in flight; timeout_ms: per attempt; max_retries: on 429, 5xx and network errors;
    max_tokens: output tokens per reply at most, for requests that set none.
    """

    base_url: Optional[str] = None
    model: Optional[str] = None
    api_key: Optional[str] = None
    kind: str = "openai"
    concurrency: int = 4
    timeout_ms: int = 60_000
    max_retries: int = 6
    max_tokens: Optional[int] = None

    def __repr__(self) -> str:  # the key stays out of logs
        key = "set" if self.api_key else None
        return f"Provider(base_url={self.base_url!r}, model={self.model!r}, api_key={key}, kind={self.kind!r})"


def _read(source: Source, max_bytes: Optional[int] = None) -> "tuple[bytes, str]":
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), "trace.json"
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            # A file over the largest file is refused before it is read.
            _native.check_size(os.path.getsize(path), max_bytes)
            with open(path, "rb") as f:
                return f.read(), path
        except OSError as e:
            raise MemtraceError("io", f"cannot read {path}: {e.strerror}", "check the path") from e
    read = getattr(source, "read", None)
    if read is None:
        raise MemtraceError(
            "argument",
            f"cannot load a {type(source).__name__}",
            "pass a path, bytes or a binary file object",
        )
    data = read()
    if isinstance(data, str):
        data = data.encode("utf-8")
    return bytes(data), str(getattr(source, "name", "trace.json"))


def load(
    source: Source,
    *,
    annotations: Optional[Source] = None,
    format: Optional[str] = None,
    lenient: bool = False,
    judge_threshold: Optional[float] = None,
    failed_if: Sequence[str] = (),
    roles: Sequence[str] = (),
    name: Optional[str] = None,
    max_bytes: Optional[int] = None,
) -> "Trace":
    """Reads a trace: smartcomment / MemTraceBench JSON, OTLP JSON, JSON Lines or protobuf,
    Langfuse; gzip or zstd compressed too. A project bundle the page saved gives the trace it
    had on screen, with the role overrides, failure rules and marks saved with it (as the CLI
    reads a bundle).

    source: a path, the file's bytes, or a binary file object.
    annotations: an annotation file (a ``.annotations.json`` sidecar, or one the page
    exported), the same kinds of source: its ground truth is merged into the trace.
    format: ``smartcomment``, ``otlp`` or ``langfuse`` instead of detecting it.
    lenient: keep what is valid; ``Trace.problems()`` lists what was dropped.
    judge_threshold: a graded judge score below this fails the question (default 0.5).
    failed_if: failure rules for judges memtrace does not recognize, e.g.
    ``"span=judge output~(?i)wrong"`` (docs/failures.md).
    roles: ``"NAME=ROLE"`` overrides of op roles (extraction, update, deletion, retrieval,
    response, judge, other).
    name: how results name the trace (default: the path, or ``trace.json``).
    max_bytes: the largest file, in bytes once decompressed (default: a quarter of this
    machine's memory, at least 512 MiB); a larger one raises ``MemtraceError`` of kind
    ``too_large`` (a path before it is read).

    Raises ``MemtraceError`` (``kind`` json, field, unknown_format, too_large, …) when it does
    not load.
    """
    if max_bytes is not None and (
        isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1
    ):
        raise MemtraceError(
            "argument",
            f"max_bytes must be a whole number of bytes, at least 1 (got {max_bytes!r})",
            "e.g. max_bytes=2 * 2**30 for 2 GiB; leave it out for the default",
        )
    data, shown = _read(source, max_bytes)
    native = _native.load(
        data,
        annotations=_read(annotations)[0] if annotations is not None else None,
        name=name or shown,
        format=format,
        lenient=lenient,
        judge_threshold=judge_threshold,
        failed_if=list(failed_if),
        roles=list(roles),
        max_bytes=max_bytes,
    )
    return Trace(native)


class Trace:
    """A loaded trace. Ask it many times: roles and indexes are built once; the verdicts of
    ``attribute`` are kept for ``export``."""

    def __init__(self, native: _native.NativeTrace) -> None:
        self._native = native

    def info(self) -> Info:
        """Counts (sessions, operations, variables, edges, failures, annotations), questions,
        and how failures were found — ``memtrace info --json``."""
        return Info.from_dict(json.loads(self._native.info()))

    def problems(self) -> List[Any]:
        """With ``lenient=True``: what was dropped while loading."""
        out: List[Any] = json.loads(self._native.problems())
        return out

    def cases(self) -> List[Case]:
        """The failed questions, in file order."""
        return [Case.from_dict(d) for d in json.loads(self._native.cases())]

    def attribute(
        self,
        method: str = "infoflow",
        case: Optional[str] = None,
        *,
        provider: Optional[Provider] = None,
        hint_infoflow: bool = False,
        prior: Optional[str] = None,
        max_iterations: int = 40,
        history_budget_tokens: int = 60_000,
        roles: Sequence[str] = (),
        verify: bool = False,
        progress: Optional[Progress] = None,
    ) -> List[Verdict]:
        """Attributes each failed case (or only ``case``) to its earliest decisive faulty op —
        the lines of ``memtrace attribute --json``. The GIL is released while it runs.

        method: ``infoflow`` (no LLM, the default), ``graphtrace``, ``obstrace``,
        ``all-at-once``, ``step-by-step`` or ``binary-search`` (these need ``provider``).
        case: a case's ``query_id`` (see ``cases()``); None: every failed case.
        provider: the LLM the agent methods call (``memtrace.Provider``).
        hint_infoflow: graphtrace offers the info-flow verdict and failure slice as a hint.
        prior: graphtrace / obstrace: text describing the pipeline and which stages to check
        first (default: a Mem0-style prior).
        max_iterations: agents call the LLM at most this many times per case.
        history_budget_tokens: agents summarize older turns past this many tokens.
        roles: ``"NAME=ROLE"`` overrides on top of those given to ``load``.
        verify: check each verdict by counterfactual replay (``Verdict.counterfactual``:
        verified / refuted / not-replayable), as ``memtrace attribute --verify``.
        progress: called as ``progress(done, total)`` after each case.

        A case whose run fails is run again, 3 attempts in all, unless that cannot help (a
        rejected key, a wrong URL or model, a run that ended without an answer): the retry
        policy every host shares. A case without a verdict gets a ``Verdict`` whose ``error``
        says why; a bad argument raises ``MemtraceError`` (``argument``, ``not_found``,
        ``provider``).
        """
        p = provider
        options = {
            "method": method,
            "hint_infoflow": hint_infoflow,
            "prior": prior,
            "max_iterations": max_iterations,
            "history_budget_tokens": history_budget_tokens,
            "roles": list(roles),
            "provider": p.kind if p else None,
            "base_url": p.base_url if p else None,
            "model": p.model if p else None,
            "api_key": p.api_key if p else None,
            "concurrency": p.concurrency if p else 1,
            "timeout_ms": p.timeout_ms if p else 60_000,
            "max_retries": p.max_retries if p else 6,
            "max_tokens": p.max_tokens if p else None,
            "verify": verify,
        }
        lines = self._native.attribute(case, options, progress)
        return [Verdict.from_dict(json.loads(line)) for line in lines]

    def story(self, case: str) -> Story:
        """A case's decisive path from the evidence to the judge, the decisive op marked
        (``memtrace story --json``)."""
        return Story.from_dict(json.loads(self._native.story(case)))

    def roles(self) -> List[RoleInfo]:
        """Each op name's pipeline role, how many ops have it and why (``memtrace roles``)."""
        return [RoleInfo.from_dict(d) for d in json.loads(self._native.roles())]

    def decisive_set(self, case: str, budget: int = 64) -> DecisiveSet:
        """The minimal set of ops whose repair rescues the answer: ddmin over counterfactual
        replays of the reference pipeline (simulated provider), at most ``budget`` replays."""
        return DecisiveSet.from_dict(json.loads(self._native.decisive_set(case, budget)))

    def export(self, kind: str) -> str:
        """The trace or the kept verdicts as text. kind: ``smartcomment`` (the trace),
        ``results`` (a MemTrace run file), ``csv``, ``annotations`` (MemTraceBench), ``html`` or
        ``markdown`` (the diagnostic report)."""
        return self._native.export(kind)
