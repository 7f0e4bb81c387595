"""Writes one run of the lab: the OTLP JSON Lines the receiver got (gzip-compressed,
`<c>.jsonl.gz`: memtrace decompresses it), the raw protobuf bodies
as the exporter sent them (gzip members, concatenated: `gunzip` gives one protobuf stream, which
parses as one ExportTraceServiceRequest, since protobuf merges concatenated messages) and the ground truth
sidecar (`<trace>.annotations.json`, MemTraceBench annotations; the lab's own fault details under
`lab_faults`, which memtrace ignores).
"""

import gzip
import json
import os


def spans_of(docs):
    for doc in docs:
        for rs in doc.get("resourceSpans", []):
            for ss in rs.get("scopeSpans", []):
                yield from ss.get("spans", [])


def attr(span, key):
    for a in span.get("attributes", []):
        if a["key"] == key:
            v = a["value"]
            return v.get("stringValue", json.dumps(v))
    return None


def fnv1a(text):
    h = 0xcbf29ce484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def question_span(spans, question):
    for s in spans:
        if attr(s, "openinference.span.kind") == "CHAIN" and attr(s, "input.value") == question:
            return s
    return None


def write(out, lib, fmt, cid, bodies, kept, applied, labels, docs, error_type, turns):
    """`lib`: the library's module (lab/libs/), which finds its faulty span and evidence prompts."""
    folder = os.path.join(out, lib.NAME, fmt)
    os.makedirs(folder, exist_ok=True)
    lines = "".join(json.dumps(d, separators=(",", ":")) + "\n" for d in docs)
    # mtime=0: the same text gives the same bytes.
    with open(os.path.join(folder, f"{cid}.jsonl.gz"), "wb") as f:
        f.write(gzip.compress(lines.encode(), compresslevel=9, mtime=0))
    with open(os.path.join(folder, f"{cid}.pb.gz"), "wb") as f:
        f.write(b"".join(bodies))
    spans = list(spans_of(docs))
    notes, faults = [], []
    for q, fault in kept:
        qs = question_span(spans, q["question"])
        op = qs and lib.faulty_span(spans, fault, applied, attr, qs)
        if op is None or qs is None:
            raise SystemExit(f"conv {cid}: no span for fault {fault} / question {q['question']!r}")
        answer = json.loads(attr(qs, "output.value"))["answer"]
        notes.append({
            # The id memtrace's OTLP import gives the question span's input value.
            "query_id": f"input:str:{fnv1a(q['question'])}@1",
            "query": q["question"],
            "golden_answers": str(q["answer"]),
            "prediction": answer,
            # The answer call's output, as memtrace's OTLP import names it.
            "prediction_id": f"llm_output:str:{fnv1a(answer)}@1",
            # The extraction prompts that hold the LoCoMo evidence turns, as memtrace names them.
            "source_evidence_ids": [f"llm_input:str:{fnv1a(c)}@1" for c in lib.evidence_prompts(
                spans, [turns[e]["text"] for e in q["evidence"] if e in turns], attr)],
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
