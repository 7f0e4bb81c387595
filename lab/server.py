"""A local OpenAI-compatible server for the lab (stdlib only): answers each prompt by its shape,
deterministically (lab/text.py), and corrupts one chosen reply when a fault is set.

  POST /v1/chat/completions  mem0's additive extraction (a prompt with a "## New Messages"
                             section) → {"memory": [{"id", "text", "attributed_to"}]}; an answer
                             prompt ("Memories …" + "Question:") → the best-matching memory; a
                             judge prompt ("Gold answer:" + "Generated answer:") → {"label": …}
                             LangMem's memory manager (tools incl. "Memory", a <session_…>
                             block) → one `Memory {"content"}` tool call per new memory;
                             graphiti-core's prompts (a JSON schema appended) → lab/graphiti_replies.py
  POST /v1/embeddings        text.embed (256 numbers per input; `dimensions` is honoured)
  POST /_fault               {"faults": [spec, …]} (replaces the set; [] = clean run)
  GET  /_fault               the specs and what each one changed: {"applied": [{"spec", "reply"}]}
  GET  /_whole               per question judged since the last POST /_fault: the answer holds all
                             of the gold ({"whole": {question: bool}})
A spec: {"kind": "extraction", "turn": TEXT, "style": drop|date|number|name|negate|speaker}
(the extraction call whose New Messages hold TEXT), {"kind": "answer", "question": Q,
"style": other_memory|refuse|date|negate}, {"kind": "embedding", "question": Q,
"style": unrelated|inverted} (the embedding request whose only input is Q).
"""

import ast
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import agno_replies
import faults as voice_faults
import graphiti_replies
import mem0v1_replies
import text as model
import voices

VOICE = "lab"  # lab/voices.py: lab (lab/text.py's), terse, first, third or json (lab/run.py --voice)

NAMES = ["Jordan", "Priya", "Tomas", "Keiko", "Ravi"]
UNRELATED = "weather forecast for the motorway traffic and grocery prices downtown"


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.faults = []
        self.applied = []
        # Per question of the current run: the answer holds all of the gold (not only half).
        self.whole = {}


STATE = State()


def section(prompt, name):
    m = re.search(r"## " + re.escape(name) + r"\n(.*?)(?:\n\n## |\n\n# |\Z)", prompt, re.S)
    return m.group(1).strip() if m else ""


def shift_date(s):
    def day(m):
        d = model.parse_session_date(f"{m.group(1)} {m.group(2)}, {m.group(3)}")
        if d is None:
            return m.group(0)
        return model.fmt(d + model.dt.timedelta(days=9))
    out = re.sub(r"\b(\d{1,2}) (" + "|".join(model.MONTHS) + r") (\d{4})", day, s)
    if out == s:
        out = re.sub(r"\b(19\d\d|20\d\d)\b", lambda m: str(int(m.group(1)) - 2), s)
    return out if out != s else None


def change_number(s):
    m = re.search(r"\b(\d{1,3})\b(?! (?:" + "|".join(model.MONTHS) + "))", s)
    if m and not re.match(r"(19|20)\d\d$", m.group(1)):
        return s[:m.start()] + str(int(m.group(1)) + 3) + s[m.end():]
    return voice_faults.change_number_word(s)


def change_name(s, speakers):
    skip = set(speakers) | set(model.MONTHS) | {w.capitalize() for w in model.WEEKDAYS}
    for m in re.finditer(r"(?<=[a-z,;] )([A-Z][a-zA-Z]+)", s):
        if m.group(1) not in skip:
            return s[:m.start()] + NAMES[len(m.group(1)) % len(NAMES)] + s[m.end():]
    return None


def swap_speaker(s, speakers):
    if len(speakers) < 2 or speakers[0] not in s:
        return None
    return s.replace(speakers[0], "\0").replace(speakers[1], speakers[0]).replace("\0", speakers[1])


def negate(s, speakers):
    for name in speakers:
        m = re.search(re.escape(name) + r" (is|was|has|had|will|would|can)\b", s)
        if m:
            return s[:m.end()] + " not" + s[m.end():]
        m = re.search(re.escape(name) + r" ([a-z]+ed|went|made|took|got|found|began|saw)\b", s)
        if m:
            return s[:m.start(1)] + "never " + s[m.start(1):]
    return None


