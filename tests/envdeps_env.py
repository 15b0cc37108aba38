"""An environment written on the fly for the dependency tests (tests/runtime/test_envdeps.py, tests/tui_live).

A stdlib HTTP app importing ``sbfixture_dep`` (a small wheel ``wheel()`` makes, installed from the environment's
requirements), a seed script that imports it too.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from stripebench_tui.envs.catalog import load_environment
from stripebench_tui.envs.manifest import Environment

VALUE = "hello from the environment's venv"

MANIFEST = """\
id = "{id}"
title = "An app whose package comes from its requirements"
category = "backend"
tools = ["shell"]
{top}
[limits]
max_turns = 5
wall_time = 120

[stripe]
seed = "seed.py"

[[services]]
name = "app"
command = "python app.py"
ports = ["APP_PORT"]
health = {{ http = "http://127.0.0.1:${{APP_PORT}}/health", timeout = 20 }}
"""

APP = """\
import http.server, os
{imports}

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = sbfixture_dep.VALUE.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["APP_PORT"])), Handler).serve_forever()
"""

SEED = "import sbfixture_dep\nopen('seeded.txt', 'w').write(sbfixture_dep.VALUE)\n"


def wheel(folder: Path) -> Path:
    """A minimal pure-Python wheel ``sbfixture_dep 1.0`` (the module has ``VALUE``)."""
    folder.mkdir(parents=True, exist_ok=True)
    dist = "sbfixture_dep-1.0"
    files = {
        "sbfixture_dep.py": f"VALUE = {VALUE!r}\n",
        f"{dist}.dist-info/METADATA": "Metadata-Version: 2.1\nName: sbfixture-dep\nVersion: 1.0\n",
        f"{dist}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in [*files, f"{dist}.dist-info/RECORD"])
    path = folder / f"{dist}-py3-none-any.whl"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in {**files, f"{dist}.dist-info/RECORD": record}.items():
            zf.writestr(name, text)
    path.write_bytes(buf.getvalue())
    return folder


def make_env(root: Path, requirements: str | None, *, env_id: str = "deps-app", app_imports: str = "import sbfixture_dep",
             seed: str = SEED, top: str = "") -> Environment:
    """An environment in ``root/<env_id>``: a stdlib HTTP app importing ``app_imports``, a seed script."""
    env_root = root / env_id
    (env_root / "workspace").mkdir(parents=True)
    (env_root / "PROBLEM.md").write_text("Nothing to do.\n")
    (env_root / "workspace" / "app.py").write_text(APP.format(imports=app_imports))
    if requirements is not None:
        (env_root / "workspace" / "requirements.txt").write_text(requirements)
    (env_root / "seed.py").write_text(seed)
    (env_root / "environment.toml").write_text(MANIFEST.format(id=env_id, top=top))
    return load_environment(env_root)
