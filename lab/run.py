"""Runs the real mem0ai library over LoCoMo conversations against the lab's local LLM server,
traced by openinference-instrumentation-openai through the OpenTelemetry SDK's OTLP/HTTP
exporter to lab/receiver.py, injects faults in LLM replies, keeps those that alone flip the
judge, and writes the corpus under tests/data/lab/mem0ai/openinference/.

  python lab/run.py [--conversations 26,30] [--out tests/data/lab] [--sessions 4] [--faults 5]
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
WORK = tempfile.mkdtemp(prefix="memtrace-lab-")
os.environ.update({"MEM0_TELEMETRY": "False", "MEM0_DIR": os.path.join(WORK, "mem0"),
                   "OPENAI_API_KEY": "lab-local", "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"})

import receiver  # noqa: E402
import server  # noqa: E402
import text as model  # noqa: E402
from openai import OpenAI  # noqa: E402
from openinference.instrumentation.openai import OpenAIInstrumentor  # noqa: E402
from opentelemetry.exporter.otlp.proto.http import Compression  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402

# Mem0's LoCoMo evaluation prompts (mem0ai/mem0 evaluation/prompts.py, metrics/llm_judge.py).
ANSWER_PROMPT = """You are an intelligent memory assistant tasked with retrieving accurate information from conversation memories.

# CONTEXT:
You have access to memories from two speakers in a conversation. These memories contain timestamped information that may be relevant to answering the question.

# INSTRUCTIONS:
1. Carefully analyze all provided memories
2. Pay special attention to the timestamps to determine the answer
3. If the memories contain contradictory information, prioritize the most recent memory
4. Convert relative time references to specific dates
5. The answer should be less than 5-6 words.

Memories:

{memories}

Question: {question}

Answer:
"""
JUDGE_PROMPT = """Your task is to label an answer to a question as 'CORRECT' or 'WRONG'. You will be given the following data:
    (1) a question (posed by one user to another user),
    (2) a 'gold' (ground truth) answer,
    (3) a generated answer
which you will score as CORRECT/WRONG.

The point of the question is to ask about something one user should know about the other user based on their prior conversations.
The gold answer will usually be a concise and short answer that includes the referenced topic. The generated answer might be much longer, but you should be generous with your grading - as long as it touches on the same topic as the gold answer, it should be counted as CORRECT.

For time related questions, the gold answer will be a specific date, month, year, etc. As long as it refers to the same date or time period as the gold answer, it should be counted as CORRECT.

Now it's time for the real question:
Question: {question}
Gold answer: {gold}
Generated answer: {answer}

First, provide a short (one sentence) explanation of your reasoning, then finish with CORRECT or WRONG.
Do NOT include both CORRECT and WRONG in your response, or it will break the evaluation script.

