"""mem0ai 2.2.1 as its users call it (`Memory.from_config`, `Memory.add`, `Memory.search`), its
OpenAI client traced by openinference-instrumentation-openai."""

import json
import os
import shutil

from prompts import ANSWER_PROMPT, JUDGE_PROMPT

NAME = "mem0ai"
SERVICE = "mem0-locomo"
MODEL = "gpt-4.1-mini"
CHUNK = 8  # turns per Memory.add call
SESSIONS = 6  # sessions per conversation
STYLES = {"extraction": ["date", "drop", "speaker", "negate", "number", "name"],
          "answer": ["other_memory", "date", "refuse", "negate"],
          "embedding": ["unrelated", "inverted"]}


def instrument(provider):
    from openinference.instrumentation.openai import OpenAIInstrumentor
    OpenAIInstrumentor().instrument(tracer_provider=provider)


class Library:
    def __init__(self, lab):
        from openai import OpenAI
        self.lab = lab
        self.client = OpenAI(base_url=lab.base + "/v1")

    def memory(self, tag):
        from mem0 import Memory
        path = os.path.join(self.lab.work, tag)
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return Memory.from_config({
            "llm": {"provider": "openai", "config": {"model": MODEL, "temperature": 0}},
            "embedder": {"provider": "openai",
                         "config": {"model": "text-embedding-3-small", "embedding_dims": 256}},
            "vector_store": {"provider": "faiss",
                             "config": {"path": os.path.join(path, "faiss"),
                                        "embedding_model_dims": 256,
                                        "distance_strategy": "cosine"}},
            "history_db_path": os.path.join(path, "history.db"),
        })

    def run(self, conv, sessions, questions):
        """Adds the sessions, asks the questions; returns {question: label}."""
        mem = self.memory(f"c{conv['id']}")
        a, b = conv["speaker_a"], conv["speaker_b"]
        user = f"locomo-{conv['id']}"
        for n in sessions:
            date = conv[f"session_{n}_date_time"]
            turns = conv[f"session_{n}"]
            for i in range(0, len(turns), CHUNK):
                msgs = [{"role": "user" if t["speaker"] == a else "assistant",
                         "content": f"{t['speaker']}: {t['text']}"} for t in turns[i:i + CHUNK]]
                mem.add(msgs, user_id=user, metadata={"session": n, "session_date": date},
                        prompt=f"Speakers: {a} and {b}. Session date: {date}. "
                               "Resolve relative dates against the session date.")
        labels = {q["question"]: self.ask(mem, user, q) for q in questions}
        mem.close()
        return labels

    def ask(self, mem, user, q):
        with self.lab.tracer.start_as_current_span("locomo-question") as span:
            span.set_attribute("openinference.span.kind", "CHAIN")
            span.set_attribute("input.value", q["question"])
            found = mem.search(q["question"], filters={"user_id": user}, top_k=5)["results"]
            lines = "\n".join(f"- {(m.get('metadata') or {}).get('session_date', '')}: {m['memory']}"
                              for m in found)
            ans = self.client.chat.completions.create(
                model=MODEL, temperature=0, messages=[{"role": "user", "content": ANSWER_PROMPT.format(
                    memories=lines, question=q["question"])}]).choices[0].message.content
            verdict = self.client.chat.completions.create(
                model=MODEL, temperature=0, response_format={"type": "json_object"},
                messages=[{"role": "user", "content": JUDGE_PROMPT.format(
                    question=q["question"], gold=q["answer"], answer=ans)}]).choices[0].message.content
            label = json.loads(verdict).get("label", "WRONG")
            span.set_attribute("output.value", json.dumps({"answer": ans, "label": label}))
            span.set_attribute("output.mime_type", "application/json")
        return label


def faulty_span(spans, fault, applied, attr, question_span):
    """The span of the call whose reply the server corrupted."""
    if fault["kind"] == "embedding":
        for s in spans:
            if attr(s, "openinference.span.kind") == "EMBEDDING" and \
                    fault["question"] in (attr(s, "embedding.embeddings.0.embedding.text") or ""):
                return s
        return None
    reply = next((a["reply"] for a in applied if a["spec"] == fault), None)
    for s in spans:
        if attr(s, "openinference.span.kind") == "LLM" and reply and \
                attr(s, "llm.output_messages.0.message.content") == reply:
            return s
    return None


def evidence_prompts(spans, texts, attr):
    """The extraction prompts whose New Messages hold an evidence turn."""
    out = []
    for s in spans:
        content = attr(s, "llm.input_messages.1.message.content") or ""
        new = content.split("## New Messages", 1)[-1].split("## Observation Date", 1)[0]
        if "## New Messages" in content and any(t in new for t in texts):
            out.append(content)
    return out
