"""The Trace API against the CLI's JSON: info, roles, story, decisive set, exports, errors,
progress, an LLM method through a real HTTP server, and help()."""

from __future__ import annotations

import io
import json
import pydoc
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

import memtrace
from conftest import ROOT, run_cli, without_wall_time

SMART = ROOT / "tests" / "fixtures" / "smartcomment" / "mem0_commented.json"
OTLP = ROOT / "tests" / "fixtures" / "otlp" / "mem0_openinference.jsonl"


def test_load_from_path_bytes_and_file_object_agree() -> None:
    a = memtrace.load(SMART).info()
    b = memtrace.load(SMART.read_bytes(), name=str(SMART)).info()
    with open(SMART, "rb") as f:
        c = memtrace.load(f).info()
    d = memtrace.load(io.BytesIO(SMART.read_bytes()), name=str(SMART)).info()
    assert a == b == c == d
    assert a.failures >= 1 and a.operations > 0


@pytest.mark.parametrize("path", [SMART, OTLP])
def test_info_roles_story_equal_the_cli(path: Path) -> None:
    trace = memtrace.load(path)
    (info,) = run_cli("info", "--json", str(path)) or pytest.fail("cli info failed")
    assert trace.info().to_dict() == info
    assert [r.to_dict() for r in trace.roles()] == run_cli("roles", "--json", str(path))
    cases = trace.cases()
    assert cases, f"{path} has no failed case"
    stories = run_cli("story", "--json", str(path)) or []
    assert [trace.story(c.query_id).to_dict() for c in cases] == stories


def test_decisive_set_equals_the_cli() -> None:
    trace = memtrace.load(SMART)
    rows = run_cli("attribute", "--json", "--decisive-set", str(SMART)) or []
    sets = rows[1::2]
    assert sets and [trace.decisive_set(c.query_id).to_dict() for c in trace.cases()] == sets


@pytest.mark.parametrize("path", [SMART, OTLP])
def test_verify_equals_the_cli(path: Path) -> None:
    got = [v.to_dict() for v in memtrace.load(path).attribute(verify=True)]
    assert got and all("counterfactual" in v for v in got)
    assert without_wall_time(got) == without_wall_time(run_cli("attribute", "--json", "--verify", str(path)) or [])


def test_verdict_dataclass_round_trips_and_exports_use_it() -> None:
    trace = memtrace.load(SMART)
    (v,) = trace.attribute()
    assert v.ok and v.error_type and v.cost is not None and v.question.id == v.case_id
    assert json.loads(v.to_json()) == v.to_dict()
    assert memtrace.Verdict.from_dict(v.to_dict()) == v
    results = json.loads(trace.export("results"))
    assert json.dumps(results).count(v.op_id) >= 1
    assert v.case_id in trace.export("csv")
    assert v.op_id in trace.export("annotations")
    assert v.op_name in trace.export("markdown") and "<html" in trace.export("html").lower()
    again = memtrace.load(trace.export("smartcomment").encode())
    assert again.info().operations == trace.info().operations


def test_errors_carry_the_js_kinds() -> None:
    with pytest.raises(memtrace.MemtraceError) as e:
        memtrace.load(b'{"data": {"nodes": [')
    assert e.value.kind == "json" and e.value.line == 1 and e.value.column and e.value.hint
    with pytest.raises(memtrace.MemtraceError) as e:
        memtrace.load(b'{"hello": 1}')
    assert e.value.kind == "unknown_format"
    trace = memtrace.load(SMART)
    for call in (lambda: trace.story("nope"), lambda: trace.attribute(case="nope")):
        with pytest.raises(memtrace.MemtraceError) as e:
            call()
        assert e.value.kind == "not_found"
    with pytest.raises(memtrace.MemtraceError) as e:
        trace.attribute("graphtrace")
    assert e.value.kind == "argument" and "provider" in e.value.hint
    with pytest.raises(memtrace.MemtraceError) as e:
        memtrace.load(SMART, failed_if=["span=x output~("])
    assert e.value.kind == "rule"
    with pytest.raises(memtrace.MemtraceError) as e:
        memtrace.load(ROOT / "no-such-file.json")
    assert e.value.kind == "io"
    assert set(memtrace.KINDS) >= {"json", "field", "unknown_format", "not_found", "provider"}


def test_max_bytes_lowers_and_raises_the_largest_file() -> None:
    size = SMART.stat().st_size
    # Bytes are refused by the core; a path before it is read.
    for source in (SMART.read_bytes(), SMART):
        with pytest.raises(memtrace.MemtraceError) as e:
            memtrace.load(source, max_bytes=size - 1)
        assert e.value.kind == "too_large"
        assert f"({size} bytes)" in e.value.message
        assert "max_bytes=" in e.value.hint
        assert memtrace.load(source, max_bytes=size).info().operations > 0
    for bad in (0, -1, "2G", 1.5, True):
        with pytest.raises(memtrace.MemtraceError) as e:
            memtrace.load(SMART, max_bytes=bad)  # type: ignore[arg-type]
        assert e.value.kind == "argument"


