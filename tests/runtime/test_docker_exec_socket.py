"""docker_exec writes to and half-closes the exec socket through public socket API only.

docker-py's ``exec_start(socket=True)`` hands back a ``socket.SocketIO`` (or a socket); a real
socket pair stands in for the engine's connection here.
"""

from __future__ import annotations

import socket
import threading

import pytest

from stripebench_tui.runtime.docker_exec import send_all, shut_write


def _read_to_end(peer: socket.socket) -> bytes:
    chunks = []
    while chunk := peer.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize("wrap", ["socket", "socketio"])
def test_everything_sent_then_end_of_input(wrap: str) -> None:
    ours, engine = socket.socketpair()
    sock = ours if wrap == "socket" else socket.SocketIO(ours, "rwb")
    data = bytes(range(256)) * 4096  # 1 MiB: more than one write's worth
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(_read_to_end(engine)))
    reader.start()
    send_all(sock, data)
    shut_write(sock)
    reader.join(timeout=30)
    assert not reader.is_alive() and received == [data]  # the peer saw all of it, then end of input
    engine.sendall(b"still open for output")  # only the write side was closed
    assert ours.recv(100) == b"still open for output"
    ours.close()
    engine.close()
