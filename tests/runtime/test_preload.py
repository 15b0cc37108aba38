"""The Stripe preloads: real SDKs in child processes of their own find the emulator without reading a base URL.

Python (stripe-python, installed here) and Node (stripe-node 23 from npm) are driven for real; the Ruby gem cannot
be installed on this machine (RubyGems is not reachable), so the Ruby preload is loaded by Debian's ruby against a
stand-in ``Stripe`` module shaped like the gem's (``api_base=`` delegated to a configuration set up in the
module's body, ``StripeClient.new(key, api_base: …)``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stripebench_emulator.testing import TEST_KEY, emulator, emulator_server, stripe_client  # noqa: F401 - pytest fixtures, requested by name below
from stripebench_tui.envs.catalog import find_environment
from stripebench_tui.preload import PRELOAD_DIR, preload_env

PY_APP = """
import importlib.util, json
assert importlib.util.find_spec("stripe") is not None  # a look without an import (as tools do) uses nothing up
import stripe
stripe.api_key = {key!r}
module_level = stripe.Customer.create(email="module@example.com").id
client = stripe.StripeClient({key!r})
with_client = client.v1.customers.create(params={{"email": "client@example.com"}}).id
print(json.dumps({{"api_base": stripe.api_base, "module_level": module_level, "with_client": with_client,
                  "is_client": isinstance(client, stripe.StripeClient), "name": type(client).__name__}}))
