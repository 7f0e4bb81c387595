"""LangMem as its users call it: `create_memory_store_manager` (trustcall extraction with the
memories it finds in the store) inside a LangGraph `@entrypoint` holding an `InMemoryStore`
(vector index, OpenAIEmbeddings), `create_search_memory_tool` at question time, `ChatOpenAI` for
every call; traced by openinference-instrumentation-langchain. The session date and the speakers
go in a system message of each batch (LangMem's prompt has no date of its own)."""

import json

import tracers
from libs.common import batches
from prompts import ANSWER_PROMPT, JUDGE_PROMPT
from voices import label_of

NAME = "langmem"
SERVICE = "langmem-locomo"
MODEL = "gpt-4.1-mini"
CHUNK = 8  # turns per manager call
# Sessions per conversation: trustcall's LangGraph spans carry the whole state (one span per
# tool call), ~0.7 MB of OTLP JSON per session, so 3 sessions keep the corpus under 40 MB.
SESSIONS = 3
STYLES = {"extraction": ["date", "drop", "speaker", "negate", "number", "name"],
          "answer": ["other_memory", "date", "refuse", "negate"],
          "embedding": ["unrelated", "inverted"]}
NAMESPACE = ("memories", "{langgraph_user_id}")


def instrument(provider):
    from openinference.instrumentation.langchain import LangChainInstrumentor
    LangChainInstrumentor().instrument(tracer_provider=provider)


class Library:
    def __init__(self, lab):
        from langchain_openai import ChatOpenAI, OpenAIEmbeddings
        self.lab = lab
        base = lab.base + "/v1"
        self.llm = ChatOpenAI(model=MODEL, temperature=0, base_url=base, api_key="lab-local")
        self.judge_llm = self.llm.bind(response_format={"type": "json_object"})
        # check_embedding_ctx_length=False: no tiktoken (it would download its encodings).
        self.embed = OpenAIEmbeddings(model="text-embedding-3-small", dimensions=256, base_url=base,
                                      api_key="lab-local", check_embedding_ctx_length=False)

    def run(self, conv, sessions, questions):
        """Adds the sessions, asks the questions; returns {question: label}."""
        from langgraph.func import entrypoint
        from langgraph.store.memory import InMemoryStore
        from langmem import create_memory_store_manager, create_search_memory_tool
        store = InMemoryStore(index={"dims": 256, "embed": self.embed})
        # The voices' runs let the manager delete (RemoveDoc), so a deletion can be faulted.
        manager = create_memory_store_manager(self.llm, namespace=NAMESPACE,
                                              enable_deletes=self.lab.voice != "lab")

        @entrypoint(store=store)
        def remember(messages):
            return manager.invoke({"messages": messages})

        cfg = {"configurable": {"langgraph_user_id": f"locomo-{conv['id']}"}}
        for _, _, msgs in batches(conv, sessions, CHUNK):
            remember.invoke(msgs, cfg)
        search = create_search_memory_tool(namespace=NAMESPACE, store=store)
        return {q["question"]: self.ask(search, cfg, q) for q in questions}

    def ask(self, search, cfg, q):
        with tracers.question("openinference", self.lab.tracer, q["question"]) as out:
            found = json.loads(search.invoke({"query": q["question"], "limit": 5}, cfg))
            lines = "\n".join(f"- {m['value']['content']['content']}" for m in found)
            ans = self.llm.invoke([("user", ANSWER_PROMPT.format(
                memories=lines, question=q["question"]))], cfg).content
            verdict = self.judge_llm.invoke([("user", JUDGE_PROMPT.format(
                question=q["question"], gold=q["answer"], answer=ans))], cfg).content
            label = label_of(verdict)  # any judge: a label word, JSON, a score (lab/voices.py)
            out.set(ans, label)
        return label


def _inputs(s, attr):
    return [attr(s, f"llm.input_messages.{i}.message.content") or "" for i in range(4)]


def faulty_span(spans, fault, applied, attr, question_span):
    """The span whose reply the server corrupted: the extraction call whose session holds the
    turn, the answer call that wrote the reply, or (the embedding is not traced) the search
    tool call of the question, which embedded the query."""
    llm = [s for s in spans if attr(s, "openinference.span.kind") == "LLM"]
    if fault["kind"] == "embedding":
        return next((s for s in spans if s.get("parentSpanId") == question_span["spanId"]
                     and attr(s, "openinference.span.kind") == "TOOL"), None)
    if fault["kind"] == "extraction":
        return next((s for s in llm if any(fault["turn"] in c.split("<session_", 1)[-1]
                                           for c in _inputs(s, attr) if "<session_" in c)), None)
    if fault["kind"] == "deletion":  # the call whose tool calls hold the RemoveDoc
        reply = next((a["reply"] for a in applied if a["spec"] == fault), "")
        doc = next((json.loads(c)["json_doc_id"] for c in json.loads(reply or "[]")
                    if "json_doc_id" in c), None)
        return next((s for s in llm if doc and any(
            a["key"].startswith("llm.output_messages.") and "tool_call" in a["key"]
            and doc in str(a["value"].get("stringValue", "")) for a in s.get("attributes", []))), None)
    reply = next((a["reply"] for a in applied if a["spec"] == fault), None)
    return next((s for s in llm if reply and
                 attr(s, "llm.output_messages.0.message.content") == reply), None)


def evidence_prompts(spans, texts, attr):
    """The extraction prompts whose session holds an evidence turn."""
    out = []
    for s in spans:
        if attr(s, "openinference.span.kind") != "LLM":
            continue
        for c in _inputs(s, attr):
            if "<session_" in c and any(t in c.split("<session_", 1)[-1] for t in texts):
                out.append(c)
    return out
