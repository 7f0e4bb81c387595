"""What the libraries' harnesses share: the user's answer and judge calls over an OpenAI client,
each session's turns in batches, and mem0's `Memory` as mem0ai 2.x and 1.0.x are configured."""

import os
import random
import shutil
import uuid

import tracers
from prompts import ANSWER_PROMPT, JUDGE_PROMPT

MODEL = "gpt-4.1-mini"


def answer_and_judge(client, lines, q, model=MODEL):
    """The user's answer call over the retrieved memory `lines`, then the judge's call:
    (answer, the judge's reply)."""
    ans = client.chat.completions.create(
        model=model, temperature=0, messages=[{"role": "user", "content": ANSWER_PROMPT.format(
            memories=lines, question=q["question"])}]).choices[0].message.content
    verdict = client.chat.completions.create(
        model=model, temperature=0, response_format={"type": "json_object"},
        messages=[{"role": "user", "content": JUDGE_PROMPT.format(
            question=q["question"], gold=q["answer"], answer=ans)}]).choices[0].message.content
    return ans, verdict


def batches(conv, sessions, chunk, system=True):
    """Each session's turns, `chunk` at a time, as chat messages (the first speaker the user):
    (session, its date, messages); with `system`, a system message naming the speakers and the
    session date comes first."""
    a, b = conv["speaker_a"], conv["speaker_b"]
    for n in sessions:
        date = conv[f"session_{n}_date_time"]
        turns = conv[f"session_{n}"]
        for i in range(0, len(turns), chunk):
            msgs = [{"role": "system", "content": f"Speakers: {a} and {b}. Session date: {date}."}] if system else []
            msgs += [{"role": "user" if t["speaker"] == a else "assistant",
                      "content": f"{t['speaker']}: {t['text']}"} for t in turns[i:i + chunk]]
            yield n, date, msgs


class Mem0Library:
    """mem0's `Memory` on faiss and OpenAI embeddings, one store per conversation, its ids
    seeded per run."""

    def __init__(self, lab):
        from openai import OpenAI
        self.lab = lab
        self.client = OpenAI(base_url=lab.base + "/v1")

    def memory(self, tag):
        from mem0 import Memory
        # Memory ids from a generator seeded per run, not uuid4's entropy: mem0 orders ties (entity
        # links, search batches) by id, so random ids made two runs of one conversation differ.
        rng = random.Random(tag)
        uuid.uuid4 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)
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

    def ask(self, mem, user, q):
        """Question `q` asked inside the tracer's question span: the memories found (`search`,
        each version's call), the answer and judge calls over them, each memory with its
        session date; the judge's label (`label`, each version's reading)."""
        with tracers.question(self.lab.tracer_name, self.lab.tracer, q["question"]) as out:
            found = self.search(mem, user, q["question"])
            lines = "\n".join(f"- {(m.get('metadata') or {}).get('session_date', '')}: {m['memory']}"
                              for m in found)
            ans, verdict = answer_and_judge(self.client, lines, q)
            label = self.label(verdict)
            out.set(ans, label)
        return label


def mem0_faulty_span(spans, fault, applied, view, question_span):
    """The span of the call whose reply the server corrupted in a mem0 run, either version
    (`view`: lab/tracers.View): the search's query embedding, or the LLM call that got the reply."""
    if fault["kind"] == "embedding":
        for s in spans:
            if view.kind(s) != "EMBEDDING":
                continue
            if view.tracer == "openinference":
                if fault["question"] in (view(s, "embedding.embeddings.0.embedding.text") or ""):
                    return s
            elif view.under(s, question_span):  # the search's query embedding
                return s
        return None
    reply = next((a["reply"] for a in applied if a["spec"] == fault), None)
    for s in spans:
        if view.kind(s) == "LLM" and reply and view.reply(s) == reply:
            return s
    return None
