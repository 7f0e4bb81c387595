"""Writes one run of the lab: the OTLP JSON Lines the receiver got, the raw protobuf bodies
as the exporter sent them (gzip members, concatenated: `gunzip` gives one protobuf stream, which
parses as one ExportTraceServiceRequest, since protobuf merges concatenated messages) and the ground truth
sidecar (`<trace>.annotations.json`, MemTraceBench annotations; the lab's own fault details under
`lab_faults`, which memtrace ignores).
"""

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


def faulty_span(spans, fault, applied):
    """The span of the call whose reply the server corrupted."""
    if fault["kind"] == "embedding":
        for s in spans:
            if attr(s, "openinference.span.kind") == "EMBEDDING" and \
                    fault["question"] in (attr(s, "embedding.embeddings.0.embedding.text") or ""):
                return s
        return None
    reply = next((a["reply"] for a in applied if a["spec"] == fault), None)
    for s in spans:
        if attr(s, "openinference.span.kind") == "LLM" and reply and \
                attr(s, "llm.output_messages.0.message.content") == reply:
            return s
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


def evidence_vars(spans, texts):
    """The extraction prompts whose New Messages hold an evidence turn (the variables through
    which the turn enters the traced pipeline), as memtrace's OTLP import names them."""
    ids = []
    for s in spans:
        content = attr(s, "llm.input_messages.1.message.content") or ""
        new = content.split("## New Messages", 1)[-1].split("## Observation Date", 1)[0]
        if "## New Messages" in content and any(t in new for t in texts):
            ids.append(f"llm_input:str:{fnv1a(content)}@1")
    return ids


def write(out, library, fmt, cid, bodies, kept, applied, labels, docs, error_type, turns):
    folder = os.path.join(out, library, fmt)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{cid}.jsonl"), "w") as f:
        for d in docs:
            f.write(json.dumps(d, separators=(",", ":")) + "\n")
    with open(os.path.join(folder, f"{cid}.pb.gz"), "wb") as f:
        f.write(b"".join(bodies))
    spans = list(spans_of(docs))
    notes, faults = [], []
    for q, fault in kept:
        op = faulty_span(spans, fault, applied)
        qs = question_span(spans, q["question"])
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
            "source_evidence_ids": evidence_vars(
                spans, [turns[e]["text"] for e in q["evidence"] if e in turns]),
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
