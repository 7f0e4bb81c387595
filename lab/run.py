"""Runs real memory libraries (lab/libs/: mem0ai, langmem, graphiti) over LoCoMo conversations against the
lab's local LLM server, traced by a real instrumentation (`--tracer`, lab/tracers.py: OpenInference
by default; OTel GenAI and OpenLLMetry for mem0ai) through the OpenTelemetry SDK's OTLP/HTTP
exporters to lab/receiver.py, injects faults in LLM replies, keeps those that alone flip the
judge, and writes the corpus under tests/data/lab/<library>/<tracer>/.

  python lab/run.py [--library all|mem0ai|langmem|graphiti|mem0v1|agno] [--tracer openinference|genai|openllmetry]
                    (mem0v1 = mem0ai 1.0.x, run in its own venv, VENV in lab/libs/mem0v1.py)
                    (no --tracer: every tracer the library is run with, TRACERS in lab/libs/<library>.py)
                    [--conversations 26,30] [--out tests/data/lab] [--sessions 4] [--questions 60] [--faults 5]
                    [--skip 12]  (fault questions after the first 12 correct ones: another draw of cases)
                    [--voice terse|first|third|json]  (lab/voices.py: how the stand-in writes; the
                    voices' fault kinds, lab/faults.py; written to tests/data/lab/voices/<voice>/,
                    no .pb.gz)
"""

import argparse
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
WORK = tempfile.mkdtemp(prefix="memtrace-lab-")
os.environ.update({"MEM0_TELEMETRY": "False", "MEM0_DIR": os.path.join(WORK, "mem0"),
                   "OPENAI_API_KEY": "lab-local", "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
                   "LANGSMITH_TRACING": "false", "LANGCHAIN_TRACING_V2": "false",
                   "GRAPHITI_TELEMETRY_ENABLED": "false"})

import faults  # noqa: E402
import receiver  # noqa: E402
import voices  # noqa: E402
import server  # noqa: E402
import tracers  # noqa: E402
from opentelemetry.exporter.otlp.proto.http import Compression  # noqa: E402
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter  # noqa: E402
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: E402
from opentelemetry.sdk._logs import LoggerProvider  # noqa: E402
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor  # noqa: E402
from opentelemetry.sdk.resources import Resource  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import BatchSpanProcessor  # noqa: E402

LIBRARIES = ["mem0ai", "langmem", "graphiti", "mem0v1", "agno"]
ERROR_TYPE = {"extraction": "ExtractionError", "answer": "ResponseError",
              "embedding": "RetrievalError", "search": "RetrievalError",
              "update": "UpdateError", "deletion": "DeletionError"}
# The fault styles of a voice run (lab/faults.py), for every library; "deletion" where the library
# can delete a memory (langmem's RemoveDoc; mem0ai 2.2.1 and graphiti's pipeline here cannot).
VOICE_STYLES = {"extraction": faults.STYLES, "answer": ["other_memory", "date", "refuse", "number"],
                "embedding": ["unrelated", "inverted"], "deletion": ["delete"]}
DELETES = {"langmem"}


class Lab:
    """The server, the receiver, one library instrumented (one per process: the instrumentors
    patch client classes globally)."""

    def __init__(self, lib, tracer="openinference", voice="lab"):
        self.lib_mod = lib
        self.voice = voice
        server.VOICE = voice
        self.styles = lib.STYLES if voice == "lab" else {
            k: v for k, v in VOICE_STYLES.items() if k != "deletion" or lib.NAME in DELETES}
        self.tracer_name = tracer
        self.work = WORK
        self.llm = server.start()
        self.recv = receiver.start()
        self.base = f"http://127.0.0.1:{self.llm.server_address[1]}"
        os.environ["OPENAI_BASE_URL"] = self.base + "/v1"
        resource = Resource.create({"service.name": lib.SERVICE})
        self.provider = TracerProvider(resource=resource)
        endpoint = f"http://127.0.0.1:{self.recv.server_address[1]}/v1/"
        self.provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(
            endpoint=endpoint + "traces", compression=Compression.Gzip)))
        # GenAI events are log records: the SDK's log exporter posts them in their own request.
        self.logger_provider = LoggerProvider(resource=resource)
        self.logger_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter(
            endpoint=endpoint + "logs", compression=Compression.Gzip)))
        if tracer == "openinference":
            lib.instrument(self.provider)
        else:
            lib.instrument(self.provider, tracer, self.logger_provider)
        self.tracer = self.provider.get_tracer("locomo-eval")
        self.library = lib.Library(self)
        self.style_at = {k: 0 for k in self.styles}  # styles rotate across questions and conversations

    def set_faults(self, faults):
        req = urllib.request.Request(self.base + "/_fault", json.dumps({"faults": faults}).encode(),
                                     {"Content-Type": "application/json"})
        urllib.request.urlopen(req).read()

    def applied(self):
        return json.load(urllib.request.urlopen(self.base + "/_fault"))["applied"]

    def whole(self):
        """Per question of the last run: its answer held all of the gold, not only half."""
        return json.load(urllib.request.urlopen(self.base + "/_whole"))["whole"]

    def run(self, conv, sessions, questions, faults):
        """One traced run: add the sessions, ask the questions; returns {question: label}."""
        self.set_faults(faults)
        receiver.SINK.take(), receiver.SINK.take_logs()
        labels = self.library.run(conv, sessions, questions)
        self.provider.force_flush()
        self.logger_provider.force_flush()
        return labels