def corrupt(fact, style, speakers):
    return {"date": lambda: shift_date(fact), "number": lambda: change_number(fact),
            "name": lambda: change_name(fact, speakers),
            "speaker": lambda: swap_speaker(fact, speakers),
            "negate": lambda: negate(fact, speakers)}[style]()


def take_fault(kind, key_fn):
    with STATE.lock:
        for f in STATE.faults:
            if f["kind"] == kind and not f.get("_used") and key_fn(f):
                f["_used"] = True
                return f
    return None


def record(spec, reply):
    with STATE.lock:
        STATE.applied.append({"spec": {k: v for k, v in spec.items() if not k.startswith("_")},
                              "reply": reply})


def extract_turns(turns, speakers, date, with_speaker=False):
    """Facts per turn for turns [(role, who, said)], and the one extraction fault set for these
    turns applied: (memories [(fact, role)] — [(fact, who)] `with_speaker` —, fault, changed)."""
    per_turn = []
    for role, who, said in turns:
        other = next((s for s in speakers if s != who), "their friend")
        per_turn.append((said, who if with_speaker else role,
                         voices.facts(VOICE, said, who, other, date)))
    fault = take_fault("extraction", lambda f: any(f["turn"] in said for said, _, _ in per_turn))
    if fault and VOICE != "lab":
        memory, changed = voice_faults.apply(fault, per_turn, speakers)
        return memory, fault, changed
    changed, memory = None, []
    for said, role, facts in per_turn:
        if fault and fault["turn"] in said:
            if fault["style"] == "drop":
                changed, facts = (facts, []) if facts else (None, facts)
            else:
                new = [corrupt(f, fault["style"], speakers) for f in facts]
                if facts and all(new):
                    changed, facts = facts, new
        memory.extend((f, role) for f in facts)
    return memory, fault, changed


def extraction(prompt):
    """mem0's additive extraction: {"memory": [{"id", "text", "attributed_to"}]}."""
    instr = section(prompt, "Custom Instructions")
    date = model.parse_session_date(instr) or model.parse_session_date(section(prompt, "Observation Date"))
    m = re.search(r"Speakers: (\w+) and (\w+)", instr)
    speakers = [m.group(1), m.group(2)] if m else []
    turns = []
    for line in section(prompt, "New Messages").splitlines():
        lm = re.match(r"(user|assistant): (\w+): (.*)$", line)
        if lm:
            turns.append(lm.groups())
    memory, fault, changed = extract_turns(turns, speakers, date)
    reply = json.dumps({"memory": [{"id": str(i), "text": f, "attributed_to": r}
                                   for i, (f, r) in enumerate(memory)]}, ensure_ascii=False)
    if fault and changed is not None:
        record(fault, reply)
    return reply


def tool_extraction(prompt, can_delete=False):
    """LangMem's memory manager (trustcall): the conversation in a <session_…> block, one tool
    call `Memory {"content"}` per new memory (existing memories are left as they are)."""
    m = re.search(r"<session_[^>]*>\n(.*?)\n</session_", prompt, re.S)
    block = m.group(1) if m else ""
    parts = re.split(r"=+ (Human|Ai|System) Message =+\n\n", block)
    turns, speakers, date = [], [], None
    for kind, body in zip(parts[1::2], parts[2::2]):
        body = body.strip()
        if kind == "System":
            sm = re.search(r"Speakers: (\w+) and (\w+)", body)
            speakers = [sm.group(1), sm.group(2)] if sm else speakers
            date = model.parse_session_date(body) or date
            continue
        lm = re.match(r"(\w+): (.*)$", body, re.S)
        if lm:
            turns.append(("user" if kind == "Human" else "assistant", lm.group(1), lm.group(2)))
    memory, fault, changed = extract_turns(turns, speakers, date)
    calls = [{"name": "Memory", "arguments": json.dumps({"content": f}, ensure_ascii=False)}
             for f, _ in memory]
    deleted = deletion(prompt, turns, speakers, date, can_delete)
    calls += [{"name": "RemoveDoc", "arguments": json.dumps({"json_doc_id": d["_doc"]})} for d in deleted]
    for f in ([fault] if fault and changed is not None else []) + deleted:
        record(f, json.dumps([c["arguments"] for c in calls], ensure_ascii=False))
    return calls


