"""The whole suite runs the emulator with its ownership checks on (``emulator.store``: a stored object changed in
place after it was saved fails the request), in this process and in the emulators it starts as subprocesses."""

import os

from stripebench_emulator.model.store import CHECKS_VARIABLE

os.environ.setdefault(CHECKS_VARIABLE, "1")


def pytest_collection_modifyitems(items: list) -> None:
    """A test that needs a Docker engine belongs to the long tier (``drill``): `make test` needs no engine."""
    import pytest

    for item in items:
        if item.get_closest_marker("docker") is not None or "docker_client" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.drill)
