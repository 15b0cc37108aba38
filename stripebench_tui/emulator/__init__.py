"""Offline Stripe API emulator: ``with EmulatorServer(seed=1) as emu: stripe.api_base = emu.url``."""

from stripebench_tui.emulator.engine import Emulator
from stripebench_tui.emulator.server import EmulatorServer, running_emulator

__all__ = ["Emulator", "EmulatorServer", "running_emulator"]
