"""Environment images: built on the base image, cached by a content hash.

An environment image holds what its episodes need at run time, baked in at build
time (an episode never installs anything): a venv at /opt/venv with the packages
our shell and files tool servers import, the stripe SDK for the seed script, and
the environment's requirements (the manifest's ``requirements``, see ``envs.deps``),
installed last so their pins win. stripebench's own source is mounted read-only at
run time (``/opt/stripebench``), so the tool servers run inside the container.

An environment may declare ``[docker] dockerfile``: it is built first (context: the
environment directory, ``ARG BASE_IMAGE`` given), and the layer above is added on
top of it. The tag is ``stripebench/env-<id>:<hash>``, the hash covering the
environment's files, the base image id, our version and the generated Dockerfile,
so an unchanged environment is never rebuilt.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import tarfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stripebench_tui import __version__
from stripebench_tui.envs.deps import cache_root, requirements_file
from stripebench_tui.envs.manifest import Environment
from stripebench_tui.errors import RuntimeProblem
from stripebench_tui.runtime.docker_engine import BASE_IMAGE_VAR, DEFAULT_BASE_IMAGE, base_image_name
from stripebench_tui.shared_cache import locked

if TYPE_CHECKING:  # docker is loaded when a Docker sandbox is used
    from docker import DockerClient

IMAGE_REPO = "stripebench/env-"
SKIP_DIRS = {"__pycache__", ".venv", "node_modules", ".git"}


def _pins() -> list[str]:
    """What our in-container tool servers and the seed script import, at this interpreter's versions."""
    pins = []
    for name in ("mcp", "stripe"):
        try:
            pins.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            pins.append(name)
    return pins


