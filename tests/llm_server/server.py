#!/usr/bin/env python3
"""A scripted OpenAI- and Anthropic-compatible LLM server for memtrace's tests (stdlib only).

Start:  python3 tests/llm_server/server.py --port 8765      (--port 0 picks a free port)
It prints "LISTENING <port>" on its first line once it accepts connections.

Endpoints (any prefix before them is accepted, so a base URL like http://127.0.0.1:8765/v1 works):
  POST .../chat/completions   OpenAI Chat Completions shape
  POST .../messages           Anthropic Messages shape
  POST .../embeddings         OpenAI embeddings (8 deterministic numbers per input)
  OPTIONS *                   CORS preflight (every reply carries Access-Control-Allow-Origin: *)
  POST /_control              {"fault_rate": 0.3, "seed": 1, "kinds": ["429", "500", "slow", "reset",
                               "malformed"], "retry_after_s": 1, "slow_ms": 3000,
                               "only_if_contains": "text"}  (faults only requests whose body holds it)
  POST /_reset                clears the log, the script positions and the faults
  GET  /_log                  every request: seq, method, path, headers, body, fault, status, t_ms
  GET  /_health               {"ok": true}

Auto: the model "auto" (or "auto@RUN") plays any attribution agent without a script: it calls the
first opening tool offered (initialize, inspect_trace) and then explore/view tools until an op id
(op-<hex>) has appeared in the conversation, then answers with it (the final tool, or a JSON text
for the baselines). The data it sees decides the answer, so many generated cases need no script.
Scripts: the model name "script:NAME" (or "script:NAME@RUN": each RUN keeps its own position, so
runs sharing one server do not disturb each other) plays scripts/NAME.json (the format of memtrace's
ScriptedLlm: steps matched by "index" and/or "match_last", first unused match answers, else
"echo: <last text>"). The model "agent:N" plays a generic attribution agent that finishes after N
calls on any case (stateless, from the request alone; see agent_reply). Any other model echoes;
the model "missing" answers 404.
Per-path faults: a path containing /_fault/KIND/ (KIND = 401, 404, 429, 500, slow, reset, malformed,
echo_key = a 400 whose message quotes the credential headers, redirect = a 307 to the control
setting "redirect_to", truncated = a 200 whose JSON body is cut in half) always gets that fault, e.g. base URL http://127.0.0.1:8765/_fault/401/v1.
"""

import argparse
import hashlib
import json
import os
import random
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
FAULT_KINDS = ("401", "404", "429", "500", "slow", "reset", "malformed", "echo_key", "redirect",
               "truncated")
OP_ID = re.compile(r"op-[0-9a-f]{8,}")
FINAL_TOOLS = ("finish_exploration", "final_answer")
OPENING_TOOLS = ("initialize", "inspect_trace")
LOOKING_TOOLS = ("explore_frontier", "view_window", "view_operation", "grep_trace")


class State:
    def __init__(self, scripts_dir):
        self.lock = threading.Lock()
        self.scripts_dir = scripts_dir
        self.start = time.monotonic()
        self.reset()

    def reset(self):
        self.log = []
        self.used = {}  # (script, shape) -> set of used step indexes
        self.calls = {}  # (script, shape) -> number of calls so far
        self.fault_rate = 0.0
        self.kinds = ["429", "500"]
        self.retry_after_s = 1
        self.slow_ms = 3000
        self.only_if_contains = None
        self.rng = random.Random(0)
        self.redirect_to = "http://127.0.0.1:9"

    def load_script(self, name):
        safe = os.path.basename(name)
        path = os.path.join(self.scripts_dir, safe + ".json")
        with open(path, encoding="utf-8") as f:
            return json.load(f)


def words(text):
    return len((text or "").split())


