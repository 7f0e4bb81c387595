"""Voices of the lab's stand-in model (`lab/run.py --voice`): four ways of writing every LLM role's
output, as different as real models' are. The default voice `lab` is lab/text.py's (third person,
"7 May 2023", synonyms); the others are written here, each its own way:

  terse  subject-less facts, as mem0's prompts draw from GPT-4o-mini ("Went to LGBTQ support group
         on 7 May 2023", "Is swamped with kids & work"), one memory per sentence; answers are
         fragments (the date alone for a "when" question); the judge replies with a label word
  first  first person, in the speaker's own words, relative dates kept with the date they mean in
         brackets ("I went to a LGBTQ support group yesterday (May 7th, 2023)"); answers in an
         assistant's first person ("As far as I remember, they …"); the judge: JSON with reasoning
  third  third person with the speaker's name and "As of <session date>," in front, dates as
         "May 7, 2023", the other speaker's name for "you", no word swaps; answers reason from the
         memory and name a second one ("…, after what was noted on …. Answer: …"); the judge: a
         graded score "Score: 9/10" and a line of reasoning
  json   a JSON payload with its own keys per sentence ({"person", "statement", "date" (ISO),
         "heard_by"}); answers are JSON ({"answer", "reasoning", "confidence"}); the judge: JSON
         {"explanation", "score"} graded 0–1

Everything is deterministic. `canon` is how the stand-in reads any voice's dates back (the judge
compares meanings, not formats); `label_of` is how the harness reads any judge's verdict.
"""

import json
import re

import text as model

VOICES = ["terse", "first", "third", "json"]
MONTHS = model.MONTHS
MONTH_RE = "|".join(MONTHS)
FILLER = r"\b(?:so|super|totally|really|pretty|actually|honestly|just|definitely)\s+"
INTERJECTION = r"^(?:(?:yeah|yes|oh|wow|well|hey|haha|lol|aww|omg|thanks|ok|okay|sure|cool|great|awesome|"
INTERJECTION += r"congrats|nice)\b[,!.]*\s*)+"
# A resolved date phrase (lab/text.py's resolve_dates writes them as "on 7 May 2023", "in May 2023").
RESOLVED = re.compile(r"\b(?:(?:on|in) |(?:the (?:week|weekend) (?:before|after)|shortly before|"
                      r"a few days before) )?(?:(\d{1,2}) )?(" + MONTH_RE + r") (\d{4})|\bin (\d{4})\b")


def day_fmt(voice, d, month, y):
    """One date in a voice's format (`d` may be None: a month)."""
    m = MONTHS.index(month) + 1
    if voice == "json":
        return f"{y}-{m:02d}-{int(d):02d}" if d else f"{y}-{m:02d}"
    if voice == "first":
        if not d:
            return f"{month} {y}"
        d = int(d)
        suf = "th" if 10 <= d % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(d % 10, "th")
        return f"{month} {d}{suf}, {y}"
    if voice == "third":
        return f"{month} {int(d)}, {y}" if d else f"{month} {y}"
    return f"{int(d)} {month} {y}" if d else f"{month} {y}"


def redate(s, voice):
    """Every "D Month YYYY" / "Month YYYY" of `s` in the voice's format."""
    return re.sub(r"\b(?:(\d{1,2}) )?(" + MONTH_RE + r") (\d{4})\b",
                  lambda m: day_fmt(voice, m.group(1), m.group(2), m.group(3)), s)


def canon(s):
    """Any voice's dates as "D Month YYYY" (ISO days and months, "May 7th, 2023", "May 7, 2023")."""
    s = re.sub(r"\b(\d{4})-(\d\d)-(\d\d)\b",
               lambda m: f"{int(m.group(3))} {MONTHS[int(m.group(2)) - 1]} {m.group(1)}", s)
    s = re.sub(r"\b(\d{4})-(\d\d)\b", lambda m: f"{MONTHS[int(m.group(2)) - 1]} {m.group(1)}", s)
    return re.sub(r"\b(" + MONTH_RE + r") (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})\b",
                  lambda m: f"{m.group(2)} {m.group(1)} {m.group(3)}", s)