def build_ca_bundle() -> Path | None:
    """The CA bundle pip uses during image builds: this machine's (it may trust a proxy's CA), if there is one."""
    for candidate in (os.environ.get("STRIPEBENCH_BUILD_CA"), os.environ.get("PIP_CERT"),
                      os.environ.get("SSL_CERT_FILE"), "/etc/ssl/certs/ca-certificates.crt"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def generated_dockerfile(base: str, has_requirements: bool, has_ca: bool = False) -> str:
    """The Dockerfile layer stripebench adds on top of ``base``."""
    pip = "/opt/venv/bin/pip install --no-cache-dir --disable-pip-version-check -q"
    if has_ca:  # build time only: the image itself keeps its own CA store
        pip = f"PIP_CERT=/opt/stripebench-env/build-ca.crt {pip}"
    lines = [f"FROM {base}"]
    if has_ca:
        lines.append("COPY build-ca.crt /opt/stripebench-env/build-ca.crt")
    # One layer shared by every environment: the tool servers' and the seed script's packages.
    lines.append(f"RUN python3 -m venv /opt/venv && {pip} {' '.join(_pins())}")
    if has_requirements:
        lines += ["COPY requirements.txt /opt/stripebench-env/requirements.txt",
                  f"RUN {pip} -r /opt/stripebench-env/requirements.txt"]
    lines += ["ENV PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \\",
              "    PYTHONPATH=/opt/stripebench PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 LANG=C.UTF-8"]
    return "\n".join(lines) + "\n"


def _env_files(env: Environment) -> list[Path]:
    files = []
    for path in sorted(env.root.rglob("*")):
        rel = path.relative_to(env.root)
        if path.is_file() and not SKIP_DIRS & set(rel.parts):
            files.append(path)
    return files


def content_hash(env: Environment, base_id: str) -> str:
    """The cache key of an environment's image."""
    digest = hashlib.sha256()
    digest.update(f"stripebench {__version__}\nbase {base_id}\n".encode())
    req = _requirements(env)
    digest.update(generated_dockerfile("BASE", req is not None).encode())
    if req is not None:  # the requirements may live outside the environment directory's hashed files
        digest.update(b"requirements\0" + req.read_bytes() + b"\0")
    for path in _env_files(env):
        digest.update(str(path.relative_to(env.root)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _requirements(env: Environment) -> Path | None:
    return requirements_file(env)


def image_tag(env: Environment, base_id: str) -> str:
    """``stripebench/env-<id>:<hash>``."""
    return f"{IMAGE_REPO}{env.id}:{content_hash(env, base_id)}"


def _context(dockerfile: str, files: dict[str, bytes]) -> io.BytesIO:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in {"Dockerfile": dockerfile.encode(), **files}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


def _build(client: DockerClient, tag: str, progress: Callable[[str], None], **kwargs: Any) -> None:
    """Run one build, streaming its steps to ``progress``; RuntimeProblem naming the failing step."""
    last, output = "", list[str]()
    try:
        for chunk in client.api.build(tag=tag, rm=True, forcerm=True, decode=True, network_mode="host", **kwargs):
            if "error" in chunk:
                said = " | ".join(line for line in output[-3:] if line)[:400]
                raise RuntimeProblem(f"image build failed for {tag} at {last[:120] or 'the start'}: "
                                     f"{chunk['error'].strip()}" + (f" (output: {said})" if said else ""))
            text = str(chunk.get("stream", "")).strip()
            if text.startswith("Step "):
                last, output = text, []
                progress(text)
            elif text:
                output += text.splitlines()
    except RuntimeProblem:
        raise
    except Exception as exc:  # noqa: BLE001 - API errors (bad Dockerfile, engine gone)
        raise RuntimeProblem(f"image build failed for {tag}: {str(exc).splitlines()[0][:300]}") from None


def ensure_image(client: DockerClient, env: Environment, progress: Callable[[str], None] = print,
                 force: bool = False) -> tuple[str, bool]:
    """The environment's image tag, built when missing (or ``force``); returns (tag, built)."""
    base = base_image_name()
    try:
        base_image = client.images.get(base)
    except Exception:  # noqa: BLE001 - ImageNotFound or the engine's own error
        if base == DEFAULT_BASE_IMAGE:
            raise RuntimeProblem(f"the base image {base} is not in the engine: run `stripebench images bootstrap`") from None
        progress(f"pulling the base image {base}")
        try:
            base_image = client.images.pull(base)
        except Exception as exc:  # noqa: BLE001 - no registry, unknown image
            raise RuntimeProblem(f"the base image {base} is not in the engine and could not be pulled "
                                 f"({str(exc).splitlines()[0][:200]}); pull it, or unset {BASE_IMAGE_VAR} and run "
                                 "`stripebench images bootstrap`") from None
    tag = image_tag(env, base_image.id)
    if not force and _has_image(client, tag):
        return tag, False
    # One build of a tag at a time across processes (batch workers start the same environment at once): the
    # others wait, then find the tag; the engine tags an image only once its build succeeded.
    lock = cache_root() / "images" / f".{tag.replace('/', '_').replace(':', '_')}.lock"
    with locked(lock, lambda: progress(f"waiting for another run that is building {tag}")):
        if not force and _has_image(client, tag):
            return tag, False
        _build_image(client, env, base, tag, progress)
    return tag, True


def _has_image(client: DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
        return True
    except Exception:  # noqa: BLE001 - ImageNotFound or the engine's own error
        return False


def _build_image(client: DockerClient, env: Environment, base: str, tag: str, progress: Callable[[str], None]) -> None:
    below = base
    if env.manifest.docker.dockerfile:
        dockerfile = env.path(env.manifest.docker.dockerfile)
        if not dockerfile.is_file():
            raise RuntimeProblem(f"{env.root / 'environment.toml'}: docker.dockerfile: {dockerfile} does not exist")
        below = tag + "-own"
        progress(f"building {env.id}'s own Dockerfile on {base}")
        _build(client, below, progress, path=str(env.root), dockerfile=str(dockerfile.relative_to(env.root)),
               buildargs={"BASE_IMAGE": base})
    req = _requirements(env)
    files = {"requirements.txt": req.read_bytes()} if req else {}
    ca = build_ca_bundle()
    if ca is not None:
        files["build-ca.crt"] = ca.read_bytes()
    progress(f"building {tag} on {below}")
    _build(client, tag, progress, fileobj=_context(generated_dockerfile(below, req is not None, ca is not None), files),
           custom_context=True)


def remove_old_images(client: DockerClient, env: Environment, keep: str) -> list[str]:
    """Remove this environment's images other than ``keep`` (older hashes); returns their tags."""
    removed = []
    for image in client.images.list(name=f"{IMAGE_REPO}{env.id}"):
        for tag in image.tags:
            if tag != keep and re.match(rf"^{re.escape(IMAGE_REPO + env.id)}:[0-9a-f]+(-own)?$", tag):
                try:
                    client.images.remove(tag)
                    removed.append(tag)
                except Exception:  # noqa: BLE001 - still used by a container, say
                    pass
    return removed


__all__ = ["content_hash", "ensure_image", "generated_dockerfile", "image_tag", "remove_old_images"]
