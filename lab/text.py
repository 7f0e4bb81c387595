"""Deterministic stand-in "model" of the lab server (stdlib only): paraphrased fact extraction,
relative dates resolved against the session date, a hashed embedding, answer selection and a
judge that compares an answer's key content (dates, numbers, content words, negation) with gold.
"""

import datetime as dt
import hashlib
import math
import re

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
STOP = set("""a an the and or but if of to in on at for with from by as is are was were be been being
am do does did have has had it its this that these those there here so very really just too also
i me my we us our you your he him his she her they them their what which who whom when where why how
not no yes can could will would should shall may might must about into over than then out up down
some any all more most such own same other only one s t just like get got oh well""".split())
NEGATIONS = {"not", "never", "no", "n't", "didn't", "doesn't", "isn't", "wasn't", "hasn't",
             "haven't", "won't", "cannot", "nobody", "nothing"}
# Word swaps a model makes when it rewrites (and the judge undoes: it compares meanings).
SYNONYMS = {"kids": "children", "movie": "film", "movies": "films", "pic": "photograph",
            "photo": "photograph", "picture": "photograph", "pics": "photographs",
            "photos": "photographs", "pictures": "photographs", "started": "began",
            "finished": "completed", "buy": "purchase", "bought": "purchased", "job": "position",
            "big": "large", "awesome": "wonderful", "amazing": "wonderful", "great": "wonderful",
            "super": "very", "chat": "conversation",
            "mom": "mother", "dad": "father", "pals": "friends", "buddies": "friends",
            "trip": "journey", "happy": "glad", "tough": "difficult", "hard": "difficult"}
CANON = {}
for _k, _v in SYNONYMS.items():
    CANON[_v] = _k
PHATIC = ("hey", "hi", "hello", "wow", "thanks", "thank", "haha", "lol", "omg", "congrats",
          "congratulations", "sounds", "aww", "yeah", "bye", "take care", "see you", "good to")
VERB_S = {"have": "has", "do": "does", "go": "goes", "try": "tries", "am": "is", "was": "was"}
COMMON_VERBS = set("""love like want think feel need enjoy hope plan know work make take try
find keep volunteer paint run play read write cook miss believe remember wish agree live
really always often usually never still also just""".split())


def parse_session_date(text):
    """'1:56 pm on 8 May, 2023' → date(2023, 5, 8); None when there is no date."""
    m = re.search(r"(\d{1,2})\s+([A-Z][a-z]+),?\s+(\d{4})", text or "")
    if not m or m.group(2) not in MONTHS:
        return None
    return dt.date(int(m.group(3)), MONTHS.index(m.group(2)) + 1, int(m.group(1)))


def fmt(d):
    return f"{d.day} {MONTHS[d.month - 1]} {d.year}"


def resolve_dates(s, d):
    """Relative time words → absolute dates, as a model told the observation date does."""
    if d is None:
        return s
    prev_month = (d.replace(day=1) - dt.timedelta(days=1))
    next_month = (d.replace(day=28) + dt.timedelta(days=7)).replace(day=1)

    def weekday_before(m):
        wd = WEEKDAYS.index(m.group(1).lower())
        back = (d.weekday() - wd) % 7 or 7
        return "on " + fmt(d - dt.timedelta(days=back))

    rules = [
        (r"\b(?:last|this past) (monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
         weekday_before),
        (r"\byesterday\b", lambda m: "on " + fmt(d - dt.timedelta(days=1))),
        (r"\b(?:today|tonight|this morning|this evening)\b", lambda m: "on " + fmt(d)),
        (r"\blast weekend\b", lambda m: "the weekend before " + fmt(d)),
        (r"\blast week\b", lambda m: "the week before " + fmt(d)),
        (r"\bnext week\b", lambda m: "the week after " + fmt(d)),
        (r"\blast month\b", lambda m: f"in {MONTHS[prev_month.month - 1]} {prev_month.year}"),
        (r"\bnext month\b", lambda m: f"in {MONTHS[next_month.month - 1]} {next_month.year}"),
        (r"\blast year\b", lambda m: f"in {d.year - 1}"),
        (r"\bthis year\b", lambda m: f"in {d.year}"),
        (r"\bnext year\b", lambda m: f"in {d.year + 1}"),
        (r"\b(\d+|two|three|four|five) years ago\b",
         lambda m: f"in {d.year - word_number(m.group(1))}"),
        (r"\ba few days ago\b", lambda m: "a few days before " + fmt(d)),
        (r"\brecently\b", lambda m: "shortly before " + fmt(d)),
    ]
    for pat, fn in rules:
        s = re.sub(pat, fn, s, flags=re.I)
    return s