def test_progress_is_called_after_each_case_from_the_released_thread() -> None:
    trace = memtrace.load(OTLP)
    seen: List[Tuple[int, int, int]] = []
    verdicts = trace.attribute(progress=lambda done, total: seen.append((done, total, threading.get_ident())))
    n = len(trace.cases())
    assert n >= 1 and len(verdicts) == n
    assert [(d, t) for d, t, _ in seen] == [(i + 1, n) for i in range(n)]


def test_a_failing_progress_callback_raises_after_the_run() -> None:
    def boom(done: int, total: int) -> None:
        raise KeyError("stop")

    with pytest.raises(KeyError):
        memtrace.load(SMART).attribute(progress=boom)


def test_help_shows_the_parameters() -> None:
    text = pydoc.render_doc(memtrace.Trace.attribute, renderer=pydoc.plaintext)
    for word in ("method", "case", "provider", "hint_infoflow", "prior", "max_iterations", "roles", "progress"):
        assert f"{word}:" in text or f"{word}=" in text, word
    assert "graphtrace" in text and "progress(done, total)" in text


@pytest.fixture(scope="module")
def llm_server() -> Iterator[str]:
    p = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "llm_server" / "server.py"), "--port", "0"],
        stdout=subprocess.PIPE, text=True,
    )
    assert p.stdout is not None
    line = p.stdout.readline()
    assert line.startswith("LISTENING"), line
    yield f"http://127.0.0.1:{line.split()[1]}/v1"
    p.terminate()
    p.wait(timeout=10)


def test_graphtrace_through_an_openai_compatible_server_equals_the_cli(llm_server: str) -> None:
    provider = memtrace.Provider(base_url=llm_server, model="auto", api_key="test-key", concurrency=1)
    got = [v.to_dict() for v in memtrace.load(SMART).attribute("graphtrace", provider=provider)]
    assert got and all("error" not in v for v in got), got
    assert got[0]["cost"]["llm_calls"] >= 1
    want = run_cli("attribute", "--json", "--method", "graphtrace", "--provider", "openai",
                   "--base-url", llm_server, "--model", "auto", "--concurrency", "1", str(SMART))
    assert want is not None and without_wall_time(got) == without_wall_time(want)
    bad = memtrace.Provider(base_url=llm_server.replace("/v1", "/_fault/401/v1"), model="auto", max_retries=0)
    (v,) = memtrace.load(SMART).attribute("graphtrace", provider=bad)
    assert not v.ok and "401" in (v.error or "")


def test_the_gil_is_released_during_load_and_attribute() -> None:
    """While another thread loads and attributes a real trace, this thread keeps running: the
    longest pause between its steps is far shorter than the native work."""
    lab = ROOT / "tests" / "data" / "lab" / "mem0ai" / "openinference" / "26.pb.gz"
    data = lab.read_bytes()
    done = threading.Event()
    spans: List[float] = []

    def work() -> None:
        t0 = time.perf_counter()
        memtrace.load(data).attribute()  # two native calls of similar length
        spans.append(time.perf_counter() - t0)
        done.set()

    worker = threading.Thread(target=work)
    ticks = [time.perf_counter()]
    worker.start()
    while not done.is_set():
        time.sleep(0.001)
        ticks.append(time.perf_counter())
    worker.join()
    longest = max(b - a for a, b in zip(ticks, ticks[1:]))
    assert spans[0] > 0.15, f"too little native work to tell ({spans[0]:.3f} s)"
    # With the GIL held, this thread would wait out the longer call: over half the span.
    assert longest < spans[0] / 4, f"this thread paused {longest:.3f} s of {spans[0]:.3f} s"


def test_annotations_merge_as_the_cli_does() -> None:
    lab = ROOT / "tests" / "data" / "lab" / "mem0ai" / "openinference"
    trace = memtrace.load(lab / "26.pb.gz", annotations=lab / "26.annotations.json")
    want = run_cli("attribute", "--json", str(lab / "26.pb.gz"), "--annotations", str(lab / "26.annotations.json"))
    assert want and without_wall_time([v.to_dict() for v in trace.attribute()]) == without_wall_time(want)
    assert trace.info().annotations > 0 and any(c.annotation for c in trace.cases())
    with pytest.raises(memtrace.MemtraceError) as e:
        memtrace.load(SMART, annotations=lab / "26.annotations.json")
    assert e.value.kind == "argument" and "annotations" in e.value.message



def test_a_saved_bundle_opens_as_the_cli_reads_it(tmp_path: Path) -> None:
    # Two traces; the page had the second on screen when it saved them.
    locomo = ROOT / "tests" / "fixtures" / "smartcomment" / "locomo" / "locomo_locomo-2.json"
    bundle = {
        "memtrace_bundle": 1,
        "traces": [{"name": "a.json", "content": SMART.read_text()},
                   {"name": "b.json", "content": locomo.read_text()}],
        "settings": {"current": "b.json"},
    }
    path = tmp_path / "project.memtrace.json"
    path.write_text(json.dumps(bundle))
    trace = memtrace.load(path)
    assert trace.info().file == f"{path}:b.json"
    want = run_cli("attribute", "--json", str(path)) or pytest.fail("cli attribute failed")
    got = [v.to_dict() for v in trace.attribute()]
    # The CLI attributes every trace of the bundle, in order; Python the one on screen.
    assert got and without_wall_time(got) == without_wall_time(want[-len(got):])
    assert len(want) > len(got)
