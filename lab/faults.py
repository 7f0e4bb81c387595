"""Fault kinds for the voices (`lab/run.py --voice`), applied to an extraction call's memories in
whatever voice they are written (dates as "7 May 2023", "May 7th, 2023", "May 7, 2023" or ISO; a
JSON payload's string values). Planned by lab/run.py from the conversation alone (its entities, the
question's gold answer), never from memtrace's detectors.

  date        every date of the turn's memories shifted by 9 days (a bare year by -2)
  number      a count changed (+3), dates and years left alone
  entity      an entity of the conversation (a capitalized name the conversation says, not a
              speaker) swapped for another of the same conversation
  generalize  the words of the gold answer in the memory generalized away: a phrase keeps its last
              word only ("golden retriever" → "retriever"), a single word becomes "something"
  half_list   a list ("A, B and C") keeps its first half
  merge       the turn's memory and its neighbour in the call merged into one wrong memory (the
              first half of one, the second half of the other; the neighbour is gone)
  drop        the turn's memories left out
A deletion (kind `deletion`, langmem only: its manager may call `RemoveDoc`) is made in
lab/server.py, in the first later extraction call that is shown the turn's memory.
"""

import json
import re

import text as model

STYLES = ["date", "number", "entity", "generalize", "half_list", "merge", "drop"]
MONTH_RE = "|".join(model.MONTHS)


def on_values(fact, fn, every=False):
    """`fn` on a memory's text: a JSON payload's longest string value (`every`: each string value;
    keys kept), else the text."""
    try:
        v = json.loads(fact)
    except ValueError:
        v = None
    if not isinstance(v, dict):
        return fn(fact)
    keys = [k for k, x in v.items() if isinstance(x, str)]
    if not keys:
        return None
    if not every:
        keys = [max(keys, key=lambda k: len(v[k]))]
    new = {k: fn(v[k]) for k in keys}
    if not any(new.values()):
        return None
    return json.dumps({**v, **{k: x for k, x in new.items() if x}}, ensure_ascii=False)


def shift_dates(s):
    """Every date 9 days later in its own format; when there is none, a year 2 earlier (the
    date a memory was told, "As of May 8, 2023, …", left as it is)."""
    told = re.match(r"(As of [^,]+, \d{4}, )(.*)$", s, re.S)
    if told:
        rest = shift_dates(told.group(2))
        return told.group(1) + rest if rest else None
    def add(y, m, d):
        day = model.dt.date(int(y), int(m), int(d)) + model.dt.timedelta(days=9)
        return day

    def iso(m):
        d = add(m.group(1), m.group(2), m.group(3))
        return d.isoformat()

    def dmy(m):
        d = add(m.group(3), model.MONTHS.index(m.group(2)) + 1, m.group(1))
        return f"{d.day} {model.MONTHS[d.month - 1]} {d.year}"

    def mdy(m):
        d = add(m.group(4), model.MONTHS.index(m.group(1)) + 1, m.group(2))
        suf = m.group(3) or ""
        if suf:
            suf = "th" if 10 <= d.day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d.day % 10, "th")
        return f"{model.MONTHS[d.month - 1]} {d.day}{suf}, {d.year}"

    out = re.sub(r"\b(\d{4})-(\d\d)-(\d\d)\b", iso, s)
    out = re.sub(r"\b(\d{1,2}) (" + MONTH_RE + r") (\d{4})\b", dmy, out)
    out = re.sub(r"\b(" + MONTH_RE + r") (\d{1,2})(st|nd|rd|th)?, (\d{4})\b", mdy, out)
    if out == s:
        out = re.sub(r"\b(19\d\d|20\d\d)\b", lambda m: str(int(m.group(1)) - 2), s)
    return out if out != s else None


NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


