"""Offline Stripe API emulator: ``with EmulatorServer(seed=1) as emu: stripe.api_base = emu.url``."""

from stripebench_tui.emulator import compiled

compiled.install()  # before any API module is imported: their compiled builds load while current (see compiled)

from stripebench_tui.emulator.engine import Emulator  # noqa: E402
from stripebench_tui.emulator.server import EmulatorServer, running_emulator  # noqa: E402

__all__ = ["Emulator", "EmulatorServer", "running_emulator"]