"""


def _env(base: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NODE_OPTIONS", "RUBYOPT")}
    env["STRIPE_API_BASE"] = base
    env.update(preload_env(env))
    env.update(extra)
    return env


def _run(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> dict:
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_variables_extend_what_is_there_once_and_nothing_for_real_stripe():
    assert preload_env({"STRIPE_API_BASE": "", "PYTHONPATH": "/x"}) == {}
    env = {"STRIPE_API_BASE": "http://127.0.0.1:9", "PYTHONPATH": "/app", "NODE_OPTIONS": "--max-old-space-size=512",
           "RUBYOPT": "-W0"}
    added = preload_env(env)
    assert added["PYTHONPATH"] == f"{PRELOAD_DIR / 'python'}{os.pathsep}/app"
    assert added["NODE_OPTIONS"] == f"--max-old-space-size=512 --require {PRELOAD_DIR / 'node/stripe-preload.cjs'}"
    assert added["RUBYOPT"] == f"-W0 -r{PRELOAD_DIR / 'ruby/stripebench_stripe_preload.rb'}"
    again = preload_env({**env, **added})  # a process environment built from one that already has them
    assert again == {"PYTHONPATH": added["PYTHONPATH"]}
    inside = preload_env({"STRIPE_API_BASE": "http://127.0.0.1:9"}, root="/opt/s/preload", pythonpath="/opt/s")
    assert inside["PYTHONPATH"] == "/opt/s/preload/python:/opt/s"
    assert inside["NODE_OPTIONS"] == "--require /opt/s/preload/node/stripe-preload.cjs"


def test_both_sandboxes_give_the_preloads_only_when_the_environment_asks(tmp_path: Path) -> None:
    from stripebench_tui.runtime.docker_sandbox import PACKAGE_MOUNT, DockerSandbox
    from stripebench_tui.runtime.local import LocalSandbox

    stripe_vars = {"STRIPE_API_BASE": "http://127.0.0.1:9", "STRIPE_SECRET_KEY": "sk_test_x"}
    on = find_environment(str(Path(__file__).resolve().parents[1] / "fixtures" / "preload_envs" / "preload-flask"))
    off = find_environment("tiny-shop")
    assert on.manifest.stripe_preload and not off.manifest.stripe_preload
    local = LocalSandbox(on, tmp_path / "a", stripe_vars).process_env()
    assert local["PYTHONPATH"].split(os.pathsep)[0].endswith("stripebench_tui/preload/python")
    assert "stripe-preload.cjs" in local["NODE_OPTIONS"] and "stripebench_stripe_preload.rb" in local["RUBYOPT"]
    inside = DockerSandbox(on, tmp_path / "b", stripe_vars).container_env()
    assert inside["PYTHONPATH"] == f"{PACKAGE_MOUNT}/stripebench_tui/preload/python:{PACKAGE_MOUNT}"
    assert inside["NODE_OPTIONS"] == f"--require {PACKAGE_MOUNT}/stripebench_tui/preload/node/stripe-preload.cjs"
    for env in (LocalSandbox(off, tmp_path / "c", stripe_vars).process_env(),
                DockerSandbox(off, tmp_path / "d", stripe_vars).container_env(),
                LocalSandbox(on, tmp_path / "e", {**stripe_vars, "STRIPE_API_BASE": ""}).process_env()):
        assert "NODE_OPTIONS" not in env and "RUBYOPT" not in env
        assert "preload/python" not in env.get("PYTHONPATH", "")


def test_python_app_reaches_the_emulator_through_module_api_and_stripe_client(emulator, stripe_client):  # noqa: F811 - pytest fixtures imported above, requested by name
    result = _run([sys.executable, "-c", PY_APP.format(key=TEST_KEY)], _env(emulator.url))
    assert result["api_base"] == emulator.url and result["is_client"] and result["name"] == "StripeClient"
    emails = {c.id: c.email for c in stripe_client.v1.customers.list().data}
    assert emails == {result["module_level"]: "module@example.com", result["with_client"]: "client@example.com"}


def test_python_app_settings_win_and_real_stripe_is_untouched(emulator, stripe_client):  # noqa: F811 - pytest fixtures imported above, requested by name
    # The preload points at a closed port; the app's own base_addresses (the emulator) must be what is used.
    script = ("import json, stripe\n"
              f"c = stripe.StripeClient({TEST_KEY!r}, base_addresses={{'api': {emulator.url!r}}}, max_network_retries=0)\n"
              "print(json.dumps({'id': c.v1.customers.create(params={'email': 'own@example.com'}).id}))\n")
    own = _run([sys.executable, "-c", script], _env("http://127.0.0.1:9"))
    assert stripe_client.v1.customers.retrieve(own["id"]).email == "own@example.com"
    untouched = "import json, stripe; print(json.dumps({'base': stripe.api_base, 'hooks': len(__import__('sys').meta_path)}))"
    plain = _run([sys.executable, "-c", untouched], {**os.environ, "STRIPE_API_BASE": ""})
    preloaded = _run([sys.executable, "-c", untouched],
                     {**os.environ, "STRIPE_API_BASE": "", "PYTHONPATH": str(PRELOAD_DIR / "python")})
    assert preloaded == plain and plain["base"] == "https://api.stripe.com"


def test_the_shadowed_sitecustomize_still_runs(tmp_path):
    other = tmp_path / "site"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import os\nos.environ['OTHER_SITECUSTOMIZE'] = 'ran'\n")
    env = _env("http://127.0.0.1:9")
    env["PYTHONPATH"] = f"{env['PYTHONPATH']}{os.pathsep}{other}"
    probe = "import json, os; print(json.dumps(os.environ.get('OTHER_SITECUSTOMIZE')))"
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=30)
    assert json.loads(done.stdout) == "ran", done.stderr


NODE_CJS = """
const Stripe = require('stripe');
const { isProxy } = require('node:util').types;
(async () => {
  const viaNew = await new Stripe(process.env.KEY).customers.create({ email: 'new@example.com' });
  const viaCall = await Stripe(process.env.KEY).customers.create({ email: 'call@example.com' });
  console.log(JSON.stringify({ ids: [viaNew.id, viaCall.id], proxy: isProxy(Stripe), webhooks: typeof Stripe.webhooks }));
})().catch((e) => { console.error(e); process.exit(1); });
"""
NODE_ESM = """
import Stripe, { Stripe as Named } from 'stripe';
const a = await new Stripe(process.env.KEY).customers.create({ email: 'esm@example.com' });
const b = await new Named(process.env.KEY).customers.create({ email: 'named@example.com' });
console.log(JSON.stringify({ ids: [a.id, b.id] }));
"""


@pytest.fixture(scope="module")
def node_app(tmp_path_factory) -> Path:
    """An app directory whose node_modules holds stripe-node from npm."""
    from tests.emulator.test_node_sdk import _stripe_node

    assert shutil.which("node") and shutil.which("npm"), "Node.js and npm are part of this machine's setup"
    app = tmp_path_factory.mktemp("node-app")
    (app / "node_modules").symlink_to(_stripe_node() / "node_modules")
    (app / "app.cjs").write_text(NODE_CJS)
    (app / "app.mjs").write_text(NODE_ESM)
    return app


@pytest.mark.node
@pytest.mark.slow
def test_node_app_require_and_import_reach_the_emulator(node_app, emulator, stripe_client):  # noqa: F811 - pytest fixtures imported above, requested by name
    env = _env(emulator.url, KEY=TEST_KEY)
    cjs = _run(["node", "app.cjs"], env, cwd=node_app)
    esm = _run(["node", "app.mjs"], env, cwd=node_app)
    assert cjs["proxy"] is True and cjs["webhooks"] == "object"
    emails = {c.id: c.email for c in stripe_client.v1.customers.list().data}
    assert [emails[i] for i in cjs["ids"] + esm["ids"]] == ["new@example.com", "call@example.com",
                                                             "esm@example.com", "named@example.com"]
    # against real Stripe the preload file may still be there (NODE_OPTIONS of an older shell): it wraps nothing
    probe = "console.log(JSON.stringify({proxy: require('node:util').types.isProxy(require('stripe'))}))"
    real = {**env, "STRIPE_API_BASE": ""}
    assert _run(["node", "-e", probe], real, cwd=node_app) == {"proxy": False}


RUBY_APP = """
require "json"
# A stand-in shaped like the stripe gem: api_base= delegates to a configuration the module body sets up last.
module Stripe
  class Configuration
    attr_accessor :api_base
  end

  class << self
    def api_base=(value)
      @config.api_base = value
    end

    def api_base
      @config.api_base
    end
  end