Just return the label CORRECT or WRONG in a json format with the key as "label".
"""
STYLES = {"extraction": ["date", "drop", "speaker", "negate", "number", "name"],
          "answer": ["other_memory", "date", "refuse", "negate"],
          "embedding": ["unrelated", "inverted"]}
ERROR_TYPE = {"extraction": "ExtractionError", "answer": "ResponseError",
              "embedding": "RetrievalError"}
MODEL = "gpt-4.1-mini"
CHUNK = 8  # turns per Memory.add call


class Lab:
    def __init__(self):
        self.llm = server.start()
        self.recv = receiver.start()
        self.base = f"http://127.0.0.1:{self.llm.server_address[1]}"
        os.environ["OPENAI_BASE_URL"] = self.base + "/v1"
        self.provider = TracerProvider(resource=Resource.create({"service.name": "mem0-locomo"}))
        endpoint = f"http://127.0.0.1:{self.recv.server_address[1]}/v1/traces"
        self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint, compression=Compression.Gzip)))
        OpenAIInstrumentor().instrument(tracer_provider=self.provider)
        self.tracer = self.provider.get_tracer("locomo-eval")
        self.client = OpenAI(base_url=self.base + "/v1")
        self.style_at = {k: 0 for k in STYLES}  # styles rotate across questions and conversations

    def set_faults(self, faults):
        req = urllib.request.Request(self.base + "/_fault", json.dumps({"faults": faults}).encode(),
                                     {"Content-Type": "application/json"})
        urllib.request.urlopen(req).read()

    def applied(self):
        return json.load(urllib.request.urlopen(self.base + "/_fault"))["applied"]

    def memory(self, tag):
        from mem0 import Memory
        path = os.path.join(WORK, tag)
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

    def run(self, conv, sessions, questions, faults):
        """One traced run: add the sessions, ask the questions; returns {question: label}."""
        self.set_faults(faults)
        receiver.SINK.take()
        mem = self.memory(f"c{conv['id']}")
        a, b = conv["speaker_a"], conv["speaker_b"]
        user = f"locomo-{conv['id']}"
        for n in sessions:
            date = conv[f"session_{n}_date_time"]
            turns = conv[f"session_{n}"]
            for i in range(0, len(turns), CHUNK):
                msgs = [{"role": "user" if t["speaker"] == a else "assistant",
                         "content": f"{t['speaker']}: {t['text']}"} for t in turns[i:i + CHUNK]]
                mem.add(msgs, user_id=user, metadata={"session": n, "session_date": date},
                        prompt=f"Speakers: {a} and {b}. Session date: {date}. "
                               "Resolve relative dates against the session date.")
        labels = {}
        for q in questions:
            labels[q["question"]] = self.ask(mem, user, q)
        mem.close()
        self.provider.force_flush()
        return labels

    def ask(self, mem, user, q):
        with self.tracer.start_as_current_span("locomo-question") as span:
            span.set_attribute("openinference.span.kind", "CHAIN")
            span.set_attribute("input.value", q["question"])
            found = mem.search(q["question"], filters={"user_id": user}, top_k=5)["results"]
            lines = "\n".join(f"- {(m.get('metadata') or {}).get('session_date', '')}: {m['memory']}"
                              for m in found)
            ans = self.client.chat.completions.create(
                model=MODEL, temperature=0, messages=[{"role": "user", "content": ANSWER_PROMPT.format(
                    memories=lines, question=q["question"])}]).choices[0].message.content
            verdict = self.client.chat.completions.create(
                model=MODEL, temperature=0, response_format={"type": "json_object"},
                messages=[{"role": "user", "content": JUDGE_PROMPT.format(
                    question=q["question"], gold=q["answer"], answer=ans)}]).choices[0].message.content
            label = json.loads(verdict).get("label", "WRONG")
            span.set_attribute("output.value", json.dumps({"answer": ans, "label": label}))
            span.set_attribute("output.mime_type", "application/json")
        return label


def load_conv(cid):
    with open(os.path.join(ROOT, "tests", "data", "locomo", f"{cid}.json")) as f:
        conv = json.load(f)
    conv["id"] = cid
    return conv


def window(conv, n_sessions):
    """The first n sessions and the answerable questions whose evidence all lies in them."""
    sessions = list(range(1, n_sessions + 1))
    turns = {t["dia_id"]: t for n in sessions for t in conv[f"session_{n}"]}
    qs = [q for q in conv["qa"] if q.get("category") in (1, 2, 3, 4) and "answer" in q
          and q["evidence"] and all(e in turns for e in q["evidence"])]
    return sessions, qs, turns


def fault_for(kind, style, q, turns):
    if kind == "extraction":
        ev = [turns[e]["text"] for e in q["evidence"] if e in turns]
        return {"kind": kind, "style": style, "turn": ev[0]} if ev else None
    return {"kind": kind, "style": style, "question": q["question"]}


def choose_faults(lab, conv, sessions, correct, turns, limit, log):
    kinds = ["extraction", "answer", "embedding"]
    kept, style_at = [], lab.style_at
    for i, q in enumerate(correct):
        if len(kept) >= limit:
            break
        # Questions sharing evidence could be flipped by each other's faults: one per evidence.
        if any(set(q["evidence"]) & set(k["evidence"]) for k, _ in kept):
            continue
        kind = kinds[i % 3]
        styles = STYLES[kind]
        for t in range(len(styles)):
            style = styles[(style_at[kind] + t) % len(styles)]
            f = fault_for(kind, style, q, turns)
            if f is None:
                continue
            labels = lab.run(conv, sessions, [q], [f])
            if lab.applied() and labels[q["question"]] == "WRONG":
                kept.append((q, f))
                style_at[kind] = (style_at[kind] + t + 1) % len(styles)
                log(f"  fault kept: {kind}/{style} on {q['question']!r}")
                break
    return kept


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--conversations", default="26,30,41,42,43,47,49")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "lab"))
    ap.add_argument("--sessions", type=int, default=6)
    ap.add_argument("--questions", type=int, default=60)
    ap.add_argument("--faults", type=int, default=6)
    args = ap.parse_args()
    import writer
    lab = Lab()
    t0 = time.time()
    log = lambda m: print(f"[lab +{time.time() - t0:.0f}s] {m}", flush=True)  # noqa: E731
    for cid in args.conversations.split(","):
        conv = load_conv(cid)
        sessions, qs, turns = window(conv, args.sessions)
        qs = qs[: args.questions]
        clean = lab.run(conv, sessions, qs, [])
        correct = [q for q in qs if clean[q["question"]] == "CORRECT"]
        log(f"conv {cid}: {len(correct)}/{len(qs)} correct on the clean run")
        # At least two correct questions stay unfaulted: the trace holds passing cases too.
        limit = min(args.faults, max(0, len(correct) - 2))
        kept = choose_faults(lab, conv, sessions, correct, turns, limit, log)
        for attempt in range(4):
            if attempt == 3:
                raise SystemExit(f"conv {cid}: the combined run did not settle")
            labels = lab.run(conv, sessions, correct, [f for _, f in kept])
            applied = lab.applied()
            hit = [a["spec"] for a in applied]
            bad = [(q, f) for q, f in kept if labels[q["question"]] != "WRONG" or f not in hit]
            others = [q for q in correct if q["question"] not in {k[0]["question"] for k in kept}
                      and labels[q["question"]] != "CORRECT"]
            if not bad and not others:
                break
            kept = [k for k in kept if k not in bad]
            # A question another fault reaches too is not asked: every failure is annotated.
            correct = [q for q in correct if q not in others]
            log(f"  combined run: {len(bad)} faults no longer flip, {len(others)} others broke; rerun")
        bodies = receiver.SINK.take()
        writer.write(args.out, "mem0ai", "openinference", cid, bodies, kept, applied, labels,
                     [receiver.to_json(b) for b in bodies], ERROR_TYPE, turns)
        log(f"conv {cid}: wrote {len(kept)} failures, {len(correct) - len(kept)} passing questions")
        assert sum(v == "WRONG" for v in labels.values()) == len(kept)
    log("done")


if __name__ == "__main__":
    main()
