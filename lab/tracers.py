"""The instrumentations the lab traces a library with (`lab/run.py --tracer`), the question span
a user of each writes by hand, and how the writer reads each one's spans back:

- `openinference`: `openinference-instrumentation-openai`; the question is a CHAIN span
  (`input.value` / `output.value`);
- `genai`: the OpenTelemetry GenAI instrumentation (`opentelemetry-instrumentation-openai-v2`,
  content capture on: prompts and replies are log records, exported as an OTLP logs request
  beside the traces); the question is a plain span with GenAI attributes (`invoke_agent`,
  `gen_ai.input.messages` / `gen_ai.output.messages`) and the judge's verdict as a
  `gen_ai.evaluation.result` event;
- `openllmetry`: Traceloop's `opentelemetry-instrumentation-openai` (content in
  `gen_ai.input.messages` / `gen_ai.output.messages` span attributes); the question span is what
  traceloop-sdk's `@workflow` decorator writes (`traceloop.span.kind`, `traceloop.entity.*`),
  made with the plain OTel API (traceloop-sdk does not install beside the pinned OTel SDK).
"""

import json
import os
from contextlib import contextmanager

TRACERS = ["openinference", "genai", "openllmetry"]


def instrument(name, provider, logger_provider):
    """Instruments the OpenAI client classes (globally: one tracer per process)."""
    if name == "openinference":
        from openinference.instrumentation.openai import OpenAIInstrumentor
        OpenAIInstrumentor().instrument(tracer_provider=provider)
    elif name == "genai":
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
        OpenAIInstrumentor().instrument(tracer_provider=provider, logger_provider=logger_provider)
    elif name == "openllmetry":
        os.environ["TRACELOOP_TRACE_CONTENT"] = "true"
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor
        OpenAIInstrumentor().instrument(tracer_provider=provider)
    else:
        raise SystemExit(f"--tracer: {name!r} is not one of {', '.join(TRACERS)}")


class Answer:
    """What the question span reports once the judge has spoken."""

    def __init__(self, name, span):
        self.name, self.span = name, span

    def set(self, answer, label):
        s = self.span
        if self.name == "openinference":
            s.set_attribute("output.value", json.dumps({"answer": answer, "label": label}))
            s.set_attribute("output.mime_type", "application/json")
        elif self.name == "genai":
            s.set_attribute("gen_ai.output.messages", json.dumps([{
                "role": "assistant", "parts": [{"type": "text", "content": answer}],
                "finish_reason": "stop"}]))
            s.add_event("gen_ai.evaluation.result", {"gen_ai.evaluation.name": "locomo-judge",
                                                      "gen_ai.evaluation.score.label": label})
        else:
            s.set_attribute("traceloop.entity.output", json.dumps({"answer": answer, "label": label}))


@contextmanager
def question(name, tracer, text):
    """The span a user of tracer `name` adds by hand around one question."""
    if name == "openinference":
        with tracer.start_as_current_span("locomo-question") as span:
            span.set_attribute("openinference.span.kind", "CHAIN")
            span.set_attribute("input.value", text)
            yield Answer(name, span)
    elif name == "genai":
        with tracer.start_as_current_span("invoke_agent locomo-qa") as span:
            span.set_attribute("gen_ai.operation.name", "invoke_agent")
            span.set_attribute("gen_ai.agent.name", "locomo-qa")
            span.set_attribute("gen_ai.input.messages", json.dumps([{
                "role": "user", "parts": [{"type": "text", "content": text}]}]))
            yield Answer(name, span)
    else:
        with tracer.start_as_current_span("locomo_question.workflow") as span:
            span.set_attribute("traceloop.span.kind", "workflow")
            span.set_attribute("traceloop.workflow.name", "locomo_question")
            span.set_attribute("traceloop.entity.name", "locomo_question")
            span.set_attribute("traceloop.entity.input", json.dumps({"args": [text], "kwargs": {}}))
            yield Answer(name, span)


