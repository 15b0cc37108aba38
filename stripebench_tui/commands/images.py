"""``stripebench images``: the Docker images episodes run in (``--sandbox docker``)."""

from __future__ import annotations

import time

import typer

images_app = typer.Typer(help="Docker images for `stripebench run --sandbox docker`: the base image and one per environment.",
                         no_args_is_help=True)


def _progress(start: float):
    def say(text: str) -> None:
        typer.echo(f"[{time.monotonic() - start:5.1f}s] {text}", err=True)
    return say


@images_app.command("bootstrap")
def bootstrap(
    tag: str = typer.Option(None, "--tag",
                            help="Tag of the image (default: $STRIPEBENCH_BASE_IMAGE or stripebench/base:bookworm)."),
    mirror: str = typer.Option(None, "--mirror", help="Debian mirror (default: the one apt uses here)."),
    force: bool = typer.Option(False, "--force", help="Rebuild even if the image exists."),
) -> None:
    """Build the offline base image: a minimal Debian bookworm with Python, made by debootstrap and imported.

    Needs root and debootstrap, but no registry. Does nothing when the image already exists.

    Example: `sudo stripebench images bootstrap`
    """
    # the engine's helpers (tarfile; the docker SDK when connecting) load only when this command runs
    from stripebench_tui.runtime.docker_engine import base_image_name, bootstrap_base_image, connect

    client = connect()
    bootstrap_base_image(client, tag or base_image_name(), force=force, progress=_progress(time.monotonic()),
                         mirror=mirror)


@images_app.command("build")
def build(
    envs: list[str] = typer.Argument(None, metavar="[ENV]...", help="Environment ids or paths (default: every environment)."),
    force: bool = typer.Option(False, "--force", help="Rebuild even when the cached image matches."),
) -> None:
    """Build (or find cached) the image of each environment, on the base image.

    Images are tagged stripebench/env-ID:HASH; an unchanged environment is not rebuilt.

    Example: `stripebench images build checkout-migration`
    """
    # The environments (pydantic) and the image builder load only when this command runs, not at start-up
    from stripebench_tui.envs.catalog import find_environment, list_environments
    from stripebench_tui.runtime.docker_engine import connect
    from stripebench_tui.runtime.docker_images import ensure_image, remove_old_images

    client = connect()
    targets = [find_environment(e) for e in envs] if envs else list_environments()
    start = time.monotonic()
    for env in targets:
        tag, built = ensure_image(client, env, progress=_progress(start), force=force)
        remove_old_images(client, env, keep=tag)
        typer.echo(f"{env.id}: {tag} ({'built' if built else 'cached'})")


def register(app: typer.Typer) -> None:
    """Add ``images`` to the CLI."""
    app.add_typer(images_app, name="images")


__all__ = ["register"]
