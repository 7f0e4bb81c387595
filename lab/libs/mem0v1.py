"""mem0ai 1.0.x (the version MemBase / MemTraceBench ran) as its users call it
(`Memory.from_config`, `Memory.add`, `Memory.search`): its fact-extraction prompt ({"facts"}) and
then its update-memory prompt, whose reply decides ADD / UPDATE / DELETE / NONE per memory
({"memory": [{"id", "text", "event", "old_memory"}]}). Its OpenAI client is traced by
openinference-instrumentation-openai. It runs in a venv of its own (lab/requirements-mem0v1.txt,
~/.cache/memtrace/lab-venv-mem0v1): it does not install beside mem0ai 2.2.1. The speakers and the
session date go in a system message of each batch (its extraction prompt puts today's date)."""

import json

import tracers
from libs.common import Mem0Library, batches, mem0_faulty_span as faulty_span  # noqa: F401 (lab/writer.py calls it)

NAME = "mem0v1"
TRACERS = ["openinference"]
SERVICE = "mem0v1-locomo"
VENV = "lab-venv-mem0v1"  # under ~/.cache/memtrace (MEMTRACE_LAB_VENV_MEM0V1 overrides): lab/run.py runs it there
CHUNK = 8  # turns per Memory.add call
SESSIONS = 6  # sessions per conversation
STYLES = {"extraction": ["date", "drop", "speaker", "negate", "number", "name"],
          "answer": ["other_memory", "date", "refuse", "negate"],
          "update": ["value", "unrelated"], "deletion": ["stale"],
          "embedding": ["unrelated", "inverted"]}
KINDS = ["update", "deletion", "extraction", "answer", "embedding"]


def instrument(provider, tracer="openinference", logger_provider=None):
    tracers.instrument(tracer, provider, logger_provider)


class Library(Mem0Library):
    def run(self, conv, sessions, questions):
        """Adds the sessions, asks the questions; returns {question: label}."""
        mem = self.memory(f"c{conv['id']}")
        user = f"locomo-{conv['id']}"
        for n, date, msgs in batches(conv, sessions, CHUNK):
            mem.add(msgs, user_id=user, metadata={"session": n, "session_date": date})
        labels = {q["question"]: self.ask(mem, user, q) for q in questions}
        mem.close()
        return labels

    @staticmethod
    def search(mem, user, question):
        return mem.search(question, user_id=user, limit=5)["results"]

    @staticmethod
    def label(verdict):
        return json.loads(verdict).get("label", "WRONG")


def evidence_prompts(spans, texts, view):
    """The fact-extraction prompts whose Input holds an evidence turn."""
    out = []
    for s in spans:
        content = view.user_message(s) or ""
        if content.startswith("Input:\n") and any(t in content for t in texts):
            out.append(content)
    return out
