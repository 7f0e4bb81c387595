"""Replies to Agno's MemoryManager (lab/libs/agno.py):

  memory manager   system "You are a Memory Manager…" (the existing memories as "ID: …\\nMemory: …"
                   lines in <existing_memories>, the lab's "Speakers: A and B. Session date: …"
                   as additional instructions), tools add_memory / update_memory / delete_memory,
                   the turns as user messages "Name: text" → one tool call per decision
                   (lab/decisions.py on the lab's paraphrased facts, lab/text.py): add_memory
                   {"memory", "topics"}, update_memory {"memory_id", "memory", "topics"},
                   delete_memory {"memory_id"}; the extraction fault set for these turns and the
                   update / deletion fault set for these memories applied. Once the tools have
                   run (the last message is a tool result) → a plain "Memories updated." reply.
  agentic search   system "Your task is to search through user memories and return the IDs…",
                   user "Return the IDs of the memories related to the following query: Q" →
                   {"memory_ids": [...]}: the five memories sharing the most (rarity-weighted)
                   stems with Q. Fault {"kind": "search", "question": Q, "style": unrelated|shifted}:
                   five memories sharing none of them, or the next five.
"""

import json
import re

import decisions
import text as model


def _existing(system):
    block = system.split("<existing_memories>", 1)[1].split("</existing_memories>", 1)[0] \
        if "<existing_memories>" in system else ""
    return re.findall(r"^ID: (\S+)\nMemory: (.*)$", block, re.M)


def manager(msgs, hooks, extract_turns):
    take_fault, record, corrupt = hooks
    system = str(msgs[0].get("content") or "")
    sm = re.search(r"Speakers: (\w+) and (\w+)\.", system)
    speakers = [sm.group(1), sm.group(2)] if sm else []
    date = model.parse_session_date(system.split("</existing_memories>")[-1])
    turns = []
    for m in msgs[1:]:
        lm = re.match(r"(\w+): (.*)$", str(m.get("content") or ""), re.S)
        if m.get("role") == "user" and lm:
            turns.append(("user", lm.group(1), lm.group(2)))
    decisions.SPEAKERS = speakers
    per_fact = []
    for _, who, said in turns:
        for f in decisions.register(said, who, next((s for s in speakers if s != who), "their friend"), date):
            per_fact.append((f, said))
    memory, fault, changed = extract_turns(turns, speakers, date, with_speaker=True)
    facts = [f for f, _ in memory]
    clean_src = dict(per_fact)
    # A corrupted fact keeps its turn when it took the place of one (same position in the turn's list).
    sources = [clean_src.get(f) for f in facts]
    ops, op_fault = decisions.decide(_existing(system), facts, sources, speakers, hooks)
    calls = []
    for event, mid, text, _ in ops:
        if event == "ADD":
            args = {"memory": text, "topics": None}
        elif event == "UPDATE":
            args = {"memory_id": mid, "memory": text, "topics": None}
        elif event == "DELETE":
            args = {"memory_id": mid}
        else:
            continue
        calls.append({"name": {"ADD": "add_memory", "UPDATE": "update_memory",
                               "DELETE": "delete_memory"}[event],
                      "arguments": json.dumps(args, ensure_ascii=False)})
    reply = json.dumps([c["name"] + " " + c["arguments"] for c in calls], ensure_ascii=False)
    if fault and changed is not None:
        record(fault, reply)
    if op_fault:
        record(op_fault, reply)
    return ("" if calls else "No changes needed."), calls


def search(msgs, hooks):
    take_fault, record, _ = hooks
    system = str(msgs[0].get("content") or "")
    mems = re.findall(r"^ID: (\S+)\nMemory: (.*)$", system, re.M)
    q = str(msgs[-1].get("content") or "").split("following query:", 1)[-1].strip()
    ranked = model.best_memories(q, [t for _, t in mems])
    id_of = {}
    for i, t in mems:
        id_of.setdefault(t, i)
    ids = [id_of[t] for t in ranked[:5]]
    fault = take_fault("search", lambda f: f["question"] == q)
    if fault:
        rest = [i for i, t in mems if t not in ranked]
        ids = (ranked[5:10] and [id_of[t] for t in ranked[5:10]]) if fault["style"] == "shifted" else []
        ids = ids or rest[:5]
    reply = json.dumps({"memory_ids": ids})
    if fault:
        record(fault, reply)
    return reply


def reply(body, hooks, extract_turns):
    """(content, tool calls) or the content for one of Agno's memory prompts, or None."""
    msgs = body.get("messages", [])
    system = str(msgs[0].get("content") or "") if msgs and msgs[0].get("role") in ("system", "developer") else ""
    tools = {t.get("function", {}).get("name") for t in body.get("tools") or []}
    if system.startswith("You are a Memory Manager") and "add_memory" in tools:
        if msgs[-1].get("role") == "tool":
            return "Memories updated.", []
        return manager(msgs, hooks, extract_turns)
    if system.startswith("Your task is to search through user memories"):
        return search(msgs, hooks)
    return None
