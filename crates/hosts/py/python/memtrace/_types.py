"""Results as plain dataclasses, with the fields of the CLI's ``--json`` output.

``to_dict()`` gives the dict ``memtrace … --json`` prints (one line per object), ``to_json()``
the same as JSON text.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Type, TypeVar

T = TypeVar("T", bound="_Result")


class _Result:
    """to_dict / to_json / from_dict for the dataclasses below."""

    # Keys left out of to_dict() when None (the CLI leaves them out too).
    _omit_none: Tuple[str, ...] = ()

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None and f.name in self._omit_none:
                continue
            out[f.name] = value.to_dict() if isinstance(value, _Result) else value
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls: Type[T], d: Dict[str, Any]) -> T:
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in d.items() if k in names})


@dataclass(frozen=True)
class Info(_Result):
    """A trace's summary, as ``memtrace info --json``."""

    format: str
    graph_id: str
    sessions: int
    operations: int
    variables: int
    edges: int
    failures: int
    annotations: int
    annotations_by_type: Dict[str, int]
    file: str
    questions: int
    found_by: List[Dict[str, Any]]
    conventions: Optional[Dict[str, Any]] = None
    looked_for: Optional[Dict[str, Any]] = None
    _omit_none = ("conventions", "looked_for")


@dataclass(frozen=True)
class Case(_Result):
    """A failed question: what was asked, the gold answers, what was answered."""

    query_id: str
    query: str
    golden_answers: List[str]
    prediction: str
    prediction_id: Optional[str]
    evidence_ids: List[str]
    judge_score: Optional[float]
    annotation: Optional[Dict[str, Any]]
    answer_op: Optional[str]
    judge_op: Optional[str]


@dataclass(frozen=True)
class Cost(_Result):
    """What a verdict cost: LLM calls, tokens, wall time."""

    llm_calls: int
    input_tokens: int
    output_tokens: int
    wall_ms: int
    tokens_estimated: bool = False

    def to_dict(self) -> Dict[str, Any]:
        out = super().to_dict()
        if not self.tokens_estimated:
            del out["tokens_estimated"]
        return out


@dataclass(frozen=True)
class Question(_Result):
    """Where a case's question is in the trace (to join with your own tables)."""

    id: str
    text: str
    session_id: str
    span_id: Optional[str]
    trace_id: Optional[str]


@dataclass(frozen=True)
class Verdict(_Result):
    """One case's outcome, as one line of ``memtrace attribute --json``: the earliest decisive
    faulty op (``op_id``, ``error_type``, ``reason``…), or ``error`` saying why there is none."""

    case_id: str
    question: Question
    op_id: Optional[str] = None
    op_name: Optional[str] = None
    error_type: Optional[str] = None
    reason: Optional[str] = None
    evidence_path: List[str] = field(default_factory=list)
    confidence: Optional[float] = None
    cost: Optional[Cost] = None
    method: Optional[str] = None
    error: Optional[str] = None
    # With verify=True: the counterfactual check (outcome, detail, replayed_answer, usage).
    counterfactual: Optional[Dict[str, Any]] = None
    _omit_none = ("counterfactual",)

    @property
    def ok(self) -> bool:
        """True when the case got a verdict."""
        return self.error is None

    def to_dict(self) -> Dict[str, Any]:
        if self.error is not None:
            return {"case_id": self.case_id, "error": self.error, "question": self.question.to_dict()}
        out = super().to_dict()
        del out["error"]
        return out

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Verdict":
        names = {f.name for f in dataclasses.fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        kw["question"] = Question.from_dict(d["question"])
        if d.get("cost") is not None:
            kw["cost"] = Cost.from_dict(d["cost"])
        return cls(**kw)


@dataclass(frozen=True)
class RoleInfo(_Result):
    """An op name's pipeline role, as ``memtrace roles --json``."""

    op_name: str
    role: str
    count: int
    basis: str
    reason: str
    other_roles: List[Any]


@dataclass(frozen=True)
class Story(_Result):
    """A case's decisive path as cards (evidence → ops → answer → judge), as
    ``memtrace story --json``."""

    case_id: str
    question: str
    golden_answers: List[str]
    prediction: str
    cards: List[Dict[str, Any]]
    groups: List[Dict[str, Any]]


@dataclass(frozen=True)
class DecisiveSet(_Result):
    """The minimal set of ops whose repair rescues the answer, and the replays that found it."""

    outcome: str
    ops: List[str]
    candidates: List[str]
    replays: List[Dict[str, Any]]
    detail: str
    usage: Dict[str, Any]
