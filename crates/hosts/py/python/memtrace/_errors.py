"""The one exception memtrace raises, with the JavaScript module's `MemtraceError` kinds."""

from __future__ import annotations

from typing import Optional

KINDS = (
    "json", "field", "unknown_format", "dangling", "duplicate_id", "cycle", "bad_timestamp",
    "too_large", "argument", "not_found", "rule", "regex", "attribution", "provider", "optimize",
    "cancelled", "io",
)


class MemtraceError(Exception):
    """An error of memtrace.

    kind: one word (see ``KINDS``): ``json``, ``field``, ``unknown_format``, ``dangling``,
    ``duplicate_id``, ``cycle``, ``bad_timestamp``, ``too_large``, ``argument``, ``not_found``,
    ``rule``, ``regex``, ``attribution``, ``provider``, ``optimize``, ``cancelled``; and ``io``
    for a file Python could not read.
    path: a JSON path into the file, when the error has one; line, column: 1-based place of
    bad JSON; hint: what to do.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        hint: str = "",
        path: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.hint = hint
        self.path = path
        self.line = line
        self.column = column

    def __str__(self) -> str:
        return f"{self.message} ({self.kind}; {self.hint})" if self.hint else self.message
