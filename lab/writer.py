"""Writes one run of the lab: the OTLP JSON Lines the receiver got (gzip-compressed,
`<c>.jsonl.gz`: memtrace decompresses it), the raw protobuf bodies
as the exporter sent them (gzip members, concatenated: `gunzip` gives one protobuf stream, which
parses as one ExportTraceServiceRequest, since protobuf merges concatenated messages) and the ground truth
sidecar (`<trace>.annotations.json`, MemTraceBench annotations; the lab's own fault details under
`lab_faults`, which memtrace ignores). When the tracer sent log records (OTel GenAI events), the
JSON Lines hold the traces requests then the logs requests (as one collector file exporter in
both pipelines writes them), and the logs' protobuf bodies go to `<c>.logs.pb.gz`.
"""

import gzip
import json
import os

import tracers


def spans_of(docs):
    for doc in docs:
        for rs in doc.get("resourceSpans", []):
            for ss in rs.get("scopeSpans", []):
                yield from ss.get("spans", [])


def fnv1a(text):
    h = 0xcbf29ce484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


# The port memtrace's OTLP import makes of the question span's question, per tracer.
QUESTION_PORT = {"openinference": "input", "openllmetry": "input", "genai": "query"}


def write(out, lib, fmt, cid, bodies, kept, applied, labels, docs, error_type, turns, protobuf=True):
    """`lib`: the library's module (lab/libs/), which finds its faulty span and evidence prompts;
    `fmt`: the tracer (lab/tracers.py); `bodies`, `docs`: (traces, logs) as sent and as JSON;
    `protobuf`: also the bodies as sent (`<c>.pb.gz`; not for the voices, to keep them small)."""
    folder = os.path.join(out, lib.NAME, fmt)
    os.makedirs(folder, exist_ok=True)
    (bodies, log_bodies), (docs, log_docs) = bodies, docs
    lines = "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in docs + log_docs)
    # mtime=0: the same text gives the same bytes.
    with open(os.path.join(folder, f"{cid}.jsonl.gz"), "wb") as f:
        f.write(gzip.compress(lines.encode(), compresslevel=9, mtime=0))
    if protobuf:
        with open(os.path.join(folder, f"{cid}.pb.gz"), "wb") as f:
            f.write(b"".join(bodies))
    if log_bodies and protobuf:
        with open(os.path.join(folder, f"{cid}.logs.pb.gz"), "wb") as f:
            f.write(b"".join(log_bodies))
    spans = list(spans_of(docs))
    view = tracers.View(fmt, spans, log_docs)
    notes, faults = [], []
    for q, fault in kept:
        qs = view.question_span(q["question"])
        op = qs and lib.faulty_span(spans, fault, applied, view, qs)
        if op is None or qs is None:
            raise SystemExit(f"conv {cid}: no span for fault {fault} / question {q['question']!r}")
        answer = view.answer_of(qs)
        notes.append({
            # The id memtrace's OTLP import gives the question span's input value.
            "query_id": f"{QUESTION_PORT[fmt]}:str:{fnv1a(q['question'])}@1",
            "query": q["question"],
            "golden_answers": str(q["answer"]),
            "prediction": answer,
            # The answer call's output, as memtrace's OTLP import names it.
            "prediction_id": f"llm_output:str:{fnv1a(answer)}@1",
            # The extraction prompts that hold the LoCoMo evidence turns, as memtrace names them.
            "source_evidence_ids": [f"llm_input:str:{fnv1a(c)}@1" for c in lib.evidence_prompts(
                spans, [turns[e]["text"] for e in q["evidence"] if e in turns], view)],
            "final_error_type": error_type[fault["kind"]],
            "final_op_id": f"op-{op['spanId']}",
        })
        faults.append({"question": q["question"], "evidence": q["evidence"],
                       "category": q["category"], "question_span": qs["spanId"],
                       "fault": fault, "faulty_span": op["spanId"], "faulty_span_name": op["name"],
                       "label": labels.get(q["question"])})
    passing = [qq for qq, lab in labels.items() if lab == "CORRECT"]
    with open(os.path.join(folder, f"{cid}.annotations.json"), "w") as f:
        json.dump({"annotations": notes, "lab_faults": faults, "lab_passing_questions": passing},
                  f, indent=1, ensure_ascii=False)
