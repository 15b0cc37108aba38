"""Ids and time: seeded ids (same seed + same requests gives the same ids) and a controllable clock."""

from __future__ import annotations

import hashlib
import os
import random
import secrets
import string
import threading
import time

_ALPHABET = string.digits + string.ascii_letters
# Random bytes map onto the alphabet through one translate call (fast); 256 % 62 skews a few characters slightly,
# which is harmless for ids.
_TABLE = bytes((_ALPHABET[b % len(_ALPHABET)]).encode()[0] for b in range(256))
ID_LENGTH = 24
# Seeded from os.urandom; a forked child draws its own sequence (as the random module's own generator does).
_RNG = random.Random()
os.register_at_fork(after_in_child=_RNG.seed)
_getrandbits = _RNG.getrandbits


def _random(length: int) -> str:
    """``length`` random letters and digits. Ids need to be unique, not secret: one Mersenne Twister draw (a single
    C call, so threads never share one and no lock is needed; a lock and a shared pool of urandom bytes cost twice
    as much), one translate."""
    return _getrandbits(length * 8).to_bytes(length, "little").translate(_TABLE).decode()


class IdFactory:
    """Makes ``prefix_`` + 24 characters; seeded ids come from per-prefix counters so reads never shift writes' ids."""

    def __init__(self, seed: int | None = None, counters: dict[str, int] | None = None) -> None:
        self.seed = seed
        self.counters: dict[str, int] = dict(counters or {})
        self._lock = threading.Lock()

    def new(self, prefix: str, length: int = ID_LENGTH) -> str:
        """A fresh id such as ``cus_…``."""
        if self.seed is None:  # the usual case: no namespace counter to keep
            return f"{prefix}_{_random(length)}"
        return f"{prefix}_{self.token(prefix, length)}"

    def token(self, namespace: str, length: int = ID_LENGTH) -> str:
        """A random (or seeded) string of letters and digits, independent per namespace."""
        if self.seed is None:
            return _random(length)
        with self._lock:
            n = self.counters.get(namespace, 0)
            self.counters[namespace] = n + 1
        digest = hashlib.sha256(f"{self.seed}:{namespace}:{n}".encode()).digest()
        num = int.from_bytes(digest, "big")
        chars = []
        for _ in range(length):
            num, rem = divmod(num, len(_ALPHABET))
            chars.append(_ALPHABET[rem])
        return "".join(chars)

    def secret(self, namespace: str, length: int = ID_LENGTH) -> str:
        """Like ``token``, but unseeded ones come from the OS's cryptographic source: for signing secrets, which
        must not be predictable from ids seen before."""
        if self.seed is None:
            return secrets.token_bytes(length).translate(_TABLE).decode()
        return self.token(namespace, length)

    def reset(self) -> None:
        """Start every counter again (used by ``/_emulator/reset``)."""
        with self._lock:
            self.counters.clear()


class Clock:
    """Wall-clock time plus an offset, or frozen at a chosen instant; ``created`` timestamps come from here."""

    def __init__(self, offset: float = 0.0, frozen_at: int | None = None) -> None:
        self.offset = offset
        self.frozen_at = frozen_at
        self._second = 0

    def now(self) -> int:
        """Current emulator time, in Unix seconds."""
        if self.frozen_at is not None:
            return self.frozen_at
        seconds = int(time.time() + self.offset)
        if seconds != self._second:
            self._second = seconds
        # the same int object all second long: each stored object's ``created`` is one more reference, not 32 bytes
        return self._second

    def advance(self, seconds: int) -> int:
        """Move time forward (frozen or not) and return the new now."""
        if self.frozen_at is not None:
            self.frozen_at += seconds
        else:
            self.offset += seconds
        return self.now()

    def set(self, timestamp: int, freeze: bool = False) -> int:
        """Jump to ``timestamp``; with ``freeze`` time stays there until advanced."""
        if freeze:
            self.frozen_at = timestamp
        else:
            self.frozen_at = None
            self.offset = timestamp - time.time()
        return self.now()

    def state(self) -> dict:
        """What the clock endpoint reports and the state file keeps."""
        return {"now": self.now(), "frozen": self.frozen_at is not None, "offset": self.offset}