def text_of(content):
    """The text of an OpenAI/Anthropic content value (string, parts or blocks)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content:
        last = content[-1]
        if isinstance(last, dict):
            if last.get("type") == "tool_result":
                return text_of(last.get("content"))
            return last.get("text", "")
    return ""


def all_text(body, shape):
    parts = []
    if shape == "anthropic" and isinstance(body.get("system"), str):
        parts.append(body["system"])
    for m in body.get("messages", []):
        c = m.get("content")
        if isinstance(c, list):
            parts.extend(text_of([b]) for b in c)
        else:
            parts.append(text_of(c))
    return " ".join(parts)


def pick_reply(state, script_name, model, shape, last):
    """The scripted reply {text, tool_calls} for this call, like memtrace's ScriptedLlm."""
    script = {"steps": []}
    if script_name:
        script = state.load_script(script_name)
    key = (model, shape)
    with state.lock:
        n = state.calls.get(key, 0)
        state.calls[key] = n + 1
        used = state.used.setdefault(key, set())
        for i, step in enumerate(script.get("steps", [])):
            if i in used and not step.get("repeat"):
                continue
            if "index" in step and step["index"] != n:
                continue
            if "match_last" in step and step["match_last"] not in last:
                continue
            used.add(i)
            reply = step.get("reply", {})
            return {"text": reply.get("text", ""), "tool_calls": reply.get("tool_calls", [])}
    if script.get("fallback") == "error":
        return None
    return {"text": "echo: " + last, "tool_calls": []}


def tool_specs(body, shape):
    """(name, required parameters) of each tool the request offers."""
    out = []
    for t in body.get("tools") or []:
        f = t.get("function", t) if shape == "openai" else t
        schema = f.get("parameters") or f.get("input_schema") or {}
        out.append((f.get("name", ""), schema.get("required") or []))
    return out


def agent_reply(body, shape, steps):
    """The same reply rule for every attribution method, so token counts compare renderings only.
    Before call N (counted by the assistant turns in the request), call a tool that needs no
    arguments: the first such tool on the first call, the second one after (e.g. graphtrace:
    initialize, then explore_frontier). At call N, or with no such tool, answer with the last op
    id seen in the request: through the final-answer tool when offered, else as JSON text."""
    turn = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
    tools = tool_specs(body, shape)
    free = [n for n, req in tools if not req and n not in FINAL_TOOLS]
    ops = OP_ID.findall(all_text(body, shape))
    if free and (turn < steps - 1 or not ops):
        name = free[0] if turn == 0 else free[min(1, len(free) - 1)]
        return {"text": "", "tool_calls": [{"id": "g%d" % turn, "name": name, "arguments": "{}"}]}
    verdict = json.dumps({"error_type": "RetrievalError", "op_id": ops[-1] if ops else "",
                          "reason": "generic agent: finished after %d calls" % (turn + 1)})
    final = [n for n, _ in tools if n in FINAL_TOOLS]
    if final:
        return {"text": "", "tool_calls": [{"id": "g%d" % turn, "name": final[0], "arguments": verdict}]}
    return {"text": verdict, "tool_calls": []}


def tool_names(body, shape):
    names = []
    for t in body.get("tools") or []:
        if shape == "anthropic":
            names.append(t.get("name", ""))
        else:
            names.append((t.get("function") or {}).get("name", ""))
    return names


def ok_results(body):
    """How many tool results in the conversation were not errors."""
    n = 0
    for m in body.get("messages", []):
        if m.get("role") == "tool" and not text_of(m.get("content")).startswith("error"):
            n += 1
        if isinstance(m.get("content"), list):
            n += sum(1 for b in m["content"] if b.get("type") == "tool_result"
                     and not text_of(b.get("content")).startswith("error"))
    return n


def auto_reply(body, shape, seq):
    """The "auto" model: open (again, until a call succeeds), look until an op id shows up,
    then answer with the first one."""
    text = all_text(body, shape)
    ops = OP_ID.findall(text)
    names = tool_names(body, shape)
    verdict = {"error_type": "RetrievalError", "op_id": ops[0] if ops else "",
               "reason": "auto: the first operation seen"}
    if not names:
        verdict.update({"faulty": True, "half": "first"})
        return {"text": json.dumps(verdict), "tool_calls": []}
    call_id = "auto%d" % seq
    final = next((n for n in FINAL_TOOLS if n in names), None)
    if ops and final:
        return {"text": "", "tool_calls": [{"id": call_id, "name": final, "arguments": json.dumps(verdict)}]}
    opening = next((n for n in OPENING_TOOLS if n in names), None)
    if ok_results(body) > 0:
        opening = None
    if opening:
        args = {"mode": "start_points"} if opening == "initialize" else {}
        return {"text": "", "tool_calls": [{"id": call_id, "name": opening, "arguments": json.dumps(args)}]}
    looking = next((n for n in LOOKING_TOOLS if n in names), None)
    if looking:
        return {"text": "", "tool_calls": [{"id": call_id, "name": looking, "arguments": "{}"}]}
    return {"text": json.dumps(verdict), "tool_calls": []}


