"""Attribute every failed question of a trace and print the verdicts.

    python examples/python/quickstart.py tests/fixtures/smartcomment/mem0_commented.json
"""

from __future__ import annotations

import sys

import memtrace


def main(path: str) -> None:
    trace = memtrace.load(path)
    info = trace.info()
    print(f"{info.file}: {info.failures} failed of {info.questions} questions ({info.format})")
    for v in trace.attribute(progress=lambda done, total: print(f"  {done}/{total}", file=sys.stderr)):
        if v.ok:
            print(f"{v.case_id}  {v.error_type} at {v.op_name}: {v.reason}")
        else:
            print(f"{v.case_id}  no verdict: {v.error}")


if __name__ == "__main__":
    main(sys.argv[1])
