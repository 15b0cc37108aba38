"""``stripebench doctor``: check what live episodes need, each problem with how to fix it."""

from __future__ import annotations

import os

import typer

from stripebench_tui.chromium import find_chromium
from stripebench_tui.errors import RuntimeProblem, UserError


def _check_engine() -> tuple[bool, str, object]:
    # the engine's helpers (tarfile; the docker SDK when connecting) load only when doctor runs, not at start-up
    from stripebench_tui.runtime.docker_engine import connect, engine_address

    try:
        client = connect(timeout=10)
    except RuntimeProblem as exc:
        return False, str(exc), None
    version = client.version()
    return True, f"Docker engine {version.get('Version', '?')} at {engine_address()}", client


def _check_base_image(client: object) -> tuple[bool, str]:
    # only when doctor runs, as in _check_engine
    from stripebench_tui.runtime.docker_engine import BASE_IMAGE_VAR, DEFAULT_BASE_IMAGE, base_image_name

    base = base_image_name()
    if client is None:
        return False, f"base image {base}: unknown (no engine)"
    try:
        image = client.images.get(base)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - ImageNotFound or an engine error
        fix = ("run `stripebench images bootstrap` (as root; needs debootstrap)" if base == DEFAULT_BASE_IMAGE
               else f"pull it (`docker pull {base}`) or unset {BASE_IMAGE_VAR}")
        return False, f"base image {base} is missing: {fix}"
    return True, f"base image {base} ({image.short_id}, {image.attrs.get('Size', 0) / 1e6:.0f} MB)"


def _check_chromium() -> tuple[bool, str]:
    exe = find_chromium()
    if exe is None:
        return False, ("Chromium not found (the browser tool needs it): apt-get install chromium, "
                       "or set STRIPEBENCH_CHROMIUM to a Chromium executable")
    return True, f"Chromium at {exe}"


def _check_stripe() -> tuple[bool, str]:
    key = os.environ.get("STRIPE_SECRET_KEY", "")
    if key.startswith(("sk_live_", "rk_live_")):
        return False, "STRIPE_SECRET_KEY is a live key: stripebench refuses it; use your sk_test_ key"
    real = ("; --backend stripe would use your test mode (STRIPE_SECRET_KEY is set)" if key.startswith(("sk_test_", "rk_test_"))
            else "; --backend stripe needs STRIPE_SECRET_KEY (a sk_test_ key)")
    return True, "Stripe backend: emulator (offline, the default)" + real


def _check_environments() -> list[tuple[bool, str]]:
    """One line per environment on its app's dependencies (cached venv ready, built on first run, or failed)."""
    # The environments' manifests (pydantic) load only when doctor runs: cli imports every command at start-up
    from stripebench_tui.envs.catalog import list_environments
    from stripebench_tui.envs.deps import dependencies
    from stripebench_tui.envs.manifest import environments_dir

    try:
        found = list_environments()
    except UserError as exc:
        return [(False, f"environments: {exc}")]
    if not found:
        return [(False, f"no environments in {environments_dir()} (set STRIPEBENCH_ENVIRONMENTS?)")]
    out = []
    for env in found:
        deps = dependencies(env)
        out.append((True, f"{env.id}: no requirements (nothing to install)") if deps is None else deps.describe())
    return out


def _check_toolchains() -> list[tuple[bool | None, str]]:
    """PostgreSQL and Node for the published folders that need them (optional: only those folders fail without)."""
    from stripebench_tui.runtime.toolchains import published_checks  # the runtime's toolchains: only when doctor runs

    return [(True if ok else None, text) for ok, text in published_checks()]


def _check_harnesses() -> list[tuple[bool | None, str]]:
    """One line per known external harness: where it is and its version, or how to install it (optional: no failure)."""
    # the harnesses (the model gateway, Starlette) load only when doctor runs
    from stripebench_tui.harness.harnesses import HARNESSES, harness_status

    out: list[tuple[bool | None, str]] = []
    for name in HARNESSES:
        where, detail = harness_status(name)
        out.append((True, f"harness {name}: {detail} at {where}") if where
                   else (None, f"harness {name}: not installed; {detail}"))
    return out


def doctor(
    no_docker: bool = typer.Option(False, "--no-docker", help="Skip the Docker checks (you only use --sandbox local)."),
) -> None:
    """Check what live episodes need: a Docker engine and the base image (for --sandbox docker), Chromium, the Stripe
    backend, each environment's dependencies (ready, installed on first run, or why the last install failed),
    PostgreSQL and Node for the published folders whose apps need them, and the external agent harnesses
    (installed: where and which version; else the command that installs it).

    Prints one line per check; exits 4 when something required is missing, each line saying how to fix it (a
    harness that is not installed is optional: its line starts with `-`).

    Example: `stripebench doctor`
    """
    results: list[tuple[bool | None, str]] = []
    if not no_docker:
        ok, text, client = _check_engine()
        results.append((ok, text))
        results.append(_check_base_image(client))
        sandbox = os.environ.get("STRIPEBENCH_SANDBOX") or "local"
        results.append((True, f"default sandbox: {sandbox} (--sandbox or $STRIPEBENCH_SANDBOX)"))
    results.append(_check_chromium())
    results.append(_check_stripe())
    results.extend(_check_environments())
    results.extend(_check_toolchains())
    results.extend(_check_harnesses())
    for state, text in results:
        typer.echo(f"{'-   ' if state is None else 'ok  ' if state else 'FAIL'}  {text}")
    failed = sum(1 for ok, _ in results if ok is False)
    if failed:
        typer.echo(f"stripebench doctor: {failed} problem(s) found", err=True)
        raise typer.Exit(4)


def register(app: typer.Typer) -> None:
    """Add ``doctor`` to the CLI."""
    app.command("doctor")(doctor)


__all__ = ["register"]
