"""An offline Stripe API the official SDKs talk to: ``with running_emulator(seed=1) as emu: stripe.api_base = emu.url``.

The public front: ``Emulator`` (state and request pipeline, no HTTP), ``EmulatorServer`` / ``running_emulator`` (served
on a background thread), ``serve_forever`` (the foreground command), ``save_checkpoint`` / ``restore_checkpoint`` (a
consistent copy of a running emulator's state, and a state file made from one), ``EmulatorProblem`` (what the person running it
can fix), the contract of the hooks code outside registers (``ResponseHook``, the ``HookReply`` it receives,
``DeliveryHook``: model/hooks.py) and ``__version__``. Everything else is the package's own and may change.
"""

from stripebench_emulator.model import compiled

compiled.install()  # before any API module is imported: their compiled builds load while current (see compiled)

from stripebench_emulator.checkpoint import restore_checkpoint, save_checkpoint  # noqa: E402 - after compiled.install()
from stripebench_emulator.model.engine import Emulator  # noqa: E402 - after compiled.install()
from stripebench_emulator.model.hooks import DeliveryHook, HookReply, ResponseHook  # noqa: E402 - after compiled.install()
from stripebench_emulator.model.problems import EmulatorProblem  # noqa: E402 - after compiled.install()
from stripebench_emulator.web.server import EmulatorServer, running_emulator, serve_forever  # noqa: E402 - after compiled.install()

__version__ = "0.1.0"
__all__ = ["DeliveryHook", "Emulator", "EmulatorProblem", "EmulatorServer", "HookReply", "ResponseHook", "__version__",
           "restore_checkpoint", "running_emulator", "save_checkpoint", "serve_forever"]