def flat(s):
    """A JSON reply's string values joined (what a reader of the payload takes in), else `s`."""
    try:
        v = json.loads(s)
    except (ValueError, TypeError):
        return s
    if isinstance(v, dict):
        return ". ".join(str(x) for x in v.values() if isinstance(x, (str, int, float)) and x is not None)
    return s


def clean(s):
    s = re.sub(FILLER, "", s.strip(), flags=re.I)
    s = re.sub(INTERJECTION, "", s, flags=re.I)
    s = s.rstrip(".!").strip()
    return s[:1].upper() + s[1:] if s else s


def kept_sentences(said):
    return [clean(s) for s in model.sentences(said) if model.informative(s)][:2]


def you_to(s, other):
    s = re.sub(r"\byou're\b", f"{other} is", s, flags=re.I)
    s = re.sub(r"\byou've\b", f"{other} has", s, flags=re.I)
    s = re.sub(r"\byour\b", f"{other}'s", s, flags=re.I)
    return re.sub(r"\byou\b", other, s, flags=re.I)


# ---- terse: no subject ----------------------------------------------------------------------

TERSE_LEAD = [(r"^I'm\b", "Is"), (r"^I am\b", "Is"), (r"^I've\b", "Has"), (r"^I'd\b", "Would"),
              (r"^I'll\b", "Will"), (r"^I was\b", "Was"), (r"^We're\b", "Are, with family,"),
              (r"^We\b", "With family,"), (r"^My\b", "Own"), (r"^I\b", "")]
THIRD_S = {"have": "has", "do": "does", "go": "goes", "am": "is", "try": "tries"}


def terse(s, who, other, date):
    s = model.resolve_dates(s, date)
    for pat, rep in TERSE_LEAD:
        if re.match(pat, s):
            s = re.sub(pat, rep, s, count=1).strip()
            break
    s = re.sub(r"\bI'm\b", "is", s)
    s = re.sub(r"\b(?:I|me|myself)\b", "self", s)
    s = re.sub(r"\bmy\b", "own", s, flags=re.I)
    s = re.sub(r"\b(?:we|us)\b", "family", s, flags=re.I)
    s = re.sub(r"\bour\b", "family's", s, flags=re.I)
    s = you_to(s, other)
    s = re.sub(r"\b(?:a|an|the) (?=[a-z])", "", s)  # articles go, as in notes
    if not s:
        return None
    first, _, rest = s.partition(" ")
    if first.lower() in THIRD_S:
        first = THIRD_S[first.lower()].capitalize()
    return (first[:1].upper() + first[1:] + (" " + rest if rest else "")).strip(" ,")


# ---- first: the speaker's own words ---------------------------------------------------------

def first(s, who, other, date):
    resolved = model.resolve_dates(s, date)
    s = you_to(s, other)
    if resolved != s and date is not None:
        got = [m.group(0) for m in RESOLVED.finditer(resolved) if m.group(0) not in s]
        if got:
            got = [re.sub(r"^(?:on|in) ", "", g) for g in got]
            s = f"{s} ({'; '.join(redate(g, 'first') for g in got)})"
    return s


# ---- third: the speaker by name, the session date in front -----------------------------------

THIRD = [(r"\bI'm\b", "{w} is"), (r"\bI am\b", "{w} is"), (r"\bI've\b", "{w} has"),
         (r"\bI'd\b", "{w} would"), (r"\bI'll\b", "{w} will"), (r"\bI was\b", "{w} was"),
         (r"\bmyself\b", "{w} personally"), (r"\bmine\b", "{w}'s"), (r"\bmy\b", "{w}'s"),
         (r"\bme\b", "{w}"), (r"\bwe're\b", "{w}'s family is"), (r"\bwe\b", "{w}'s family"),
         (r"\bour\b", "the family's"), (r"\bus\b", "the family")]


def conjugate(m, w):
    verb, rest = m.group(1), m.group(2) or ""
    low = verb.lower()
    if low in THIRD_S:
        verb = THIRD_S[low]
    elif re.match(r"[a-z]+$", low) and not low.endswith(("ed", "s")) and low not in (
            "can", "could", "would", "should", "will", "might", "must", "never", "always", "also",
            "still", "often", "got", "went", "made", "took", "saw", "found", "began", "felt", "had",
            "did", "was", "met", "ran", "read", "got", "gave", "came", "left", "told", "thought"):
        verb = verb + ("es" if low.endswith(("o", "sh", "ch", "x")) else "s")
    return f"{w} {verb}{rest}"


