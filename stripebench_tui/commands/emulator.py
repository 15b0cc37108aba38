"""``stripebench emulator``: run the offline Stripe API emulator in the foreground."""

from __future__ import annotations

import typer

from stripebench_tui.errors import UserError


def register(app: typer.Typer) -> None:
    """Add the ``emulator`` command to the CLI."""

    @app.command("emulator")
    def emulator(
        host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
        port: int = typer.Option(12111, "--port", min=0, max=65535, help="Port to listen on (0 = any free port)."),
        seed: int | None = typer.Option(None, "--seed", help="Seed for object ids: same seed + same requests = same ids."),
        state: str | None = typer.Option(None, "--state", help="SQLite file that keeps objects and events across restarts."),
        api_version: str | None = typer.Option(None, "--api-version",
                                                  help="Account default API version (default: the installed stripe SDK's pin)."),
        control_token: str | None = typer.Option(
            None, "--control-token",
            help="Token the /_emulator/ controls require in the Stripebench-Control-Token header "
                 "(default: a fresh one, printed at start)."),
    ) -> None:
        """Run an offline Stripe API that the official SDKs can talk to.

        Point an SDK at it with any test key, e.g. `stripe.api_base = "http://127.0.0.1:12111"` and
        `stripe.api_key = "sk_test_123"`. Example: `stripebench emulator --seed 7 --state /tmp/stripe.db`.
        The emulator's own controls (reset, clock, faults, webhook settings and deliveries under /_emulator/)
        answer only requests with the header `Stripebench-Control-Token: TOKEN`; the token is printed at start.
        """
        from stripebench_emulator import serve_forever  # the emulator (Starlette, uvicorn, stripe) only when it runs

        if control_token is not None and len(control_token.strip()) < 16:
            raise UserError("--control-token must be at least 16 characters (or leave it out to get a fresh one)")
        serve_forever(host, port, seed, state, api_version, announce=lambda line: typer.echo(line, err=True),
                      control_token=control_token.strip() if control_token else None)
