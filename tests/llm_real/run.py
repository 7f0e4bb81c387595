#!/usr/bin/env python3
"""The LLM paths of the `memtrace` CLI against a real OpenAI-compatible server (scripts/test-llm).

Runs graphtrace, obstrace and all-at-once on two fixture cases, the counterfactual answer replay
on one and one optimizer step, each under a wall-clock limit, then checks every outcome and prints
per method: cases run, verdicts / no-verdicts, steps (LLM calls), tokens, seconds.

A run passes when it ends by itself (no timeout, no panic, exit 0) within its step cap, with a
verdict naming an operation of the trace and one of the five error types, or with a
"no verdict: <why>" that says why. What the model answers is not judged: a tiny model is the point.

Usage: run.py --memtrace BIN --base-url URL --out DIR
"""

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = [os.path.join(ROOT, "tests/fixtures/smartcomment", f)
            for f in ("mem0_commented.json", "mem0_bare.json")]
ERROR_TYPES = {"ExtractionError", "UpdateError", "DeletionError", "RetrievalError",
               "ResponseError"}
OUTCOMES = {"verified", "refuted", "not-replayable"}
# Agents: LLM calls per case at most (the CLI's --max-iterations). All-at-once asks once and
# re-asks twice after a malformed reply.
AGENT_CAP = 4
CAPS = {"graphtrace": AGENT_CAP, "obstrace": AGENT_CAP, "all-at-once": 3}
RUN_TIMEOUT_S = 240
# Which of the server's two names each run talks to (tests/llm_real/serve.py): the Gemma chat
# format answers tool calls in text, chatml-function-calling with native `tool_calls`.
TEXT_MODEL, NATIVE_MODEL = "gemma3-270m", "gemma3-270m-fc"
MODELS = {"graphtrace": TEXT_MODEL, "obstrace": NATIVE_MODEL, "all-at-once": TEXT_MODEL}


def op_ids(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)["data"]
    return {op["op_id"] for op in data["operations"]}