def openai_reply(seq, model, reply, usage):
    msg = {"role": "assistant", "content": reply["text"] or None}
    if reply["tool_calls"]:
        msg["tool_calls"] = [
            {"id": c["id"], "type": "function",
             "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in reply["tool_calls"]
        ]
    return {
        "id": "chatcmpl-%d" % seq, "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "message": msg,
                     "finish_reason": "tool_calls" if reply["tool_calls"] else "stop"}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                  "total_tokens": usage[0] + usage[1]},
    }


def anthropic_reply(seq, model, reply, usage):
    content = []
    if reply["text"]:
        content.append({"type": "text", "text": reply["text"]})
    for c in reply["tool_calls"]:
        try:
            args = json.loads(c["arguments"])
        except ValueError:
            args = c["arguments"]  # malformed: sent as a string, which is not an object
        content.append({"type": "tool_use", "id": c["id"], "name": c["name"], "input": args})
    return {
        "id": "msg_%d" % seq, "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": "tool_use" if reply["tool_calls"] else "end_turn",
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }


def embedding(text):
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [round(b / 255.0, 6) for b in digest[:8]]


def error_body(shape, status, message):
    if shape == "anthropic":
        kind = {401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error"}
        return {"type": "error", "error": {"type": kind.get(status, "api_error"), "message": message}}
    return {"error": {"message": message, "type": "server_error", "code": status}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state = None  # set in main

    def log_message(self, *args):
        pass

    def _cors(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
        self.send_header("Access-Control-Allow-Headers",
                         "content-type, authorization, x-api-key, anthropic-version, "
                         "anthropic-dangerous-direct-browser-access")
        self.send_header("Access-Control-Expose-Headers", "retry-after, retry-after-ms")
        self.send_header("Access-Control-Max-Age", "600")

    def _send(self, status, obj, headers=()):
        out = json.dumps(obj).encode("utf-8")
        self.send_response(status)
        self._cors()
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(out)

    def do_OPTIONS(self):
        self.send_response(204)
        self._cors()
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self):
        st = self.state
        if self.path.startswith("/_log"):
            with st.lock:
                self._send(200, list(st.log))
        elif self.path.startswith("/_health"):
            self._send(200, {"ok": True})
        else:
            self._send(404, {"error": {"message": "no such path: " + self.path}})

    def _read_body(self):
        n = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return raw.decode("utf-8"), (json.loads(raw) if raw else {})
        except ValueError:
            return raw.decode("utf-8", "replace"), None

    def do_POST(self):
        st = self.state
        raw, body = self._read_body()
        if self.path == "/_reset":
            with st.lock:
                st.reset()
            return self._send(200, {"ok": True})
        if self.path == "/_control":
            if not isinstance(body, dict):
                return self._send(400, {"error": {"message": "control body must be a JSON object"}})
            with st.lock:
                st.fault_rate = float(body.get("fault_rate", 0.0))
                st.kinds = [str(k) for k in body.get("kinds", ["429", "500"])]
                st.retry_after_s = body.get("retry_after_s", 1)
                st.slow_ms = int(body.get("slow_ms", 3000))
                st.only_if_contains = body.get("only_if_contains")
                st.rng = random.Random(body.get("seed", 0))
                st.redirect_to = body.get("redirect_to", st.redirect_to)
            return self._send(200, {"ok": True})

        if self.path.endswith("/chat/completions"):
            shape = "openai"
        elif self.path.endswith("/messages"):
            shape = "anthropic"
        elif self.path.endswith("/embeddings"):
            shape = "embeddings"
        else:
            return self._send(404, {"error": {"message": "no such endpoint: " + self.path}})

        fault = None
        for kind in FAULT_KINDS:
            if "/_fault/%s/" % kind in self.path:
                fault = kind
        with st.lock:
            seq = len(st.log)
            chosen = st.only_if_contains is None or st.only_if_contains in raw
            if fault is None and chosen and st.fault_rate > 0 and st.rng.random() < st.fault_rate:
                fault = st.rng.choice(st.kinds)
            record = {
                "seq": seq, "method": "POST", "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body if body is not None else raw, "fault": fault,
                "status": None, "t_ms": round((time.monotonic() - st.start) * 1000, 1),
            }
            st.log.append(record)
            retry_after = st.retry_after_s
            slow_ms = st.slow_ms

        def finish(status, obj, headers=()):
            with st.lock:
                record["status"] = status
                record["t_done_ms"] = round((time.monotonic() - st.start) * 1000, 1)
            self._send(status, obj, headers)

        def finish_raw(status, text):
            with st.lock:
                record["status"] = status
                record["t_done_ms"] = round((time.monotonic() - st.start) * 1000, 1)
            data = text.encode("utf-8")
            self.send_response(status)
            self._cors()
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        if fault == "reset":
            with st.lock:
                record["status"] = 0
                record["t_done_ms"] = round((time.monotonic() - st.start) * 1000, 1)
            self.close_connection = True
            return
        if fault == "slow":
            time.sleep(slow_ms / 1000.0)
        if fault == "echo_key":
            quoted = "%s / %s" % (self.headers.get("authorization"), self.headers.get("x-api-key"))
            return finish(400, error_body(shape, 400, "bad request with credentials " + quoted))
        if fault == "redirect":
            target = st.redirect_to + self.path.replace("/_fault/redirect", "", 1)
            return finish(307, error_body(shape, 307, "moved"), [("location", target)])
        if fault == "401":
            return finish(401, error_body(shape, 401, "invalid x-api-key / bearer token"))
        if fault == "404":
            return finish(404, error_body(shape, 404, "model not found"))
        if fault == "429":
            return finish(429, error_body(shape, 429, "rate limited, slow down"),
                          [("retry-after", str(retry_after))])
        if fault == "500":
            return finish(500, error_body(shape, 500, "injected server error"))
        if not isinstance(body, dict):
            return finish(400, error_body(shape, 400, "request body is not JSON"))

        model = str(body.get("model", ""))
        if model == "missing":
            return finish(404, error_body(shape, 404, "model `missing` does not exist"))
        if shape == "embeddings":
            inputs = body.get("input", [])
            if isinstance(inputs, str):
                inputs = [inputs]
            data = [{"object": "embedding", "index": i, "embedding": embedding(t)}
                    for i, t in enumerate(inputs)]
            return finish(200, {"object": "list", "model": model, "data": data,
                                "usage": {"prompt_tokens": sum(words(t) for t in inputs),
                                          "total_tokens": sum(words(t) for t in inputs)}})

        messages = body.get("messages") or [{}]
        last = text_of(messages[-1].get("content"))
        script = model[len("script:"):].split("@")[0] if model.startswith("script:") else None
        try:
            if model.startswith("agent:") and model[len("agent:"):].isdigit():
                reply = agent_reply(body, shape, int(model[len("agent:"):]))
            elif model.split("@")[0] == "auto":
                reply = auto_reply(body, shape, seq)
            else:
                reply = pick_reply(st, script, model, shape, last)
        except OSError as e:
            return finish(404, error_body(shape, 404, "no script for model %s: %s" % (model, e)))
        if reply is None:
            return finish(500, error_body(shape, 500, "script %s has no step for %r" % (script, last)))
        if fault == "malformed" and reply["tool_calls"]:
            reply = dict(reply, tool_calls=[dict(c, arguments=c["arguments"][:-2])
                                            for c in reply["tool_calls"]])
        usage = (words(all_text(body, shape)),
                 words(reply["text"]) + sum(words(c["arguments"]) for c in reply["tool_calls"]))
        out = openai_reply(seq, model, reply, usage) if shape == "openai" else \
            anthropic_reply(seq, model, reply, usage)
        if fault == "truncated":
            raw_out = json.dumps(out)
            return finish_raw(200, raw_out[:len(raw_out) // 2])
        return finish(200, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--scripts", default=os.path.join(HERE, "scripts"))
    args = ap.parse_args()
    Handler.state = State(args.scripts)
    ThreadingHTTPServer.request_queue_size = 128  # the default 5 drops bursts of connections
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    print("LISTENING %d" % server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