def deletion(prompt, turns, speakers, date, can_delete):
    """Deletion faults ({"kind": "deletion", "turn": TEXT}, LangMem only: its manager offers
    `RemoveDoc`): the call whose session holds the turn notes the turn's memories; the first later
    call shown one of them among its <existing> instances removes it. Returns the faults applied."""
    out = []
    with STATE.lock:
        pending = [f for f in STATE.faults if f["kind"] == "deletion" and not f.get("_used")]
    for f in pending:
        if "_facts" not in f:
            for _, who, said in turns:
                if f["turn"] in said:
                    other = next((x for x in speakers if x != who), "their friend")
                    f["_facts"] = voices.facts(VOICE, said, who, other, date)
            continue
        if not can_delete:  # the manager offers RemoveDoc once memories exist
            continue
        for doc, body in re.findall(r'<instance id=(\S+) schema_type="Memory">\n(.*?)\n</instance>',
                                    prompt, re.S):
            try:
                content = ast.literal_eval(body).get("content")
            except (ValueError, SyntaxError, AttributeError):
                continue
            if content in f["_facts"]:
                f["_used"], f["_doc"] = True, doc
                out.append(f)
                break
    return out


def answer(prompt):
    q = re.search(r"Question: (.*?)\n", prompt + "\n").group(1).strip()
    # "- <session date>: <memory>" (the date holds a clock time, so cut at "<year>: ")
    mems = [re.sub(r"^\s*-\s*(?:.*?\b\d{4}: )?", "", line).strip()
            for line in re.findall(r"^\s*-.*$", prompt, re.M)]
    if VOICE != "lab":  # each memory with the date its line gives (mem0, graphiti), if any
        noted = {re.sub(r"^\s*-\s*(?:.*?\b\d{4}: )?", "", line).strip(): model.parse_session_date(line)
                 for line in re.findall(r"^\s*-.*$", prompt, re.M)}
        return voice_answer(q, voices.rank(q, mems), noted)
    ranked = model.best_memories(q, mems)
    reply = ranked[0] if ranked else "The memories do not say."
    fault = take_fault("answer", lambda f: f["question"] == q)
    if fault:
        style = fault["style"]
        bad = None
        if style == "other_memory":
            bad = next((m for m in ranked[1:] if m != reply), None)
        elif style == "refuse":
            bad = f"The memories do not answer: {q[0].lower()}{q[1:]}"
        elif style == "date":
            bad = shift_date(reply)
        elif style == "negate":
            bad = negate(reply, re.findall(r"\b[A-Z][a-z]+\b", reply)[:1])
        if bad:
            reply = bad
            record(fault, reply)
        else:
            with STATE.lock:
                fault["_used"] = False
    return reply


def voice_answer(q, ranked, noted):
    """The answer in the voice (lab/voices.py), a fault set for the question applied to the memory
    it answers from (other_memory, date, number) or to the answer (refuse)."""
    best = ranked[0] if ranked else None
    fault = take_fault("answer", lambda f: f["question"] == q)
    if fault is None:
        return voices.answer(VOICE, q, best, ranked, noted=noted)
    style, bad = fault["style"], None
    if style == "other_memory":
        bad = next((m for m in ranked[1:] if m != best), None)
    elif style in ("date", "number") and best:
        bad = voice_faults.on_values(best, {"date": voice_faults.shift_dates,
                                            "number": voice_faults.change_number}[style])
    if style == "refuse" or bad:
        reply = voices.answer(VOICE, q, bad, ranked, refused=style == "refuse", noted=noted)
        record(fault, reply)
        return reply
    with STATE.lock:
        fault["_used"] = False
    return voices.answer(VOICE, q, best, ranked, noted=noted)