def word_number(w):
    words = {"two": 2, "three": 3, "four": 4, "five": 5}
    return int(w) if w.isdigit() else words.get(w.lower(), 1)


def third_person(s, speaker, other):
    """First person → the speaker's name, second person → the other speaker's."""
    reps = [
        (r"\bI'm\b", f"{speaker} is"), (r"\bI am\b", f"{speaker} is"),
        (r"\bI've\b", f"{speaker} has"), (r"\bI'd\b", f"{speaker} would"),
        (r"\bI'll\b", f"{speaker} will"), (r"\bmyself\b", "themselves"),
        (r"\bwe're\b", f"{speaker} and their family are"), (r"\bwe\b", f"{speaker} and their family"),
        (r"\bour\b", "their"), (r"\bus\b", "them"),
        (r"\bgonna\b", "is going to"), (r"\bwanna\b", "wants to"),
        (r"\byou've\b", f"{other} has"), (r"\byou're\b", f"{other} is"), (r"\byour\b", f"{other}'s"), (r"\byou\b", other),
    ]
    for pat, rep in reps:
        s = re.sub(pat, rep, s, flags=re.I)
    s = re.sub(r"^[Mm]y\b", f"{speaker}'s", s)
    s = re.sub(r"\b[Mm]y\b", "their", s)
    s = re.sub(r"\bme\b", speaker, s)

    def subject(m):
        rest = m.group(1)
        words = rest.split(" ", 1)
        verb = words[0]
        low = verb.lower()
        if low in VERB_S:
            verb = VERB_S[low]
        elif low in COMMON_VERBS and low not in ("really", "always", "often", "usually", "never",
                                                  "still", "also", "just"):
            verb = verb + ("es" if low.endswith(("o", "sh", "ch")) else "s")
        elif low in ("really", "always", "often", "usually", "never", "still", "also", "just") \
                and len(words) > 1:
            inner = words[1].split(" ", 1)
            v2 = inner[0]
            if v2.lower() in VERB_S:
                v2 = VERB_S[v2.lower()]
            elif v2.lower() in COMMON_VERBS:
                v2 = v2 + "s"
            return f"{speaker} {verb} {v2}" + (" " + inner[1] if len(inner) > 1 else "")
        return f"{speaker} {verb}" + (" " + words[1] if len(words) > 1 else "")

    s = re.sub(r"\bI ([a-zA-Z' ]+)", subject, s)
    return s


def synonymize(s):
    def rep(m):
        w = m.group(0)
        out = SYNONYMS.get(w.lower(), w)
        return out[0].upper() + out[1:] if w[0].isupper() else out
    return re.sub(r"[A-Za-z]+", rep, s)


def reorder(s):
    """A leading time phrase or clause goes to the end ("On 7 May 2023, X did Y" → "X did Y on …")."""
    m = re.match(r"^((?:on|in|the week (?:before|after)|the weekend before|shortly before)"
                 r" [^,]{3,40}?),?\s+([A-Z].*)$", s)
    if m:
        body = m.group(2).rstrip(".!")
        return f"{body} {m.group(1)}"
    m = re.match(r"^(When|After|Before|Since|Because) ([^,]{5,80}), (.+)$", s)
    if m:
        return f"{m.group(3).rstrip('.!')} {m.group(1).lower()} {m.group(2)}"
    return s


def sentences(text):
    parts = re.split(r"(?<=[.!?])\s+", text.strip())
    return [p.strip() for p in parts if p.strip()]


def lower_first(s):
    first = s.split(" ", 1)[0]
    if first in ("The", "It", "This", "That", "There", "A", "An", "These", "Those", "Cool"):
        return s[0].lower() + s[1:]
    return s


def informative(s):
    low = s.lower().strip()
    if s.endswith("?") or len(re.findall(r"[A-Za-z0-9]+", s)) < 5:
        return False
    return not any(low.startswith(p) for p in PHATIC)