def value(v):
    """An OTLP JSON AnyValue as Python."""
    if "stringValue" in v:
        return v["stringValue"]
    if "kvlistValue" in v:
        return {kv["key"]: value(kv.get("value", {})) for kv in v["kvlistValue"].get("values", [])}
    if "arrayValue" in v:
        return [value(x) for x in v["arrayValue"].get("values", [])]
    for k in ("intValue", "doubleValue", "boolValue"):
        if k in v:
            return v[k]
    return None


class View:
    """The spans and log records of one run, read the way tracer `name` writes them. Called as
    `view(span, key)` it is the attribute lookup the library modules take."""

    def __init__(self, name, spans, log_docs):
        self.tracer, self.spans = name, spans
        self.by_id = {s["spanId"]: s for s in spans}
        self.events = {}  # spanId → [(event name, body)]
        for doc in log_docs:
            for rl in doc.get("resourceLogs", []):
                for sl in rl.get("scopeLogs", []):
                    for r in sl.get("logRecords", []):
                        name = r.get("eventName") or next(
                            (a["value"].get("stringValue") for a in r.get("attributes", [])
                             if a["key"] == "event.name"), "")
                        self.events.setdefault(r.get("spanId", ""), []).append(
                            (name, value(r.get("body", {}))))

    def __call__(self, span, key):
        for a in span.get("attributes", []):
            if a["key"] == key:
                v = a["value"]
                return v.get("stringValue", json.dumps(v))
        return None

    def kind(self, s):
        """LLM, EMBEDDING, QUESTION or None."""
        if self.tracer == "openinference":
            return self(s, "openinference.span.kind")
        if self.tracer == "genai":
            op = self(s, "gen_ai.operation.name")
            if op == "invoke_agent":
                return "QUESTION"
            return {"chat": "LLM", "embeddings": "EMBEDDING"}.get(op)
        if self(s, "traceloop.span.kind") == "workflow":
            return "QUESTION"
        return {"chat": "LLM", "embeddings": "EMBEDDING"}.get(self(s, "gen_ai.operation.name"))

    def question_span(self, text):
        for s in self.spans:
            if self.tracer == "openinference":
                if self.kind(s) == "CHAIN" and self(s, "input.value") == text:
                    return s
            elif self.kind(s) == "QUESTION" and self.question_of(s) == text:
                return s
        return None

    def question_of(self, s):
        if self.tracer == "genai":
            return json.loads(self(s, "gen_ai.input.messages"))[0]["parts"][0]["content"]
        return json.loads(self(s, "traceloop.entity.input"))["args"][0]

    def answer_of(self, qs):
        if self.tracer == "genai":
            return json.loads(self(qs, "gen_ai.output.messages"))[0]["parts"][0]["content"]
        key = "output.value" if self.tracer == "openinference" else "traceloop.entity.output"
        return json.loads(self(qs, key))["answer"]

    def reply(self, s):
        """The LLM call's first reply text."""
        if self.tracer == "openinference":
            return self(s, "llm.output_messages.0.message.content")
        if self.tracer == "openllmetry":
            return next(iter(self.messages(s, "gen_ai.output.messages", "assistant")), None)
        for name, body in self.events.get(s["spanId"], []):
            if name == "gen_ai.choice" and isinstance(body, dict):
                return (body.get("message") or {}).get("content")
        return None

    def user_message(self, s, i=0):
        """The content of the call's i-th user message."""
        if self.tracer == "openinference":
            return self(s, f"llm.input_messages.{i + 1}.message.content")
        if self.tracer == "openllmetry":
            users = self.messages(s, "gen_ai.input.messages", "user")
            return users[i] if i < len(users) else None
        users = [b.get("content") for n, b in self.events.get(s["spanId"], [])
                 if n == "gen_ai.user.message" and isinstance(b, dict)]
        return users[i] if i < len(users) else None

    def messages(self, s, key, role):
        """The text of each `role` message of a `gen_ai.*.messages` attribute (parts joined)."""
        out = []
        for m in json.loads(self(s, key) or "[]"):
            if m.get("role") == role:
                out.append("".join(p.get("content", "") for p in m.get("parts", [])
                                   if isinstance(p.get("content"), str)))
        return out

    def under(self, s, ancestor):
        while s is not None:
            if s["spanId"] == ancestor["spanId"]:
                return True
            s = self.by_id.get(s.get("parentSpanId", ""))
        return False
