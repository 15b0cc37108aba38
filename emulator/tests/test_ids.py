"""Ids: unique across threads without a lock, fresh in a forked child, seeded ones repeatable, signing secrets from
the OS's cryptographic source."""

from __future__ import annotations

import os
import re
import threading

from stripebench_emulator.model import determinism
from stripebench_emulator.model.determinism import IdFactory

ID = re.compile(r"cus_[0-9A-Za-z]{24}")


def test_unseeded_ids_from_many_threads_are_all_distinct_and_well_formed() -> None:
    ids = IdFactory()
    made: list[list[str]] = [[] for _ in range(4)]
    start = threading.Barrier(4)

    def work(out: list[str]) -> None:
        start.wait()
        for _ in range(20_000):
            out.append(ids.new("cus"))

    threads = [threading.Thread(target=work, args=(out,)) for out in made]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [i for out in made for i in out]
    assert len(every) == 80_000 and len(set(every)) == 80_000
    assert all(ID.fullmatch(i) for i in every)
    assert len({len(ids.token("req", n)) for n in (8, 14, 25, 40)}) == 4


def test_a_forked_child_draws_ids_of_its_own() -> None:
    ids = IdFactory()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next id, to the parent
        try:
            os.write(write, ids.new("cus").encode())
        finally:
            os._exit(0)
    os.close(write)
    child = os.read(read, 100).decode()
    os.close(read)
    os.waitpid(pid, 0)
    mine = ids.new("cus")
    assert ID.fullmatch(child) and child != mine


def test_seeded_ids_and_secrets_repeat_with_the_seed() -> None:
    first, second, other = IdFactory(seed=7), IdFactory(seed=7), IdFactory(seed=8)
    assert [first.new("cus") for _ in range(3)] == [second.new("cus") for _ in range(3)]
    assert first.secret("whsec", 32) == second.secret("whsec", 32) != other.secret("whsec", 32)


def test_unseeded_signing_secrets_do_not_follow_the_id_generator() -> None:
    ids = IdFactory()
    state = determinism._RNG.getstate()
    try:
        determinism._RNG.seed(1234)
        first = (ids.token("req", 32), ids.secret("whsec", 32))
        determinism._RNG.seed(1234)
        again = (ids.token("req", 32), ids.secret("whsec", 32))
    finally:
        determinism._RNG.setstate(state)
    assert first[0] == again[0]  # ids come from the generator...
    assert first[1] != again[1] and re.fullmatch(r"[0-9A-Za-z]{32}", first[1])  # ...signing secrets do not