def change_number_word(s):
    """`s` with its first number word moved on by three (one → four), or None (the lab's and the
    voices' number fault end the same way)."""
    m = re.search(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", s, re.I)
    if m:
        i = NUMBER_WORDS.index(m.group(1).lower())
        return s[:m.start()] + NUMBER_WORDS[(i + 3) % 10] + s[m.end():]
    return None


def change_number(s):
    dates = [m.span() for m in re.finditer(
        r"\d{4}-\d\d(?:-\d\d)?|\d{1,2}(?:st|nd|rd|th)? (?:" + MONTH_RE + r")|(?:" + MONTH_RE
        + r") \d{1,2}|\b(?:19|20)\d\d\b", s)]
    for m in re.finditer(r"\b(\d{1,3})\b", s):
        if not any(a <= m.start() < b for a, b in dates):
            return s[:m.start()] + str(int(m.group(1)) + 3) + s[m.end():]
    return change_number_word(s)


def swap_entity(s, entities, speakers):
    """The first entity of the conversation the memory names, swapped for the next one."""
    ents = [e for e in entities if e not in speakers]
    for m in re.finditer(r"\b[A-Z][a-zA-Z]+\b", s):
        if m.group(0) in ents:
            i = ents.index(m.group(0))
            other = next((e for e in ents[i + 1:] + ents[:i] if e not in s), None)
            if other:
                return s[:m.start()] + other + s[m.end():]
    return None


def generalize(s, gold):
    """The longest run of the memory's words that are the gold answer's, generalized away."""
    g = {w for w in model.content_stems(model.DATE_RE.sub(" ", str(gold))) if not w.isdigit()}
    words = list(re.finditer(r"[A-Za-z0-9']+", s))
    best, run = None, []
    for w in words + [None]:
        if w is not None and model.stem(w.group(0)) in g and w.group(0).lower() not in model.STOP:
            run.append(w)
            continue
        if run and (best is None or len(run) > len(best)):
            best = run
        run = []
    if not best:
        return None
    a, b = best[0].start(), best[-1].end()
    new = best[-1].group(0) if len(best) > 1 else "something"
    if len(best) > 1 and model.stem(new) in g and len(g) <= 2:
        new = "something"
    return s[:a] + new + s[b:]


def half_list(s):
    """A list of three or more items, or "A and B", keeps its first half."""
    for m in re.finditer(r"([^,;()]+?)((?:, [^,;()]+?)+),? (?:and|&) ([^,;().]+)", s):
        if re.search(r"\d", m.group(0)):
            continue  # "May 7, 2023 and …" is no list
        items = [m.group(1)] + [x for x in m.group(2).split(", ") if x] + [m.group(3)]
        keep = items[: (len(items) + 1) // 2]
        return s[:m.start()] + ", ".join(keep) + s[m.end():]
    for m in re.finditer(r"\b((?:[a-z]+ ){0,2}[a-z]+) (?:and|&) ((?:[a-z]+ ){0,2}[a-z]+)\b", s):
        if not re.match(r"(?:it|i|we|he|she|they|that|then|so|was|is|has|had|will|the)\b", m.group(2)):
            return s[:m.start()] + m.group(1) + s[m.end():]
    return None


def merge(a, b):
    """The first half of memory `a` joined to the second half of `b` (JSON: on its statement)."""
    def text_of(f):
        try:
            v = json.loads(f)
        except ValueError:
            return f, None
        if isinstance(v, dict):
            k = max((k for k, x in v.items() if isinstance(x, str)), key=lambda k: len(v[k]))
            return v[k], (v, k)
        return f, None
    ta, ja = text_of(a)
    tb, _ = text_of(b)
    wa, wb = ta.split(), tb.split()
    if len(wa) < 4 or len(wb) < 4:
        return None
    new = " ".join(wa[: len(wa) // 2] + wb[len(wb) // 2:])
    if ja:
        v, k = ja
        return json.dumps({**v, k: new}, ensure_ascii=False)
    return new


def apply(fault, per_turn, speakers):
    """The memories [(fact, role)] of an extraction call with `fault` applied to the turn's, and
    the memories it changed (None when it applies nowhere)."""
    style = fault["style"]
    memory = [(f, role, fault["turn"] in said) for said, role, facts in per_turn for f in facts]
    hit = [i for i, (_, _, t) in enumerate(memory) if t]
    if not hit:
        return [(f, r) for f, r, _ in memory], None
    before = [memory[i][0] for i in hit]
    if style == "drop":
        return [(f, r) for f, r, t in memory if not t], before
    if style == "merge":
        i = hit[0]
        j = next((k for k in range(i + 1, len(memory)) if not memory[k][2]),
                 next((k for k in range(i - 1, -1, -1) if not memory[k][2]), None))
        new = merge(memory[i][0], memory[j][0]) if j is not None else None
        if new is None:
            return [(f, r) for f, r, _ in memory], None
        out = [(new if k == i else f, r) for k, (f, r, _) in enumerate(memory) if k != j]
        return out, before
    fn = {"date": shift_dates, "number": change_number,
          "entity": lambda s: swap_entity(s, fault.get("entities", []), speakers),
          "generalize": lambda s: generalize(s, fault.get("gold", "")),
          "half_list": half_list}[style]
    new = {i: on_values(memory[i][0], fn, every=style in ("date", "number")) for i in hit}
    if not any(new.values()):
        return [(f, r) for f, r, _ in memory], None
    return [(new.get(k) or f, r) for k, (f, r, _) in enumerate(memory)], before
