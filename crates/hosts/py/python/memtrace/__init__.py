"""memtrace: why did the memory system answer wrongly?

    import memtrace
    trace = memtrace.load("run.json")          # a path, bytes or a binary file object
    for v in trace.attribute():                # info-flow: no LLM
        print(v.case_id, v.error_type, v.op_name, v.reason)

The same engine as the ``memtrace`` command and the JavaScript module (a Rust core, built into
this package). ``memtrace.batch`` attributes folders of traces on a Dask cluster.
"""

from ._errors import KINDS, MemtraceError
from ._native import version
from ._trace import EXPORTS, METHODS, Provider, Trace, load
from ._types import Case, Cost, DecisiveSet, Info, Question, RoleInfo, Story, Verdict

__version__ = version()

__all__ = [
    "KINDS", "EXPORTS", "METHODS", "MemtraceError", "Provider", "Trace", "load", "version",
    "Case", "Cost", "DecisiveSet", "Info", "Question", "RoleInfo", "Story", "Verdict",
]
