"""Replies to mem0ai 1.0.x's two prompts (lab/libs/mem0v1.py):

  fact extraction   system "You are a Personal Information Organizer…", user "Input:\\n<role>: …"
                    lines (a "system: Speakers: A and B. Session date: …" line first, then
                    "user|assistant: Name: text") → {"facts": [...]}: the lab's paraphrased facts
                    (lab/text.py), the extraction fault set for these turns applied
  update memory     "You are a smart memory manager…" with the existing memories
                    ([{'id', 'text'}], Python repr) and the new facts (a list) in backticks →
                    {"memory": [{"id", "text", "event", "old_memory"}]}: lab/decisions.py, the
                    update / deletion fault set for these memories applied
"""

import ast
import json
import re

import decisions
import text as model


def _block_after(prompt, marker):
    if marker not in prompt:
        return None
    m = re.search(r"```\s*\n?(.*?)\n?\s*```", prompt.split(marker, 1)[1], re.S)
    if not m:
        return None
    try:
        return ast.literal_eval(m.group(1).strip())
    except (ValueError, SyntaxError):
        try:
            return json.loads(m.group(1))
        except ValueError:
            return None


def extraction(user, extract_turns, record):
    lines = user.split("Input:\n", 1)[1].splitlines()
    speakers, date, turns = [], None, []
    for line in lines:
        sm = re.match(r"system: Speakers: (\w+) and (\w+)\.", line)
        if sm:
            speakers = [sm.group(1), sm.group(2)]
            date = model.parse_session_date(line)
            continue
        lm = re.match(r"(user|assistant): (\w+): (.*)$", line)
        if lm:
            turns.append(lm.groups())
    decisions.SPEAKERS = speakers
    for _, who, said in turns:
        decisions.register(said, who, next((s for s in speakers if s != who), "their friend"), date)
    memory, fault, changed = extract_turns(turns, speakers, date, with_speaker=True)
    reply = json.dumps({"facts": [f for f, _ in memory]}, ensure_ascii=False)
    if fault and changed is not None:
        record(fault, reply)
    return reply


def update(prompt, hooks):
    old = _block_after(prompt, "Below is the current content of my memory") or []
    facts = _block_after(prompt, "The new retrieved facts are mentioned in the triple backticks") or []
    old = [(str(m.get("id")), str(m.get("text", ""))) for m in old if isinstance(m, dict)]
    facts = [str(f) for f in facts]
    source = {f: t for t, fs in decisions.TURN_FACTS.items() for f in fs}
    speakers = decisions.SPEAKERS
    ops, fault = decisions.decide(old, facts, [source.get(f) for f in facts], speakers, hooks)
    out, n = [], len(old)
    for event, mid, text, old_text in ops:
        if event == "ADD":
            mid, n = str(n), n + 1
        if event == "NONE":
            continue
        item = {"id": mid, "text": text, "event": event}
        if event == "UPDATE":
            item["old_memory"] = old_text
        out.append(item)
    reply = json.dumps({"memory": out}, ensure_ascii=False)
    if fault:
        hooks[1](fault, reply)
    return reply


def reply(body, hooks, extract_turns):
    """The reply's content for one of mem0ai 1.0.x's prompts, or None."""
    msgs = body.get("messages", [])
    system = next((str(m.get("content") or "") for m in msgs if m.get("role") == "system"), "")
    user = [str(m.get("content") or "") for m in msgs if m.get("role") == "user"]
    if "Personal Information Organizer" in system and user and "Input:\n" in user[-1]:
        return extraction(user[-1], extract_turns, hooks[1])
    if user and user[-1].startswith("You are a smart memory manager") and "new retrieved facts" in user[-1]:
        return update(user[-1], hooks)
    return None
