"""The memory decisions of the lab's stand-in LLM for libraries whose model DECIDES what happens
to memory (lab/mem0v1_replies.py: mem0ai 1.0.x's update-memory prompt; lab/agno_replies.py:
Agno's MemoryManager tools), and the update / deletion faults injected into them.

Clean decisions, per new fact (deterministic):
  NONE    the fact is already stored (an existing memory holds its text);
  DELETE  the fact's turn retracts something ("no longer", "not anymore", "quit", "cancelled",
          "changed my mind"…) and an existing memory of the same speaker shares a quarter of its
          content stems: that memory is deleted and the fact added;
  UPDATE  an existing memory of the same speaker shares half of the fact's content stems
          (Jaccard ≥ 0.5): it is revised to hold both ("<old>; <new>");
  ADD     otherwise.

Faults (a spec names the LoCoMo turn whose memory it targets; `TURN_FACTS` maps each turn to the
facts the lab wrote for it, so a later call can recognise that memory among the existing ones):
  {"kind": "update", "turn": T, "style": "value"}      UPDATE of T's memory writing a wrong value
                                                        (date shifted, number or name changed,
                                                        negated, speakers swapped: the first that applies)
  {"kind": "update", "turn": T, "style": "unrelated"}  UPDATE of T's memory overwriting it with
                                                        another new fact of the call (which is then
                                                        not added)
  {"kind": "deletion", "turn": T, "style": "stale"}    DELETE of T's memory, still true
Each applies in the first decision call that lists T's memory as existing (never in the call
that writes it).
"""

import re

import text as model

# turn text → the (clean) facts the lab wrote for it: filled by the reply writers.
TURN_FACTS = {}
SPEAKERS = []  # the speakers of the last extraction (for the "speaker" value fault)
RETRACT = re.compile(r"\b(no longer|not anymore|anymore|quit|quitting|stopped|cancel+ed|cancel|"
                     r"changed (?:my|his|her|their) mind|gave up|giving up|not going to)\b", re.I)
VALUE_STYLES = ["date", "number", "name", "negate", "speaker"]


def register(said, who, other, date):
    """The clean facts of a turn, remembered for the update / deletion faults."""
    facts = model.paraphrase_turn(said, who, other, date)
    TURN_FACTS.setdefault(said, facts)
    return facts


def _stems(s):
    return set(model.content_stems(s))


def _jaccard(a, b):
    a, b = _stems(a), _stems(b)
    return len(a & b) / len(a | b) if a | b else 0.0


def _subject(s):
    m = re.match(r"\s*([A-Z]\w+)", s)
    return m.group(1) if m else ""


def _holds(memory, turn):
    return any(f and f in memory for f in TURN_FACTS.get(turn, []))


def decide(old, facts, sources, speakers, hooks):
    """old: [(id, text)] existing memories; facts: the new facts; sources: per fact the turn it
    came from; hooks: (take_fault, record, corrupt). Returns (ops, fault): ops
    [(event, id, text, old_text)] with id None for ADD; fault the update / deletion spec applied
    (the caller records it with the reply it sends)."""
    take_fault, _record, corrupt = hooks
    ops, touched = [], set()
    for f, src in zip(facts, sources):
        if any(f in t for _, t in old):
            ops.append(("NONE", None, f, None))
            continue
        same = [(i, t) for i, t in old if i not in touched and _subject(t) == _subject(f)]
        best = max(same, key=lambda m: _jaccard(f, m[1]), default=None)
        score = _jaccard(f, best[1]) if best else 0.0
        if best and RETRACT.search(src or "") and score >= 0.25:
            touched.add(best[0])
            ops += [("DELETE", best[0], best[1], best[1]), ("ADD", None, f, None)]
        elif best and score >= 0.5:
            touched.add(best[0])
            ops.append(("UPDATE", best[0], best[1].rstrip(". ") + "; " + f, best[1]))
        else:
            ops.append(("ADD", None, f, None))
    # At most one update / deletion fault per call, on a memory this call did not write.
    target = {}

    def applies(spec):
        if spec.get("turn") is None:
            return False
        for i, t in old:
            if i in touched or not _holds(t, spec["turn"]):
                continue
            if spec["kind"] == "deletion":
                target["op"] = ("DELETE", i, t, t)
            elif spec["style"] == "unrelated":
                add = next((k for k, o in enumerate(ops) if o[0] == "ADD"
                            and not _holds(o[2], spec["turn"])), None)
                if add is None:
                    continue
                target["op"] = ("UPDATE", i, ops[add][2], t)
                target["drop"] = add
            else:
                bad = next((b for b in (corrupt(t, s, speakers) for s in VALUE_STYLES) if b), None)
                if not bad:
                    continue
                target["op"] = ("UPDATE", i, bad, t)
            return True
        return False

    fault = take_fault("update", applies) or take_fault("deletion", applies)
    if fault:
        if "drop" in target:
            del ops[target["drop"]]
        ops.append(target["op"])
    return ops, fault