class Runner:
    def __init__(self, args):
        self.args = args
        self.failures = []
        self.rows = []
        os.makedirs(args.out, exist_ok=True)

    def provider(self, tag, model=TEXT_MODEL, stats=True):
        a = self.args
        self.stats = os.path.join(a.out, tag + ".stats.json")
        self.replies = os.path.join(a.out, tag + ".replies.jsonl")
        for p in (self.stats, self.replies):
            if os.path.exists(p):
                os.remove(p)
        return ["--provider", "openai", "--base-url", a.base_url, "--model", model,
                "--concurrency", "1", "--max-retries", "1", "--timeout-ms", "120000",
                "--max-tokens", str(a.max_tokens), "--replies-out", self.replies] + (
                    ["--stats-out", self.stats] if stats else [])

    def run(self, tag, argv):
        """Runs the CLI; returns (exit code or None on timeout, stdout, stderr, seconds)."""
        cmd = [self.args.memtrace] + argv
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                               env=dict(os.environ, MEMTRACE_API_KEY=""))
            code, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            code, out, err = None, e.stdout or "", e.stderr or ""
            out = out.decode() if isinstance(out, bytes) else out
            err = err.decode() if isinstance(err, bytes) else err
        secs = time.monotonic() - t0
        with open(os.path.join(self.args.out, tag + ".out"), "w", encoding="utf-8") as f:
            f.write("$ " + " ".join(cmd) + "\n" + out + "\n--- stderr\n" + err)
        return code, out, err, secs

    def fail(self, tag, why):
        self.failures.append(f"{tag}: {why}")
        print(f"  FAIL {why}")

    def read_stats(self):
        """The CLI's call statistics, or the same counted from the logged replies."""
        try:
            with open(self.stats, encoding="utf-8") as f:
                return json.load(f)
        except (OSError, ValueError):
            pass
        stats = {"calls": 0, "input_tokens": 0, "output_tokens": 0, "estimated_calls": 0}
        try:
            with open(self.replies, encoding="utf-8") as f:
                for r in (json.loads(l) for l in f if l.strip()):
                    stats["calls"] += 1
                    usage = r.get("usage") or {}
                    stats["input_tokens"] += usage.get("input_tokens", 0)
                    stats["output_tokens"] += usage.get("output_tokens", 0)
                    stats["estimated_calls"] += 1 if r.get("usage_estimated") else 0
        except (OSError, ValueError):
            pass
        return stats

    def show_steps(self):
        """Prints each raw reply of the last run, shortened."""
        try:
            with open(self.replies, encoding="utf-8") as f:
                lines = [json.loads(l) for l in f if l.strip()]
        except (OSError, ValueError):
            return
        for i, r in enumerate(lines, 1):
            if "error" in r:
                what = "error: " + r["error"]
            else:
                calls = ", ".join(f"{c['name']}({c['arguments'][:60]})" for c in r["tool_calls"])
                what = ("calls " + calls + " · " if calls else "") + "text " + json.dumps(r["content"][:160])
            print(f"    step {i} [{r.get('purpose', '')}]: {what}")

    def checked_run(self, tag, argv, ops, cap, model=TEXT_MODEL):
        """One CLI run with --json: returns the parsed case objects, after the common checks."""
        print(f"== {tag} (model {model})")
        code, out, err, secs = self.run(tag, argv + self.provider(tag, model))
        self.show_steps()
        stats = self.read_stats()
        if code is None:
            self.fail(tag, f"did not end within {RUN_TIMEOUT_S} s (a hang)")
        elif code != 0:
            self.fail(tag, f"exit {code}: {err.strip()[-400:]}")
        if "panicked" in err:
            self.fail(tag, "panicked: " + err.strip()[-400:])
        cases = []
        for line in out.splitlines():
            try:
                cases.append(json.loads(line))
            except ValueError:
                self.fail(tag, f"not a JSON line: {line[:200]}")
        if code == 0 and not cases:
            self.fail(tag, "no case in the output")
        calls = stats.get("calls", 0)
        if cap is not None and calls > cap * max(len(cases), 1):
            self.fail(tag, f"{calls} LLM calls, over the cap of {cap} per case")
        verdicts = 0
        for c in cases:
            if "error" in c:
                why = str(c["error"]).strip()
                print(f"  no verdict: {why}")
                if len(why) < 10:
                    self.fail(tag, f"a no-verdict without a reason: {why!r}")
                continue
            if c.get("op_id") not in ops:
                self.fail(tag, f"verdict names {c.get('op_id')!r}, not an operation of the trace")
            elif c.get("error_type") not in ERROR_TYPES:
                self.fail(tag, f"verdict has error type {c.get('error_type')!r}")
            else:
                verdicts += 1
                print(f"  verdict {c['error_type']} at {c['op_id']} ({c.get('op_name', '')}): "
                      f"{str(c.get('reason', ''))[:160]}")
        return cases, {"cases": len(cases), "verdicts": verdicts,
                       "no_verdicts": len(cases) - verdicts, "steps": calls,
                       "tokens_in": stats.get("input_tokens", 0),
                       "tokens_out": stats.get("output_tokens", 0),
                       "estimated": stats.get("estimated_calls", 0), "seconds": secs}

    def methods(self):
        for method in ("graphtrace", "obstrace", "all-at-once"):
            total = None
            for path in FIXTURES:
                name = os.path.splitext(os.path.basename(path))[0]
                argv = ["attribute", path, "--json", "--method", method,
                        "--max-iterations", str(AGENT_CAP), "--history-budget-tokens", "2500"]
                _, row = self.checked_run(f"{method}-{name}", argv, op_ids(path), CAPS[method],
                                          MODELS[method])
                total = row if total is None else {k: total[k] + row[k] for k in total}
            self.rows.append((method, total))

    def counterfactual(self):
        # mem0_bare: infoflow blames the retrieval, so the answer step can be replayed.
        path = FIXTURES[1]
        argv = ["attribute", path, "--json", "--method", "infoflow", "--verify"]
        cases, row = self.checked_run("counterfactual", argv, op_ids(path), 2)
        for c in cases:
            cf = c.get("counterfactual")
            if not cf or cf.get("outcome") not in OUTCOMES:
                self.fail("counterfactual", f"no counterfactual outcome in {json.dumps(c)[:300]}")
                row["verdicts"], row["no_verdicts"] = 0, row["cases"]
            else:
                print(f"  counterfactual {cf['outcome']}: {cf.get('detail', '')[:200]}")
                # The verdict here is infoflow's; what counts is that the replay gave an outcome.
                if cf["outcome"] == "not-replayable":
                    row["verdicts"], row["no_verdicts"] = 0, row["cases"]
        self.rows.append(("counterfactual", row))

    def optimizer(self):
        tag = "optimize-step"
        print(f"== {tag}")
        out_dir = os.path.join(self.args.out, "optimize")
        argv = ["optimize", FIXTURES[0], "--out", out_dir, "--export", "text"]
        code, out, err, secs = self.run(tag, argv + self.provider(tag, stats=False))
        self.show_steps()
        stats = self.read_stats()
        edits = out.count(": edited (")
        # Exit 2 with "error: <why>" is the optimizer's no-edit (e.g. a reply that is not JSON).
        reason = next((l for l in reversed(err.splitlines()) if l.startswith("error: ")), "")
        if code is None:
            self.fail(tag, f"did not end within {RUN_TIMEOUT_S} s (a hang)")
        elif code not in (0, 2) or (code == 2 and len(reason) < 20):
            self.fail(tag, f"exit {code}: {err.strip()[-400:]}")
        if "panicked" in err:
            self.fail(tag, "panicked")
        if code in (0, 2):
            print(f"  {edits} prompt(s) edited" if edits else
                  "  no edit: " + (reason or (err.strip().splitlines() or ["(no message)"])[-1])[:300])
        self.rows.append(("optimizer step", {
            "cases": 1, "verdicts": 1 if edits else 0, "no_verdicts": 0 if edits else 1,
            "steps": stats.get("calls", 0), "tokens_in": stats.get("input_tokens", 0),
            "tokens_out": stats.get("output_tokens", 0),
            "estimated": stats.get("estimated_calls", 0), "seconds": secs}))

    def summary(self):
        print("\nper method (real server %s; graphtrace, all-at-once, replay, optimizer: %s, "
              "obstrace: %s):" % (self.args.base_url, TEXT_MODEL, NATIVE_MODEL))
        print(f"  {'method':<16}{'cases':>6}{'verdicts':>10}{'no-verdicts':>13}{'steps':>7}"
              f"{'tokens in':>11}{'tokens out':>12}{'seconds':>9}")
        for name, r in self.rows:
            est = " (estimated for %d replies)" % r["estimated"] if r["estimated"] else ""
            print(f"  {name:<16}{r['cases']:>6}{r['verdicts']:>10}{r['no_verdicts']:>13}"
                  f"{r['steps']:>7}{r['tokens_in']:>11}{r['tokens_out']:>12}{r['seconds']:>9.1f}{est}")
        print("  (optimizer step: verdicts = prompts edited, no-verdicts = steps with no edit)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memtrace", required=True)
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--only", help="comma list of: methods, counterfactual, optimizer")
    args = ap.parse_args()
    r = Runner(args)
    only = set(args.only.split(",")) if args.only else {"methods", "counterfactual", "optimizer"}
    for part in ("methods", "counterfactual", "optimizer"):
        if part in only:
            getattr(r, part)()
    r.summary()
    if r.failures:
        print("\nFAILED:\n  " + "\n  ".join(r.failures))
        return 1
    print("\nreal-LLM runs: all ended with a verdict or a stated reason")
    return 0


if __name__ == "__main__":
    sys.exit(main())
