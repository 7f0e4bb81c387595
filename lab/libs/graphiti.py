"""graphiti-core 0.22.0 (Zep's temporal knowledge graph) as its users call it: `Graphiti` on the
embedded Kuzu graph store (`KuzuDriver(":memory:")`), `OpenAIGenericClient` (its client for
OpenAI-compatible servers: the reply's JSON schema goes in the prompt), `OpenAIEmbedder`,
`add_episode` per chunk of turns (the session date as `reference_time`), `search` (hybrid
BM25 + cosine over the graph's facts, RRF) at question time. Traced by
openinference-instrumentation-openai (graphiti's AsyncOpenAI client) and graphiti's own spans
(its `tracer=` argument)."""

import asyncio
import datetime as dt
import re

import tracers
from libs.common import answer_and_judge
from voices import label_of

NAME = "graphiti"
SERVICE = "graphiti-locomo"
MODEL = "gpt-4.1-mini"
CHUNK = 8  # turns per episode
SESSIONS = 4  # graphiti makes ~4 LLM calls per episode
STYLES = {"extraction": ["date", "drop", "speaker", "negate", "number", "name"],
          "answer": ["other_memory", "date", "refuse", "negate"],
          "embedding": ["unrelated", "inverted"]}
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]


def instrument(provider):
    from openinference.instrumentation.openai import OpenAIInstrumentor
    OpenAIInstrumentor().instrument(tracer_provider=provider)


def session_time(text):
    """LoCoMo's "1:56 pm on 8 May, 2023" as an aware datetime."""
    m = re.search(r"(\d{1,2}):(\d\d) (am|pm) on (\d{1,2}) (\w+),? (\d{4})", text)
    if not m:
        raise SystemExit(f"graphiti: no session date in {text!r}")
    hour = int(m.group(1)) % 12 + (12 if m.group(3) == "pm" else 0)
    return dt.datetime(int(m.group(6)), MONTHS.index(m.group(5)) + 1, int(m.group(4)), hour,
                       int(m.group(2)), tzinfo=dt.timezone.utc)


class Library:
    def __init__(self, lab):
        from openai import OpenAI
        self.lab = lab
        self.client = OpenAI(base_url=lab.base + "/v1")

    def graph(self):
        from graphiti_core import Graphiti
        from graphiti_core.cross_encoder.openai_reranker_client import OpenAIRerankerClient
        from graphiti_core.driver.kuzu_driver import KuzuDriver
        from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
        from graphiti_core.llm_client.config import LLMConfig
        from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
        base = self.lab.base + "/v1"
        cfg = LLMConfig(api_key="lab-local", base_url=base, model=MODEL, small_model=MODEL,
                        temperature=0)
        return Graphiti(graph_driver=KuzuDriver(db=":memory:"),
                        llm_client=OpenAIGenericClient(config=cfg),
                        embedder=OpenAIEmbedder(OpenAIEmbedderConfig(
                            api_key="lab-local", base_url=base, embedding_dim=256,
                            embedding_model="text-embedding-3-small")),
                        cross_encoder=OpenAIRerankerClient(config=cfg),
                        tracer=self.lab.provider.get_tracer("graphiti"))

    def run(self, conv, sessions, questions):
        """Adds the sessions, asks the questions; returns {question: label}."""
        return asyncio.run(self.arun(conv, sessions, questions))

    async def arun(self, conv, sessions, questions):
        from graphiti_core.nodes import EpisodeType
        g = self.graph()
        await g.build_indices_and_constraints()
        group = f"locomo-{conv['id']}"
        for n in sessions:
            when = session_time(conv[f"session_{n}_date_time"])
            turns = conv[f"session_{n}"]
            for i in range(0, len(turns), CHUNK):
                body = "\n".join(f"{t['speaker']}: {t['text']}" for t in turns[i:i + CHUNK])
                await g.add_episode(name=f"session {n} part {i // CHUNK + 1}", episode_body=body,
                                    source=EpisodeType.message, source_description="LoCoMo chat",
                                    reference_time=when, group_id=group)
        labels = {}
        for q in questions:
            labels[q["question"]] = await self.ask(g, group, q)
        await g.close()
        return labels

    async def ask(self, g, group, q):
        with tracers.question("openinference", self.lab.tracer, q["question"]) as out:
            found = await g.search(q["question"], group_ids=[group], num_results=5)
            lines = "\n".join(f"- {e.valid_at:%d %B %Y}: {e.fact}" if e.valid_at else f"- {e.fact}"
                              for e in found)
            ans, verdict = answer_and_judge(self.client, lines, q)
            label = label_of(verdict)  # any judge: a label word, JSON, a score (lab/voices.py)
            out.set(ans, label)
        return label


def faulty_span(spans, fault, applied, attr, question_span):
    """The span of the call whose reply the server corrupted (as for mem0ai: the same
    OpenAI instrumentation)."""
    from libs.mem0ai import faulty_span as by_reply
    return by_reply(spans, fault, applied, attr, question_span)


def evidence_prompts(spans, texts, attr):
    """The fact-extraction prompts whose CURRENT_MESSAGE holds an evidence turn."""
    out = []
    for s in spans:
        content = attr(s, "llm.input_messages.1.message.content") or ""
        m = re.search(r"<CURRENT_MESSAGE>\n(.*?)\n</CURRENT_MESSAGE>", content, re.S)
        if m and any(t in m.group(1) for t in texts):
            out.append(content)
    return out