end

module Stripe
  @config = Configuration.new
  @config.api_base = "https://api.stripe.com"
end

module Stripe
  class StripeClient
    attr_reader :api_base

    def initialize(api_key, stripe_version: nil, api_base: nil)
      @api_key = api_key
      @api_base = api_base
    end
  end
end

puts JSON.generate(module_level: Stripe.api_base, client: Stripe::StripeClient.new("sk_test_x").api_base,
                   own: Stripe::StripeClient.new("sk_test_x", api_base: "http://mine").api_base)
"""


def test_ruby_preload_sets_the_gems_api_base_and_client_default(tmp_path):
    assert shutil.which("ruby"), "Debian's ruby is part of this machine's setup (scripts/setup.sh)"
    app = tmp_path / "app.rb"
    app.write_text(RUBY_APP)
    assert _run(["ruby", str(app)], _env("http://127.0.0.1:4242")) == {
        "module_level": "http://127.0.0.1:4242", "client": "http://127.0.0.1:4242", "own": "http://mine"}
    untouched = {**os.environ, "STRIPE_API_BASE": "", "RUBYOPT": f"-r{PRELOAD_DIR / 'ruby/stripebench_stripe_preload.rb'}"}
    assert _run(["ruby", str(app)], untouched) == {"module_level": "https://api.stripe.com", "client": None,
                                                    "own": "http://mine"}


def test_ruby_preload_configures_a_gem_required_before_it(tmp_path):
    """`ruby -rstripe -e …` requires the gem before RUBYOPT's -r (the command line's first): configured at once."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "stripe.rb").write_text(RUBY_APP[:RUBY_APP.index("puts JSON.generate")])
    script = 'puts JSON.generate(module_level: Stripe.api_base, client: Stripe::StripeClient.new("sk_test_x").api_base)'
    assert _run(["ruby", "-I", str(lib), "-rjson", "-rstripe", "-e", script], _env("http://127.0.0.1:4242")) == {
        "module_level": "http://127.0.0.1:4242", "client": "http://127.0.0.1:4242"}