def judge(prompt):
    q = re.search(r"Question: (.*)", prompt).group(1).strip()
    gold = re.search(r"Gold answer: (.*)", prompt).group(1).strip()
    gen = re.search(r"Generated answer: (.*?)\n\s*\n", prompt, re.S)
    answer = gen.group(1).strip() if gen else ""
    if VOICE != "lab":  # the stand-in reads any voice's dates and JSON answers back
        answer = voices.canon(voices.flat(answer))
    label = model.judge(gold, answer)
    with STATE.lock:
        STATE.whole[q] = model.judge(gold, answer, share=1.0) == "CORRECT"
    if VOICE != "lab":
        return voices.verdict(VOICE, q, gold, answer, label)
    return json.dumps({"reasoning": f"Compared the generated answer with the gold answer to: {q}",
                       "label": label})


def chat(body):
    prompt = "\n\n".join(str(m.get("content") or "") for m in body.get("messages", []))
    user = [str(m.get("content") or "") for m in body.get("messages", []) if m.get("role") == "user"]
    tools = {t.get("function", {}).get("name") for t in body.get("tools") or []}
    calls = []
    # Libraries whose model decides add / update / delete (lab/decisions.py).
    hooks = (take_fault, record, corrupt)
    decided = mem0v1_replies.reply(body, hooks, extract_turns) or agno_replies.reply(body, hooks, extract_turns)
    graph = graphiti_replies.reply(user[-1], extract_turns, record) if user and not decided else None
    if decided:
        content, calls = decided if isinstance(decided, tuple) else (decided, [])
    elif graph is not None:
        content = graph
    elif "Memory" in tools and "<session_" in prompt:
        calls = tool_extraction(prompt, "RemoveDoc" in tools)
        content = "" if calls else "Nothing new to remember."
    elif "## New Messages" in prompt and user:
        content = extraction(user[-1])
    elif "Gold answer:" in prompt and "Generated answer:" in prompt:
        content = judge(prompt)
    elif "Question:" in prompt:
        content = answer(prompt)
    else:
        content = "OK"
    n_in = len(prompt.split())
    message = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = [{"id": f"call_lab_{i}", "type": "function", "function": c}
                                 for i, c in enumerate(calls)]
    n_out = len(content.split()) + sum(len(c["arguments"].split()) for c in calls)
    return {"id": f"chatcmpl-lab-{abs(hash(content)) % 10**12}", "object": "chat.completion",
            "created": 1700000000, "model": body.get("model", "lab"),
            "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop",
                         "message": message}],
            "usage": {"prompt_tokens": n_in, "completion_tokens": n_out,
                      "total_tokens": n_in + n_out}}


def embeddings(body):
    inputs = body.get("input")
    inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
    dims = int(body.get("dimensions") or 256)
    data = []
    fault = None
    if len(inputs) == 1:
        fault = take_fault("embedding", lambda f: f["question"] == inputs[0])
    for i, t in enumerate(inputs):
        v = model.embed(str(t), dims) if VOICE == "lab" else voices.embed(str(t), dims)
        if fault:
            v = [-x for x in v] if fault["style"] == "inverted" else model.embed(UNRELATED, dims)
            record(fault, f"embedding of {fault['style']} query")
        data.append({"object": "embedding", "index": i, "embedding": v})
    return {"object": "list", "data": data, "model": body.get("model", "lab-embed"),
            "usage": {"prompt_tokens": 1, "total_tokens": 1}}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, obj, code=200):
        raw = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self):
        if self.path.startswith("/_fault"):
            with STATE.lock:
                return self.reply({"faults": STATE.faults, "applied": STATE.applied})
        if self.path.startswith("/_whole"):
            with STATE.lock:
                return self.reply({"whole": STATE.whole})
        return self.reply({"ok": True})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n) or b"{}")
        if self.path.startswith("/_fault"):
            with STATE.lock:
                STATE.faults = [dict(f) for f in body.get("faults", [])]
                STATE.applied = []
                STATE.whole = {}
            return self.reply({"ok": True})
        if self.path.endswith("/chat/completions"):
            return self.reply(chat(body))
        if self.path.endswith("/embeddings"):
            return self.reply(embeddings(body))
        return self.reply({"error": {"message": f"no route {self.path}"}}, 404)


def start(port=0):
    srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


if __name__ == "__main__":
    s = start(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    print("LISTENING", s.server_address[1], flush=True)
    while True:
        time.sleep(3600)
