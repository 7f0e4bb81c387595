"""mem0ai 2.2.1 as its users call it (`Memory.from_config`, `Memory.add`, `Memory.search`), its
OpenAI client traced by the tracer of `lab/run.py --tracer` (lab/tracers.py)."""

import tracers
from libs.common import Mem0Library, batches, mem0_faulty_span as faulty_span  # noqa: F401 (lab/writer.py calls it)
from voices import label_of

NAME = "mem0ai"
TRACERS = ["openinference", "genai", "openllmetry"]  # lab/tracers.py
SERVICE = "mem0-locomo"
CHUNK = 8  # turns per Memory.add call
SESSIONS = 6  # sessions per conversation
STYLES = {"extraction": ["date", "drop", "speaker", "negate", "number", "name"],
          "answer": ["other_memory", "date", "refuse", "negate"],
          "embedding": ["unrelated", "inverted"]}


def instrument(provider, tracer="openinference", logger_provider=None):
    tracers.instrument(tracer, provider, logger_provider)


class Library(Mem0Library):
    def run(self, conv, sessions, questions):
        """Adds the sessions, asks the questions; returns {question: label}."""
        mem = self.memory(f"c{conv['id']}")
        a, b = conv["speaker_a"], conv["speaker_b"]
        user = f"locomo-{conv['id']}"
        for n, date, msgs in batches(conv, sessions, CHUNK, system=False):
            mem.add(msgs, user_id=user, metadata={"session": n, "session_date": date},
                    prompt=f"Speakers: {a} and {b}. Session date: {date}. "
                           "Resolve relative dates against the session date.")
        labels = {q["question"]: self.ask(mem, user, q) for q in questions}
        mem.close()
        return labels

    @staticmethod
    def search(mem, user, question):
        return mem.search(question, filters={"user_id": user}, top_k=5)["results"]

    @staticmethod
    def label(verdict):
        return label_of(verdict)  # any judge: a label word, JSON, a score (lab/voices.py)


def evidence_prompts(spans, texts, view):
    """The extraction prompts whose New Messages hold an evidence turn."""
    out = []
    for s in spans:
        content = view.user_message(s) or ""
        new = content.split("## New Messages", 1)[-1].split("## Observation Date", 1)[0]
        if "## New Messages" in content and any(t in new for t in texts):
            out.append(content)
    return out