def test_a_graders_process_on_this_machine_gets_the_preloads_too(tmp_path, emulator, stripe_client):  # noqa: F811 - pytest fixtures imported above, requested by name
    from stripebench_tui.grading.context import ThisMachine

    env = find_environment(str(Path(__file__).resolve().parents[1] / "fixtures" / "preload_envs" / "preload-flask"))
    host = ThisMachine({"STRIPE_API_BASE": emulator.url, "STRIPE_SECRET_KEY": TEST_KEY}, env)
    script = ("import os, stripe; stripe.api_key = os.environ['STRIPE_SECRET_KEY']; "
              "print(stripe.Customer.create(email='grader@example.com').id)")
    log = tmp_path / "grader.log"
    with log.open("wb") as out:
        assert host.start_process(f"{sys.executable} -c \"{script}\"", cwd=tmp_path, env={}, log=out).wait(60) == 0
    created = log.read_text().strip().splitlines()[-1]
    assert stripe_client.v1.customers.retrieve(created).email == "grader@example.com"


RUBY_RAW_HTTP = """
require "net/http"
require "json"
uri = URI("https://api.stripe.com/v1/customers")
http = Net::HTTP.new(uri.host, uri.port)
http.use_ssl = true
post = Net::HTTP::Post.new(uri)
post.set_form_data("email" => "raw@example.com")
post["Authorization"] = "Bearer #{ENV['STRIPE_SECRET_KEY']}"
made = JSON.parse(http.request(post).body)
elsewhere = Net::HTTP.new("example.com", 443)
puts JSON.generate("id" => made["id"], "elsewhere" => [elsewhere.address, elsewhere.port])
"""


def test_ruby_preload_points_raw_net_http_calls_to_api_stripe_com_at_the_base(tmp_path, emulator, stripe_client):  # noqa: F811 - pytest fixtures imported above, requested by name
    """subscription-gym's challenges.rb calls https://api.stripe.com with Net::HTTP itself, not through the gem."""
    app = tmp_path / "raw.rb"
    app.write_text(RUBY_RAW_HTTP)
    got = _run(["ruby", str(app)], _env(emulator.url, STRIPE_SECRET_KEY=TEST_KEY))
    assert stripe_client.v1.customers.retrieve(got["id"]).email == "raw@example.com"
    assert got["elsewhere"] == ["example.com", 443]  # other hosts are left alone


RUBY_TWO_CALLS = """
require "net/http"
require "json"
a = Net::HTTP.new("api.stripe.com", 443)
a.use_ssl = true
a.request(Net::HTTP::Get.new("/v1/customers"))
base = URI(ENV["STRIPE_API_BASE"])
Net::HTTP.new(base.host, base.port).request(Net::HTTP::Get.new("/v1/charges"))
puts JSON.generate("ok" => true)
"""


def test_a_graders_ruby_requests_say_they_are_the_graders(tmp_path):
    """STRIPEBENCH_REQUEST_SOURCE (set for a grader's process) puts X-Stripebench-Source on every request to the
    base, so the request log does not take a grader's own setup for the app's; without it nothing is added."""
    import http.server
    import threading

    from stripebench_tui.core.events import SOURCE_HEADER
    from stripebench_tui.preload import REQUEST_SOURCE_VAR

    seen: list[tuple[str, str | None]] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the handler's protocol
            seen.append((self.path, self.headers.get(SOURCE_HEADER)))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        app = tmp_path / "calls.rb"
        app.write_text(RUBY_TWO_CALLS)
        base = f"http://127.0.0.1:{server.server_address[1]}"
        _run(["ruby", str(app)], _env(base, **{REQUEST_SOURCE_VAR: "grader"}))
        assert seen == [("/v1/customers", "grader"), ("/v1/charges", "grader")]
        seen.clear()
        _run(["ruby", str(app)], _env(base))
        assert seen == [("/v1/customers", None), ("/v1/charges", None)]
    finally:
        server.shutdown()
