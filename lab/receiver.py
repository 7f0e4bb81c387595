"""A local OTLP/HTTP receiver: saves each ExportTraceServiceRequest (and, posted to `/v1/logs`,
each ExportLogsServiceRequest) it is sent, as the raw
protobuf body and as one line of OTLP JSON the way the collector's file exporter writes it
(camelCase keys, hex trace/span ids, enums as integers, 64-bit integers as strings). Bodies are
kept as sent (the lab's exporter gzips them: `Content-Encoding: gzip`).
"""

import base64
import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest, ExportLogsServiceResponse)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest, ExportTraceServiceResponse)


class Sink:
    def __init__(self):
        self.lock = threading.Lock()
        self.bodies = []
        self.logs = []

    def take(self):
        with self.lock:
            out, self.bodies = self.bodies, []
        return out

    def take_logs(self):
        with self.lock:
            out, self.logs = self.logs, []
        return out


SINK = Sink()


def hex_ids(obj):
    """json_format writes bytes as base64; OTLP JSON wants hex for trace and span ids."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str):
                obj[k] = base64.b64decode(v).hex()
            else:
                hex_ids(v)
    elif isinstance(obj, list):
        for v in obj:
            hex_ids(v)
    return obj


def to_json(body, logs=False):
    req = ExportLogsServiceRequest() if logs else ExportTraceServiceRequest()
    req.ParseFromString(gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body)
    return hex_ids(json_format.MessageToDict(req, use_integers_for_enums=True))


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n)
        logs = self.path.rstrip("/").endswith("/logs")
        with SINK.lock:
            (SINK.logs if logs else SINK.bodies).append(body)
        raw = (ExportLogsServiceResponse() if logs else ExportTraceServiceResponse()).SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def start(port=0):
    srv = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv
