"""Run the model-API gateway on its own: ``python -m stripebench_tui.gateway --base-url URL [--port N] [--events FILE]``.

It prints one line, ``gateway URL KEY`` (the harness's base URL and its dummy key),
then serves until interrupted; with ``--events`` every event it derives is appended
to FILE as a JSON line, with ``--record DIR`` every model response is recorded in DIR
(``gateway.recording``). The upstream key comes from ``--api-key`` or the providers'
usual variables and is never printed (nor recorded).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from stripebench_tui.core.events import Event
from stripebench_tui.core.redact import Redactor
from stripebench_tui.gateway.app import Gateway, GatewayError, Upstream
from stripebench_tui.gateway.exchange_events import EventTap
from stripebench_tui.gateway.recording import ModelRecorder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default=None, help="upstream for both API families (default: the providers' variables)")
    parser.add_argument("--api-key", default=None, help="upstream key (default: ANTHROPIC_API_KEY / OPENAI_API_KEY)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--events", type=Path, default=None, help="append derived events to this file (JSON lines)")
    parser.add_argument("--record", type=Path, default=None, help="record every model response in this directory")
    args = parser.parse_args(argv)
    lock = threading.Lock()
    out = open(args.events, "a", encoding="utf-8") if args.events else None  # closed at exit

    def emit(event: Event, turn: int) -> None:
        if out is not None:
            event.turn = turn
            with lock:
                out.write(json.dumps(event.to_dict()) + "\n")
                out.flush()

    upstream = Upstream.from_env(args.base_url, api_key=args.api_key)
    recorder = None
    if args.record is not None:
        recorder = ModelRecorder(args.record, Redactor(upstream.secrets))
    gateway = Gateway(upstream, EventTap(emit), host=args.host, port=args.port, recorder=recorder)
    try:
        gateway.start()
    except GatewayError as exc:
        print(f"gateway: {exc}", file=sys.stderr)
        return 4
    print(f"gateway {gateway.url} {gateway.dummy_key}", flush=True)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    gateway.stop()
    if out is not None:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