def load_conv(cid):
    with open(os.path.join(ROOT, "tests", "data", "locomo", f"{cid}.json")) as f:
        conv = json.load(f)
    conv["id"] = cid
    return conv


def window(conv, n_sessions):
    """The first n sessions and the answerable questions whose evidence all lies in them."""
    # A conversation with fewer sessions gives all it has.
    sessions = [n for n in range(1, n_sessions + 1) if f"session_{n}" in conv]
    turns = {t["dia_id"]: t for n in sessions for t in conv[f"session_{n}"]}
    qs = [q for q in conv["qa"] if q.get("category") in (1, 2, 3, 4) and "answer" in q
          and q["evidence"] and all(e in turns for e in q["evidence"])]
    return sessions, qs, turns


def entities(turns, speakers):
    """The names a conversation says (capitalized inside a sentence, not a speaker, month or
    weekday), most said first: what an entity swap picks from."""
    skip = set(speakers) | set(server.model.MONTHS) | {w.capitalize() for w in server.model.WEEKDAYS}
    count = {}
    for t in turns.values():
        for m in re.finditer(r"(?<=[a-z,] )([A-Z][a-z]{2,})\b", t["text"]):
            if m.group(1) not in skip:
                count[m.group(1)] = count.get(m.group(1), 0) + 1
    return sorted(count, key=lambda w: (-count[w], w))[:12]


def fault_for(kind, style, q, turns, speakers=()):
    if kind in ("extraction", "update", "deletion"):  # the memory of the first evidence turn
        ev = [turns[e]["text"] for e in q["evidence"] if e in turns]
        if not ev:
            return None
        f = {"kind": kind, "style": style, "turn": ev[0]}
        if style == "entity":
            f["entities"] = entities(turns, speakers)
        if style == "generalize":
            f["gold"] = str(q["answer"])
        return f
    return {"kind": kind, "style": style, "question": q["question"]}


def choose_faults(lab, conv, sessions, correct, turns, limit, log):
    own = getattr(lab.lib_mod, "KINDS", None) if lab.voice == "lab" else None
    kinds = own or [k for k in ["extraction", "answer", "embedding", "deletion"] if k in lab.styles]
    kept, style_at, STYLES = [], lab.style_at, lab.styles
    speakers = [conv["speaker_a"], conv["speaker_b"]]
    tried = 0  # libraries with KINDS rotate over the questions tried, not over the questions seen
    for i, q in enumerate(correct):
        if len(kept) >= limit:
            break
        # Questions sharing evidence could be flipped by each other's faults: one per evidence.
        if any(set(q["evidence"]) & set(k["evidence"]) for k, _ in kept):
            continue
        # KINDS rotate per question tried; a voice run turns to the next kind once one is kept
        # (a deletion is rarely possible).
        at = tried if own else (i if lab.voice == "lab" else len(kept))
        kind = kinds[at % len(kinds)]
        tried += 1
        styles = STYLES[kind]
        for t in range(len(styles)):
            style = styles[(style_at[kind] + t) % len(styles)]
            f = fault_for(kind, style, q, turns, speakers)
            if f is None:
                continue
            labels = lab.run(conv, sessions, [q], [f])
            if lab.applied() and labels[q["question"]] == "WRONG":
                kept.append((q, f))
                style_at[kind] = (style_at[kind] + t + 1) % len(styles)
                log(f"  fault kept: {kind}/{style} on {q['question']!r}")
                break
    return kept


