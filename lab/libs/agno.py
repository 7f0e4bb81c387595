"""Agno's `MemoryManager` as its users call it: `create_user_memories(messages, user_id)` per
chunk of turns — its model DECIDES what happens to memory through tool calls (`add_memory`,
`update_memory`, `delete_memory`; Agno runs each against its db, here `InMemoryDb`) —, and
`search_user_memories(query, retrieval_method="agentic", limit=5)` at question time (its model
picks the memories' ids). Its model, `OpenAIChat` pointed at the lab's server (`base_url`), makes
the answer and judge calls too (`Model.response`). Traced by openinference-instrumentation-agno
(LLM spans per model call, TOOL spans per memory tool run). The speakers and the session date go
in the manager's `additional_instructions` (its prompt has no date of its own)."""

import json
import os
import random
import uuid

import tracers
from prompts import ANSWER_PROMPT, JUDGE_PROMPT

NAME = "agno"
SERVICE = "agno-locomo"
MODEL = "gpt-4.1-mini"
CHUNK = 8  # turns per create_user_memories call
SESSIONS = 6
STYLES = {"extraction": ["date", "drop", "speaker", "negate", "number", "name"],
          "update": ["value", "unrelated"], "deletion": ["stale"],
          "answer": ["other_memory", "date", "refuse", "negate"],
          "search": ["unrelated", "shifted"]}
KINDS = ["update", "deletion", "extraction", "answer", "search"]
os.environ.setdefault("AGNO_TELEMETRY", "false")


def instrument(provider):
    from openinference.instrumentation.agno import AgnoInstrumentor
    AgnoInstrumentor().instrument(tracer_provider=provider)


class Library:
    def __init__(self, lab):
        from agno.models.openai import OpenAIChat
        self.lab = lab
        self.model = OpenAIChat(id=MODEL, temperature=0, base_url=lab.base + "/v1", api_key="lab-local")

    def run(self, conv, sessions, questions):
        """Adds the sessions, asks the questions; returns {question: label}."""
        from agno.db.in_memory import InMemoryDb
        from agno.memory import MemoryManager
        from agno.models.message import Message
        # Memory ids from a generator seeded per run (Agno's add_memory takes uuid4 at each call).
        rng = random.Random(f"c{conv['id']}")
        uuid.uuid4 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)
        manager = MemoryManager(model=self.model, db=InMemoryDb(), add_memories=True,
                                update_memories=True, delete_memories=True)
        a, b = conv["speaker_a"], conv["speaker_b"]
        user = f"locomo-{conv['id']}"
        for n in sessions:
            date = conv[f"session_{n}_date_time"]
            turns = conv[f"session_{n}"]
            manager.additional_instructions = (f"Speakers: {a} and {b}. Session date: {date}. "
                                               "Resolve relative dates against the session date.")
            for i in range(0, len(turns), CHUNK):
                msgs = [Message(role="user", content=f"{t['speaker']}: {t['text']}")
                        for t in turns[i:i + CHUNK]]
                manager.create_user_memories(messages=msgs, user_id=user)
        return {q["question"]: self.ask(manager, user, q) for q in questions}

    def ask(self, manager, user, q):
        from agno.models.message import Message
        with tracers.question("openinference", self.lab.tracer, q["question"]) as out:
            found = manager.search_user_memories(query=q["question"], limit=5,
                                                 retrieval_method="agentic", user_id=user)
            lines = "\n".join(f"- {m.memory}" for m in found)
            ans = self.model.response(messages=[Message(role="user", content=ANSWER_PROMPT.format(
                memories=lines, question=q["question"]))]).content
            verdict = self.model.response(messages=[Message(role="user", content=JUDGE_PROMPT.format(
                question=q["question"], gold=q["answer"], answer=ans))],
                response_format={"type": "json_object"}).content
            label = json.loads(verdict).get("label", "WRONG")
            out.set(ans, label)
        return label


def faulty_span(spans, fault, applied, view, question_span):
    """The model call whose reply the server corrupted: the memory manager's call that made the
    tool calls (extraction, update, deletion), the agentic search's call, the answer call."""
    reply = next((a["reply"] for a in applied if a["spec"] == fault), None)
    for s in spans:
        if view.kind(s) == "LLM" and reply and reply_of(s, view) == reply:
            return s
    return None


def reply_of(s, view):
    """The LLM span's reply as the server recorded it: its text, or its tool calls."""
    calls = []
    for i in range(64):
        name = view(s, f"llm.output_messages.0.message.tool_calls.{i}.tool_call.function.name")
        if name is None:
            break
        calls.append(name + " " + (view(s, f"llm.output_messages.0.message.tool_calls.{i}"
                                            ".tool_call.function.arguments") or ""))
    return json.dumps(calls, ensure_ascii=False) if calls else view.reply(s)


def evidence_prompts(spans, texts, view):
    """The memory manager's prompts (their user messages) that hold an evidence turn."""
    out = []
    for s in spans:
        if view.kind(s) != "LLM" or not (view(s, "llm.input_messages.0.message.content") or "").startswith(
                "You are a Memory Manager"):
            continue
        # Not the manager's second call (the same messages, then its tool calls' results).
        if any(view(s, f"llm.input_messages.{i}.message.role") == "tool" for i in range(1, 64)):
            continue
        for i in range(1, 64):
            c = view(s, f"llm.input_messages.{i}.message.content")
            if c is None:
                break
            if any(t in c for t in texts) and c not in out:
                out.append(c)
    return out