def third(s, who, other, date):
    s = model.resolve_dates(s, date)
    s = re.sub(r"\bI ([a-zA-Z]+)((?: [a-z]+)?)", lambda m: conjugate(m, who), s)
    for pat, rep in THIRD:
        s = re.sub(pat, rep.format(w=who), s, flags=re.I)
    s = you_to(s, other)
    if who not in s:
        s = f"{who} mentioned that {s[:1].lower() + s[1:]}"
    s = redate(s, "third")
    if date is not None:
        s = f"As of {day_fmt('third', date.day, MONTHS[date.month - 1], date.year)}, {model.lower_first(s)}"
    return s


# ---- json: a payload of its own keys ---------------------------------------------------------

def payload(s, who, other, date):
    resolved = model.resolve_dates(s, date)
    when = [m.group(0) for m in RESOLVED.finditer(resolved) if m.group(0) not in s]
    statement = terse(s, who, other, None)
    if statement is None:
        return None
    out = {"person": who, "statement": statement[:1].lower() + statement[1:]}
    if when:
        out["date"] = redate(re.sub(r"^(?:on|in) ", "", when[0]), "json")
    elif date is not None:
        out["date_said"] = date.isoformat()
    out["heard_by"] = other
    return json.dumps(out, ensure_ascii=False)


WRITERS = {"terse": terse, "first": first, "third": third, "json": payload}


def facts(voice, said, who, other, date):
    """The memories a voice writes for one turn (the `lab` voice: lab/text.py's paraphrase)."""
    if voice == "lab":
        return model.paraphrase_turn(said, who, other, date)
    out = [WRITERS[voice](s, who, other, date) for s in kept_sentences(said)]
    out = [f for f in out if f]
    if voice == "first" and len(out) > 1:  # one note per turn, its sentences joined
        out = [" — ".join(out)]
    if voice in ("terse", "third", "first"):
        out = [f + "." if voice != "terse" else f for f in out]
    return out


# ---- answers ----------------------------------------------------------------------------------

DATE_PHRASE = re.compile(r"(?:(?:the (?:week|weekend) (?:before|after)|shortly before|a few days "
                         r"before) )?(?:\d{1,2} )?(?:" + MONTH_RE + r") \d{4}|\b(?:19|20)\d\d\b")


def memory_text(m):
    """A memory as prose: a JSON payload's statement (with its date), "As of …," dropped."""
    try:
        v = json.loads(m)
    except (ValueError, TypeError):
        v = None
    if isinstance(v, dict):
        when = v.get("date") or ""
        return f"{v.get('person', '')} {v.get('statement', '')}" + (f" ({when})" if when else "")
    return re.sub(r"^As of [^,]+, \d{4}, ", "", m)


def when_of(m):
    """The event dates a memory states (canonical form), the telling date left out."""
    body = canon(memory_text(m))
    return [d for d in DATE_PHRASE.findall(body)]


def as_they(s):
    s = re.sub(r"\bI'm\b", "they're", s)
    s = re.sub(r"\bI've\b", "they've", s)
    s = re.sub(r"\bI\b", "they", s)
    s = re.sub(r"\bmy\b", "their", s, flags=re.I)
    return re.sub(r"\bme\b", "them", s)


def embed(t, dims=256):
    """The voices' embedder: lab/text.py's, blind to names (capitalized words after the first),
    as a semantic model is more to the topic than to who — a subject-less memory still matches."""
    return model.embed(re.sub(r"(?<!^)\b[A-Z][a-z]+\b", " ", t), dims)


def rank(q, memories):
    """The memories an answer reads, best first: by the question's rarer words, its names (the
    people asked about) counting only to break ties, since a voice may not name them."""
    names = set(re.findall(r"(?<=\w )([A-Z][a-z]+)", q))
    bare = " ".join(w for w in q.split() if w.strip("?'s,") not in names)
    by_words = model.best_memories(bare, [memory_text(m) for m in memories])
    order = {m: i for i, m in enumerate(by_words)}
    by_names = model.best_memories(q, [memory_text(m) for m in memories])
    tie = {m: i for i, m in enumerate(by_names)}
    texts = [memory_text(m) for m in memories]
    scored = sorted(range(len(memories)), key=lambda i: (order.get(texts[i], 99), tie.get(texts[i], 99), i))
    return [memories[i] for i in scored if texts[i] in order or texts[i] in tie]