def paraphrase_turn(text, speaker, other, date):
    """Facts a model writes for one turn: informative sentences rewritten in third person, dates
    resolved, words swapped, clauses reordered, at most two sentences merged into one memory."""
    keep = [s for s in sentences(text) if informative(s)][:2]
    if not keep:
        return []
    out = []
    for s in keep:
        s = s.rstrip(".!")
        s = re.sub(r"\b(so|super|totally|really|pretty|actually|honestly)\s+", "", s, flags=re.I)
        s = resolve_dates(s, date)
        s = third_person(s, speaker, other)
        s = synonymize(s)
        s = reorder(s)
        s = s[0].upper() + s[1:]
        if speaker not in s and other not in s:
            s = f"{speaker} said that {lower_first(s)}"
        out.append(s)
    fact = out[0] if len(out) == 1 else f"{out[0]}; {lower_first(out[1])}"
    if fact.rstrip(".") == text.rstrip(".!"):
        fact = f"{speaker} said that {fact}"
    return [fact + "."]


def stem(w):
    w = w.lower().strip("'")
    w = CANON.get(w, w)
    for suf in ("ingly", "edly", "ing", "ed", "es", "ly", "s"):
        if len(w) > len(suf) + 2 and w.endswith(suf):
            return w[: -len(suf)]
    return w


def content_stems(s):
    return [stem(w) for w in re.findall(r"[A-Za-z0-9']+", s) if w.lower() not in STOP]


def _bucket(feature, dims):
    h = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    n = int.from_bytes(h, "little")
    return n % dims, (1.0 if (n >> 40) & 1 else -1.0)


def embed(text, dims=256):
    """Hashed bag of stemmed words plus character 4-grams, L2-normalized."""
    v = [0.0] * dims
    for st in content_stems(text):
        i, sign = _bucket("w:" + st, dims)
        v[i] += sign
        padded = f"#{st}#"
        for k in range(len(padded) - 3):
            i, sign = _bucket("c:" + padded[k:k + 4], dims)
            v[i] += 0.25 * sign
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / norm for x in v]


def overlap_score(query, text, df):
    q = set(content_stems(query))
    t = set(content_stems(text))
    return sum(1.0 / (1 + df.get(w, 0)) for w in q & t)


def best_memories(question, memories):
    df = {}
    for m in memories:
        for w in set(content_stems(m)):
            df[w] = df.get(w, 0) + 1
    scored = sorted(((overlap_score(question, m, df), -i, m) for i, m in enumerate(memories)),
                    reverse=True)
    return [m for sc, _, m in scored if sc > 0]


DATE_RE = re.compile(r"(?:(?:the )?(monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|weekend)"
                     r" (before|after|of) )?(\d{1,2} )?(January|February|March|April|May|June|July|"
                     r"August|September|October|November|December),? (\d{4})|\b(19\d\d|20\d\d)\b", re.I)


def dates_in(s):
    """Dates as (year, month, day) tuples, month/day None when not given; 'the sunday before D'
    resolved to D's previous sunday, 'the week before D' kept as a week key."""
    out = []
    for m in DATE_RE.finditer(s):
        if m.group(6):
            out.append((int(m.group(6)), None, None))
            continue
        month = [x.lower() for x in MONTHS].index(m.group(4).lower()) + 1
        year = int(m.group(5))
        day = int(m.group(3)) if m.group(3) else None
        rel, how = (m.group(1) or "").lower(), (m.group(2) or "").lower()
        if day and rel in WEEKDAYS and how == "before":
            d = dt.date(year, month, day)
            back = (d.weekday() - WEEKDAYS.index(rel)) % 7 or 7
            d = d - dt.timedelta(days=back)
            out.append((d.year, d.month, d.day))
        else:
            out.append((year, month, day))
    return out


def same_date(gold, ans):
    return all(g is None or a is None or g == a for g, a in zip(gold, ans)) and \
        (gold[1] is None or ans[1] is not None)


def judge(gold, answer, share=0.5):
    """CORRECT when the answer holds the gold's dates, numbers and `share` of its content words
    (half, as LoCoMo's judge; 1.0: all of them), without a negation the gold lacks."""
    gold = str(gold)
    gd, ad = dates_in(gold), dates_in(answer)
    if gd and not all(any(same_date(g, a) for a in ad) for g in gd):
        return "WRONG"
    gold_wo_dates = DATE_RE.sub(" ", gold)
    nums = re.findall(r"\b\d+\b", gold_wo_dates)
    if any(n not in re.findall(r"\b\d+\b", answer) for n in nums):
        return "WRONG"
    neg = lambda s: any(w in NEGATIONS for w in re.findall(r"[a-z']+", s.lower()))
    if neg(answer) and not neg(gold):
        return "WRONG"
    g = set(content_stems(gold_wo_dates)) - {str(n) for n in nums}
    if not g:
        return "CORRECT" if (gd or nums) else "WRONG"
    a = set(content_stems(answer))
    return "CORRECT" if len(g & a) / len(g) >= share else "WRONG"
