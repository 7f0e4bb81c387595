"""Replies to graphiti-core's prompts (its OpenAIGenericClient appends "Respond with a JSON
object in the following format:" and the reply model's JSON schema to the last message; the
schema's `title` says which reply is asked for):

  ExtractedEntities  the speakers of the CURRENT MESSAGE lines ("Name: text"), as graphiti's
                     prompt asks (the speaker first)
  ExtractedEdges     one edge per fact of a turn (lab/text.py paraphrases, dates resolved against
                     REFERENCE_TIME), from the turn's speaker to the other speaker; the one
                     extraction fault set for these turns is applied here
  NodeResolutions    each new entity is the existing entity of the same name (else none)
  any other schema   its least instance (empty lists, no duplicates found, empty summaries)
"""

import ast
import datetime as dt
import json
import re

import text as model

MARK = "Respond with a JSON object in the following format:\n\n"


def schema_of(prompt):
    if MARK not in prompt:
        return None
    try:
        return json.loads(prompt.rsplit(MARK, 1)[1].strip())
    except ValueError:
        return None


def block(prompt, tag):
    m = re.search(r"<" + tag + r">\s*\n(.*?)\n\s*</" + tag + r">", prompt, re.S)
    return m.group(1) if m else ""


def items(prompt, tag):
    """The JSON (or Python literal) list in a <TAG> block."""
    raw = block(prompt, tag).strip()
    try:
        out = json.loads(raw)
    except ValueError:
        try:
            out = ast.literal_eval(raw)
        except (ValueError, SyntaxError):
            out = []
    return [e for e in out if isinstance(e, dict)] if isinstance(out, list) else []


def turns_of(prompt, tag):
    """[(who, said)] of the "Name: text" lines of a message block."""
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^(\w+): (.+)$", block(prompt, tag), re.M)]


def least(schema, defs):
    if "$ref" in schema:
        return least(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        return None
    kind = schema.get("type")
    if kind == "object":
        return {k: least(v, defs) for k, v in schema.get("properties", {}).items()
                if k in schema.get("required", [])}
    return {"array": [], "string": "", "integer": -1, "number": 0.0, "boolean": False}.get(kind)


def entities(prompt):
    names = []
    for who, _ in turns_of(prompt, "CURRENT MESSAGE"):
        if who not in names:
            names.append(who)
    return {"extracted_entities": [{"name": n, "entity_type_id": 0} for n in names]}


def entity_ids(prompt):
    return {str(e.get("name")): e.get("id") for e in items(prompt, "ENTITIES")}


def resolutions(prompt):
    """Each new entity is the existing one of the same name, if any."""
    existing = {str(e.get("name")): e.get("idx") for e in items(prompt, "EXISTING ENTITIES")}
    out = []
    for e in items(prompt, "ENTITIES"):
        idx = existing.get(str(e.get("name")), -1)
        out.append({"id": e.get("id"), "duplicate_idx": idx, "name": e.get("name"),
                    "duplicates": [] if idx == -1 else [idx]})
    return {"entity_resolutions": out}


def edges(prompt, extract_turns):
    ids = entity_ids(prompt)
    speakers = list(ids)
    m = re.search(r"(\d{4})-(\d\d)-(\d\d)", block(prompt, "REFERENCE_TIME"))
    date = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None
    turns = [("user", who, said) for who, said in turns_of(prompt, "CURRENT_MESSAGE")]
    facts, fault, changed = extract_turns(turns, speakers, date, with_speaker=True)
    out = []
    for fact, who in facts:
        other = next((s for s in speakers if s != who), None)
        if who not in ids or other is None:
            continue
        out.append({"relation_type": "MENTIONED_TO", "source_entity_id": ids[who],
                    "target_entity_id": ids[other], "fact": fact,
                    "valid_at": f"{date.isoformat()}T00:00:00Z" if date else None,
                    "invalid_at": None})
    return {"edges": out}, fault, changed


def reply(prompt, extract_turns, record):
    """The JSON reply to a graphiti prompt, or None when the prompt is not one."""
    schema = schema_of(prompt)
    if schema is None:
        return None
    title = schema.get("title")
    if title == "ExtractedEntities":
        return json.dumps(entities(prompt))
    if title == "NodeResolutions":
        return json.dumps(resolutions(prompt))
    if title == "ExtractedEdges":
        out, fault, changed = edges(prompt, extract_turns)
        text = json.dumps(out, ensure_ascii=False)
        if fault and changed is not None:
            record(fault, text)
        return text
    return json.dumps(least(schema, schema.get("$defs", {})))