def venv_of(name):
    """The venv a library runs in when not the lab's (`VENV` in lab/libs/<name>.py), else None."""
    venv = getattr(importlib.import_module(f"libs.{name}"), "VENV", None)
    return venv and (os.environ.get(f"MEMTRACE_LAB_VENV_{name.upper()}")
                     or os.path.join(os.path.expanduser("~/.cache/memtrace"), venv))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--library", default="all", help="all or one of " + ", ".join(LIBRARIES))
    ap.add_argument("--tracer", help="one of " + ", ".join(tracers.TRACERS)
                    + " (default: each the library is run with, one process each)")
    ap.add_argument("--conversations", default="26,30,41,42,43,47,49")
    ap.add_argument("--out", help="default tests/data/lab (a voice: tests/data/lab/voices/<voice>)")
    ap.add_argument("--voice", default="lab", choices=["lab"] + voices.VOICES,
                    help="how the stand-in model writes (lab/voices.py); default: lab/text.py's")
    ap.add_argument("--sessions", type=int, help="default: the library's SESSIONS (mem0ai 6, langmem 3, graphiti 3)")
    ap.add_argument("--questions", type=int, default=60)
    ap.add_argument("--faults", type=int, default=6)
    ap.add_argument("--skip", type=int, default=0,
                    help="leave the first N correct questions unfaulted (another draw of cases, e.g. to tune on)")
    args = ap.parse_args()
    names = LIBRARIES if args.library == "all" else [args.library]
    own_venv = args.library in LIBRARIES and venv_of(args.library)
    if args.library == "all" or args.tracer is None or (
            own_venv and os.path.realpath(sys.prefix) != os.path.realpath(own_venv)):
        # One process per library and tracer: each instruments the client classes globally.
        argv = list(sys.argv[1:])
        for flag in ("--library", "--tracer"):
            if flag in argv:
                del argv[argv.index(flag):argv.index(flag) + 2]
        for name in names:
            if name not in LIBRARIES:
                break
            lib = importlib.import_module(f"libs.{name}")
            runs = getattr(lib, "TRACERS", ["openinference"])
            # A library that does not install beside the others has a venv of its own.
            python = os.path.join(venv_of(name), "bin", "python") if venv_of(name) else sys.executable
            for tracer in [t for t in runs if args.tracer in (None, t)]:
                subprocess.run([python, os.path.abspath(__file__), "--library", name,
                                "--tracer", tracer] + argv, check=True)
        else:
            return
    if args.library not in LIBRARIES:
        raise SystemExit(f"--library: {args.library!r} is not one of all, {', '.join(LIBRARIES)}")
    import writer
    lib = importlib.import_module(f"libs.{args.library}")
    if args.tracer not in getattr(lib, "TRACERS", ["openinference"]):
        raise SystemExit(f"--tracer {args.tracer}: {args.library} is traced by "
                         + ", ".join(getattr(lib, "TRACERS", ["openinference"])) + " only")
    if args.out is None:
        args.out = os.path.join(ROOT, "tests", "data", "lab", *(["voices", args.voice] if args.voice != "lab" else []))
    lab = Lab(lib, args.tracer, args.voice)
    t0 = time.time()
    log = lambda m: print(f"[lab {lib.NAME}/{args.tracer} +{time.time() - t0:.0f}s] {m}", flush=True)  # noqa: E731
    for cid in args.conversations.split(","):
        conv = load_conv(cid)
        sessions, qs, turns = window(conv, args.sessions or lib.SESSIONS)
        qs = qs[: args.questions]
        clean = lab.run(conv, sessions, qs, [])
        whole = lab.whole()
        correct = [q for q in qs if clean[q["question"]] == "CORRECT"]
        # Faulted only where the clean answer held all of the gold: a judge passing half of it
        # passes a question memory had already lost in part, and the fault would take the blame.
        faultable = [q for q in correct if whole.get(q["question"])]
        log(f"conv {cid}: {len(correct)}/{len(qs)} correct on the clean run, {len(faultable)} with all of the gold")
        # At least two correct questions stay unfaulted: the trace holds passing cases too.
        limit = min(args.faults, max(0, len(correct) - 2))
        kept = choose_faults(lab, conv, sessions, faultable[args.skip:], turns, limit, log)
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
        bodies, logs = receiver.SINK.take(), receiver.SINK.take_logs()
        writer.write(args.out, lib, args.tracer, cid, (bodies, logs), kept, applied, labels,
                     ([receiver.to_json(b) for b in bodies], [receiver.to_json(b, True) for b in logs]),
                     ERROR_TYPE, turns, protobuf=args.voice == "lab")
        log(f"conv {cid}: wrote {len(kept)} failures, {len(correct) - len(kept)} passing questions")
        assert sum(v == "WRONG" for v in labels.values()) == len(kept)
    log("done")


if __name__ == "__main__":
    main()
