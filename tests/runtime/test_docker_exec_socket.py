"""docker_exec sends the command's input on the exec connection through public socket API only.

Over a unix socket docker-py's ``exec_start(socket=True)`` hands back the read-only
``socket.SocketIO`` that http.client read the response through (over TLS, the socket itself);
a real socket pair stands in for the engine's connection here.
"""

from __future__ import annotations

import socket
import threading

import pytest

from stripebench_tui.runtime.docker_exec import writable_socket


def _read_to_end(peer: socket.socket) -> bytes:
    chunks = []
    while chunk := peer.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize("given", ["socket", "read-only SocketIO"])
def test_input_is_sent_whole_then_ends_while_output_still_flows(given: str) -> None:
    ours, engine = socket.socketpair()
    returned = ours if given == "socket" else socket.SocketIO(ours, "rb")
    raw = writable_socket(returned)
    data = bytes(range(256)) * 4096  # 1 MiB: more than one send's worth
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(_read_to_end(engine)))
    reader.start()
    raw.sendall(data)
    raw.shutdown(socket.SHUT_WR)
    reader.join(timeout=30)
    assert not reader.is_alive() and received == [data]  # all of it, then end of input
    engine.sendall(b"output after end of input")  # only the write side was closed
    assert ours.recv(100) == b"output after end of input"
    for s in {id(raw): raw, id(ours): ours}.values():
        s.close()
    engine.close()