def told_of(m, noted):
    """The date a memory was told: its line's date, its "As of" or its payload's "date_said"."""
    d = (noted or {}).get(m)
    if d:
        return model.fmt(d)
    got = re.match(r"^As of ([^,]+, \d{4}),", m) or re.search(r'"date_said": "(\d{4}-\d\d-\d\d)"', m)
    return canon(got.group(1)) if got else None


def answer(voice, q, best, ranked, refused=False, noted=None):
    """The answer call's reply in a voice, from the memory chosen (`best`) and the others; a "when"
    question answered from a memory stating no date of its own takes the date it was told."""
    when = q.lower().startswith("when")
    if voice == "lab":
        return f"The memories do not answer: {q[0].lower()}{q[1:]}" if refused else best
    if voice == "json":
        if refused or best is None:
            return json.dumps({"answer": None, "reasoning": f"No memory speaks of: {q}", "confidence": 0.1})
        dates = when_of(best) or [d for d in [told_of(best, noted)] if d]
        short = redate(dates[0], "json") if when and dates else memory_text(best)
        shared = sorted(set(model.content_stems(q)) & set(model.content_stems(memory_text(best))))
        return json.dumps({"answer": short, "reasoning": "matched memory on: " + ", ".join(shared),
                           "confidence": 0.8}, ensure_ascii=False)
    if refused or best is None:
        return {"terse": f"Unknown: {q}", "first": f"I don't remember anything about that ({q})",
                "third": f"None of the memories covers the question \"{q}\". Answer: unknown."}[voice]
    body = memory_text(best).rstrip(".")
    dates, told = when_of(best), told_of(best, noted)
    if voice == "terse":
        if when and (dates or told):
            return dates[0] if dates else told
        return re.sub(r"^[A-Z][a-z]+ (?:mentioned|said) that ", "", body)
    if voice == "first":
        body = as_they(body)
        tail = f" — that was around {redate(told, 'first')}, when it came up" if when and not dates and told else ""
        return f"As far as I remember, {body[:1].lower() + body[1:] if body[:2] != 'I ' else body}{tail}."
    if when and not dates and told:
        dates = [told]
    # third: reason from the memory, name a second one, then the answer
    others = [o for o in ranked[1:] if o != best and when_of(o)]
    tail = f", after what was noted on {redate(when_of(others[0])[0], 'third')}" if others and when else ""
    short = redate(dates[0], "third") if when and dates else body
    return f"The memory says {body}{tail}. Answer: {short}."


# ---- judges ------------------------------------------------------------------------------------

def verdict(voice, q, gold, answer_text, label):
    """The judge call's reply in a voice: a label word, JSON with reasoning, or a graded score."""
    ok = label == "CORRECT"
    if voice == "terse":
        return label
    if voice == "third":
        why = "it states the same" if ok else "it misses or contradicts"
        return f"Score: {9 if ok else 2}/10\nThe generated answer {why} {gold!s:.60} for: {q}"
    if voice == "json":
        return json.dumps({"explanation": f"Gold '{gold}' {'is' if ok else 'is not'} conveyed by the answer.",
                           "score": 0.9 if ok else 0.1})
    # first (and lab): JSON with reasoning then the label
    why = "matches" if ok else "does not match"
    return json.dumps({"reasoning": f"The generated answer {why} the gold answer to: {q}", "label": label})


def label_of(reply):
    """CORRECT or WRONG from any judge's reply: a JSON label, a graded score (0–1 or 0–10), a word."""
    try:
        v = json.loads(reply)
    except (ValueError, TypeError):
        v = None
    if isinstance(v, dict):
        if "label" in v:
            return str(v["label"]).upper()
        if "score" in v:
            s = float(v["score"])
            return "CORRECT" if s >= (0.5 if s <= 1 else 5) else "WRONG"
    m = re.search(r"Score:\s*(\d+(?:\.\d+)?)\s*/\s*10", reply or "")
    if m:
        return "CORRECT" if float(m.group(1)) >= 5 else "WRONG"
    m = re.search(r"\b(CORRECT|WRONG)\b", reply or "")
    return m.group(1) if m else "WRONG"
