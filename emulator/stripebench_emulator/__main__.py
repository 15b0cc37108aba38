"""``stripebench-emulator`` (or ``python -m stripebench_emulator``): serve the emulator, or measure its fidelity.

    stripebench-emulator [--host H] [--port P] [--seed N] [--state FILE] [--api-version V] [--control-token T]
                         [--request-timeout SECONDS]
    stripebench-emulator fidelity     # each object kind against stripe-python's declared fields
"""

from __future__ import annotations

import argparse
import sys

from stripebench_emulator import EmulatorProblem, serve_forever
from stripebench_emulator.model.problems import BadOption
from stripebench_emulator.web.limits import REQUEST_TIMEOUT

MIN_TOKEN = 16


def serve_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stripebench-emulator",
        description="Run an offline Stripe API that the official SDKs can talk to (any sk_test_ key). "
                    "`stripebench-emulator fidelity` measures its objects against stripe-python's declared fields.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=12111, help="port to listen on (0 = any free port; default 12111)")
    parser.add_argument("--seed", type=int, help="seed for object ids: same seed + same requests = same ids")
    parser.add_argument("--state", help="SQLite file that keeps objects and events across restarts")
    parser.add_argument("--api-version", help="account default API version (default: the installed stripe SDK's pin)")
    parser.add_argument("--control-token",
                        help="token the /_emulator/ controls require in the Stripebench-Control-Token header "
                             "(default: a fresh one, printed at start)")
    parser.add_argument("--request-timeout", type=float, default=REQUEST_TIMEOUT, metavar="SECONDS",
                        help="seconds a client has to send a whole request once it starts (and its first one once "
                             f"connected) before its connection is closed (default {REQUEST_TIMEOUT:g})")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["fidelity"]:
        # Only this subcommand needs the gauge (it drives stripe-python against a served emulator).
        from stripebench_emulator.fidelity import main as fidelity_main

        return fidelity_main(argv[1:])
    parser = serve_parser()
    args = parser.parse_args(argv)
    token = args.control_token.strip() if args.control_token is not None else None
    try:
        if not 0 <= args.port <= 65535:
            raise BadOption("--port must be 0..65535")
        if not 0 < args.request_timeout <= 3600:
            raise BadOption("--request-timeout must be more than 0 and at most 3600 seconds")
        if token is not None and len(token) < MIN_TOKEN:
            raise BadOption(f"--control-token must be at least {MIN_TOKEN} characters (or leave it out to get a "
                            "fresh one)")
        serve_forever(args.host, args.port, args.seed, args.state, args.api_version,
                      announce=lambda line: print(line, file=sys.stderr, flush=True), control_token=token,
                      request_timeout=args.request_timeout)
    except EmulatorProblem as exc:
        print(f"stripebench-emulator: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
