"""The emulator's limits: what one request may weigh and how long it may take, each refusal in Stripe's error shape.

A head (request line and headers) over its cap, a request target over its cap, a body over the limit on any route,
a request that trickles in, values that do not fit (numeric names, deep JSON, infinite counts, a clock beyond the
calendar): a 4xx with ``{"error": {"type": "invalid_request_error", ...}}``, never a 5xx or plain text, and the
server serves on. The protocol cases talk raw HTTP on 127.0.0.1 to a server with a short read timeout.
"""

from __future__ import annotations

import json
import re
import selectors
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from stripebench_emulator import EmulatorServer
from stripebench_emulator.web.dispatch import MAX_BODY_BYTES
from stripebench_emulator.web.limits import MAX_HEAD_BYTES, MAX_TARGET_BYTES, REQUEST_TIMEOUT

KEY = b"Authorization: Bearer sk_test_limits\r\n"
TIMEOUT = 2.0  # the short read timeout of ``short_server``, for the tests of the timeout itself
BOUND = 15.0  # no wait in these tests is longer than this, whatever the machine's load


@pytest.fixture(scope="module")
def server() -> Iterator[EmulatorServer]:
    """For the tests of the caps: a read timeout no test comes near, so a test thread the machine's load holds up
    between connecting and sending is never mistaken for a slow client."""
    with EmulatorServer(request_timeout=BOUND) as served:
        yield served


@pytest.fixture(scope="module")
def short_server() -> Iterator[EmulatorServer]:
    """For the tests of the read timeout."""
    with EmulatorServer(request_timeout=TIMEOUT) as served:
        yield served


class Answer:
    """A raw HTTP answer: status, lower-cased headers, body, and whether the server closed the connection after."""

    def __init__(self, raw: bytes, closed: bool) -> None:
        head, _, self.body = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split()[1]) if lines[0].startswith("HTTP/1.1 ") else 0
        self.headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        self.closed = closed

    def error(self) -> dict:
        assert self.headers.get("content-type") == "application/json", (self.status, self.headers, self.body[:200])
        error = json.loads(self.body)["error"]
        assert error["type"] == "invalid_request_error" and error["message"], error
        return error


def connect(server: EmulatorServer) -> socket.socket:
    sock = socket.create_connection((server.host, server.port), timeout=BOUND)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def exchange(server: EmulatorServer, *pieces: bytes) -> Answer:
    """Send ``pieces`` (the server may stop reading part-way), read one answer, then see whether it closes."""
    with connect(server) as sock:
        for piece in pieces:
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break  # refused before the end: the answer is already on its way
        return read_answer(sock)


def read_answer(sock: socket.socket) -> Answer:
    raw = b""
    deadline = time.monotonic() + BOUND
    while True:
        head, sep, body = raw.partition(b"\r\n\r\n")
        if sep:
            length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")[1:]
                           if line.lower().startswith(b"content-length:")), 0)
            if len(body) >= length:
                break
        sock.settimeout(max(deadline - time.monotonic(), 0.01))
        chunk = sock.recv(65536)
        if not chunk:
            return Answer(raw, closed=True)
        raw += chunk
    if b"\r\nconnection: close\r\n" not in head.lower() + b"\r\n":
        return Answer(raw, closed=False)  # kept open for the next request
    sock.settimeout(max(deadline - time.monotonic(), 0.01))
    try:
        closed = sock.recv(1) == b""
    except TimeoutError:
        closed = False
    except ConnectionResetError:
        closed = True
    return Answer(raw, closed)


def get(target: bytes, extra: bytes = b"") -> bytes:
    return b"GET " + target + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n" + KEY + extra + b"\r\n"


def header_of(size: int) -> bytes:
    """An ``X-Filler`` header line that brings the head of ``get(b"/v1/customers", line)`` to ``size`` bytes."""
    base = len(get(b"/v1/customers", b"X-Filler: \r\n"))
    return b"X-Filler: " + b"a" * (size - base) + b"\r\n"


def control_line(server: EmulatorServer) -> bytes:
    return b"".join(f"{k}: {v}\r\n".encode() for k, v in server.control_headers.items())


def alive(server: EmulatorServer) -> None:
    reply = httpx.post(server.url + "/v1/customers", data={"email": "after@example.com"},
                       headers={"Authorization": "Bearer sk_test_limits"}, timeout=BOUND)
    assert reply.status_code == 200 and reply.json()["email"] == "after@example.com"


# --- the head: request line and headers ---

def test_a_head_at_the_cap_is_served_and_one_byte_over_is_a_431(server: EmulatorServer) -> None:
    at_cap = get(b"/v1/customers", header_of(MAX_HEAD_BYTES))
    assert len(at_cap) == MAX_HEAD_BYTES
    assert exchange(server, at_cap).status == 200
    over = exchange(server, get(b"/v1/customers", header_of(MAX_HEAD_BYTES + 1)))
    assert over.status == 431 and over.closed
    assert f"{MAX_HEAD_BYTES:,} bytes" in over.error()["message"]
    alive(server)


def test_a_head_that_keeps_coming_is_refused_once_past_the_cap_without_waiting_for_its_end(
        server: EmulatorServer) -> None:
    """A 256 MB header used to be read whole: now the answer comes once the cap is passed, before the head ends."""
    start = get(b"/v1/customers")[:-2] + b"X-Endless: "
    piece = b"a" * 16384
    with connect(server) as sock:
        sock.sendall(start)
        refused = None
        for _ in range(MAX_HEAD_BYTES // len(piece) + 8):  # a few pieces past the cap, never the head's end
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break
            ready = selectors.DefaultSelector()
            ready.register(sock, selectors.EVENT_READ)
            if ready.select(timeout=0):
                break
        refused = read_answer(sock)
    assert refused.status == 431 and refused.closed
    refused.error()
    alive(server)


def test_a_request_target_over_the_cap_is_a_414_in_stripes_shape(server: EmulatorServer) -> None:
    query = b"/v1/customers?email="
    at_cap = exchange(server, get(query + b"a" * (MAX_TARGET_BYTES - len(query))))
    assert at_cap.status == 400 and not at_cap.closed  # read whole, then refused by the email's own rule
    assert "at most 512 characters" in at_cap.error()["message"]
    for size in (MAX_TARGET_BYTES + 1, 70_000, 200_000):  # 65,536 and over: beyond what httptools parses
        over = exchange(server, get(query + b"a" * (size - len(query))))
        assert over.status == 414 and over.closed, size
        assert f"{MAX_TARGET_BYTES:,} bytes" in over.error()["message"]
    alive(server)


@pytest.mark.parametrize("request_bytes", [b"NOT-HTTP\r\n\r\n", b"GET /v1/customers HTTP/9.9\r\n\r\n",
                                           b"GET /v1/customers HTTP/1.1\r\nBad Header\r\n\r\n"],
                         ids=["no request line", "bad version", "bad header"])
def test_a_request_that_is_not_http_is_a_400_in_stripes_shape(server: EmulatorServer, request_bytes: bytes) -> None:
    refused = exchange(server, request_bytes)
    assert refused.status == 400 and refused.closed
    refused.error()
    alive(server)


# --- time: a request must arrive within the read timeout ---

def test_connections_that_trickle_their_heads_are_closed_after_the_read_timeout(short_server: EmulatorServer) -> None:
    """Slowloris: each connection sends a byte of its head every 50 ms, never the end; each is closed."""
    head = get(b"/v1/customers")
    selector = selectors.DefaultSelector()
    socks = [connect(short_server) for _ in range(20)]
    started = time.monotonic()
    sent = dict.fromkeys(socks, 0)
    for sock in socks:
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
    open_socks = set(socks)
    try:
        while open_socks and time.monotonic() - started < BOUND:
            for sock in list(open_socks):  # one more byte each (the head's last two are never sent)
                if sent[sock] < len(head) - 2:
                    try:
                        sock.send(head[sent[sock]:sent[sock] + 1])
                        sent[sock] += 1
                    except (BrokenPipeError, ConnectionResetError):
                        pass
            for key, _ in selector.select(timeout=0.05):  # the wait is for the server closing, paced by the trickle
                try:
                    data = key.fileobj.recv(65536)
                except ConnectionResetError:
                    data = b""
                if not data:
                    open_socks.discard(key.fileobj)
                    selector.unregister(key.fileobj)
        held = time.monotonic() - started
    finally:
        for sock in socks:
            sock.close()
    assert not open_socks, f"{len(open_socks)} of 20 trickling connections still open after {BOUND} s"
    assert held >= TIMEOUT / 2  # closed by the timer (uvloop's clock and ours differ by a little)
    alive(short_server)


def test_a_connection_that_sends_nothing_is_closed_after_the_read_timeout(short_server: EmulatorServer) -> None:
    with connect(short_server) as sock:
        started = time.monotonic()
        assert sock.recv(1) == b""  # the server closes it (the socket's own timeout is BOUND)
        assert time.monotonic() - started >= TIMEOUT / 2


def test_a_slow_answer_is_not_cut_by_the_read_timeout(short_server: EmulatorServer) -> None:
    """The timeout is on reading the request: a response that takes longer than it still arrives, and the
    connection then serves the next request."""
    rule = {"kind": "latency", "latency_ms": TIMEOUT * 1000 * 3, "path": "/v1/customers", "count": 1}
    httpx.post(short_server.url + "/_emulator/faults", json=rule, headers=short_server.control_headers, timeout=BOUND)
    with connect(short_server) as sock:
        sock.sendall(get(b"/v1/customers"))
        assert read_answer_keep(sock).status == 200
        sock.sendall(get(b"/v1/customers"))
        assert read_answer_keep(sock).status == 200


def read_answer_keep(sock: socket.socket) -> Answer:
    """One answer on a connection that stays open (no look for the close)."""
    raw = b""
    while True:
        head, sep, body = raw.partition(b"\r\n\r\n")
        if sep:
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")[1:]
                          if line.lower().startswith(b"content-length:"))
            if len(body) >= length:
                return Answer(raw, closed=False)
        chunk = sock.recv(65536)
        assert chunk, "closed before the answer"
        raw += chunk


def read_answers_keep(sock: socket.socket, count: int) -> list[Answer]:
    """``count`` answers in a row on a connection that stays open (they may arrive in one chunk, or split anywhere)."""
    raw, answers = b"", []
    while len(answers) < count:
        head, sep, body = raw.partition(b"\r\n\r\n")
        if sep:
            length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")[1:]
                          if line.lower().startswith(b"content-length:"))
            if len(body) >= length:
                end = len(head) + len(sep) + length
                answers.append(Answer(raw[:end], closed=False))
                raw = raw[end:]
                continue
        chunk = sock.recv(65536)
        assert chunk, f"closed after {len(answers)} of {count} answers"
        raw += chunk
    return answers


def test_pipelined_requests_are_each_answered(server: EmulatorServer) -> None:
    """Several requests in one write (the guard reads along with the server's parser): each is answered."""
    body = b"email=piped%40example.com"
    post = (b"POST /v1/customers HTTP/1.1\r\nHost: 127.0.0.1\r\n" + KEY
            + b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " + str(len(body)).encode()
            + b"\r\n\r\n" + body)
    with connect(server) as sock:
        sock.sendall(get(b"/v1/customers") + post + get(b"/v1/customers?email=piped%40example.com"))
        answers = read_answers_keep(sock, 3)
    assert [a.status for a in answers] == [200, 200, 200]
    assert json.loads(answers[2].body)["data"][0]["email"] == "piped@example.com"


def test_after_an_upgrade_request_a_trickle_cannot_hold_the_connection(short_server: EmulatorServer) -> None:
    """The server takes no upgrade (no WebSocket here): the request is answered, and the connection is closed soon
    after (by uvicorn's own parser on the next byte today; the guard also gives what follows one request's time)."""
    with connect(short_server) as sock:
        sock.sendall(get(b"/v1/customers", b"Connection: Upgrade\r\nUpgrade: h2c\r\n"))
        assert read_answer_keep(sock).status == 200
        sock.settimeout(0.05)
        started = time.monotonic()
        closed = False
        while not closed and time.monotonic() - started < BOUND:
            try:
                sock.send(b"x")  # a byte every 50 ms, paced by the wait for the server's close
                closed = sock.recv(65536) == b""
            except TimeoutError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                closed = True
    assert closed, f"still open after {BOUND} s"


# --- bodies: one limit on every route ---

PAGE_POSTS = ["/_checkout/cs_test_x/submit", "/_checkout/cs_test_x/quantity", "/3ds/authenticate/pi_x",
              "/i/in_x/pay", "/_emulator/faults", "/_emulator/clock", "/v1/customers", "/no/such/route"]


@pytest.mark.parametrize("path", PAGE_POSTS)
def test_a_declared_body_over_the_limit_is_a_413_before_any_of_it_is_read(server: EmulatorServer,
                                                                         path: str) -> None:
    """A 200 MB Content-Length: answered at once, from the head alone (no body byte is sent here)."""
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: 200000000\r\n").encode() + KEY + control_line(server) + b"\r\n"
    refused = exchange(server, head)
    assert refused.status == 413 and refused.closed, (refused.status, refused.body[:200])
    assert f"{MAX_BODY_BYTES:,} bytes" in refused.error()["message"]
    alive(server)


@pytest.mark.parametrize("path", ["/_checkout/cs_test_x/submit", "/3ds/authenticate/pi_x", "/i/in_x/pay"])
def test_a_streamed_page_body_over_the_limit_is_a_413(server: EmulatorServer, path: str) -> None:
    """No Content-Length (chunked): counted as it comes, refused once past the limit."""
    piece = b"a" * 65536
    pieces = [f"{len(piece):x}\r\n".encode() + piece + b"\r\n"] * (MAX_BODY_BYTES // len(piece) + 1)
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n").encode()
    refused = exchange(server, head, *pieces, b"0\r\n\r\n")
    assert refused.status == 413, (refused.status, refused.body[:200])
    refused.error()
    alive(server)


def test_a_page_body_at_the_limit_is_read(server: EmulatorServer) -> None:
    body = json.dumps({"pad": "a" * (MAX_BODY_BYTES - len('{"pad": ""}'))}).encode()
    assert len(body) == MAX_BODY_BYTES
    reply = httpx.post(server.url + "/_checkout/cs_test_x/submit", content=body, timeout=BOUND)
    assert reply.status_code == 404  # read whole, then: no such session


# --- values that do not fit ---

@pytest.mark.parametrize("form", ["0=x", "0=x&1=y", "7=x", "0[a]=x", "0[]=x"])
def test_numeric_top_level_names_are_a_400(emulator, api, form: str) -> None:
    for reply in (api.post("/v1/customers", content=form, headers={"Content-Type": "application/x-www-form-urlencoded"}),
                  api.get("/v1/customers?" + form)):
        assert reply.status_code == 400, reply.text
        assert reply.json()["error"]["type"] == "invalid_request_error"
    assert api.get("/v1/customers").json()["data"] == []


DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("path", ["/_checkout/cs_test_x/submit", "/_checkout/cs_test_x/promotion",
                                  "/_checkout/cs_test_x/authenticate", "/_checkout/cs_test_x/quantity",
                                  "/_checkout/cs_test_x/shipping", "/_checkout/cs_test_x/optional",
                                  "/_emulator/faults", "/_emulator/webhook_settings",
                                  "/_emulator/clock"])
@pytest.mark.parametrize("body", [DEEP, b'{"a": ' + DEEP + b"}"], ids=["deep list", "deep inside an object"])
def test_deeply_nested_json_is_a_400(emulator, path: str, body: bytes) -> None:
    reply = httpx.post(emulator.url + path, content=body, timeout=BOUND,
                       headers={**emulator.control_headers, "Content-Type": "application/json"})
    assert reply.status_code == 400, (reply.status_code, reply.text[:200])
    error = reply.json()["error"]
    assert error["type"] == "invalid_request_error" and "JSON" in error["message"]


@pytest.mark.parametrize("spec", ['{"kind": "status", "count": 1e400}', '{"kind": "status", "count": Infinity}',
                                  '{"kind": "status", "count": NaN}', '{"kind": "status", "count": 1e12}',
                                  '{"kind": "status", "count": 1.5}', '{"kind": "status", "count": true}',
                                  '{"kind": "status", "status": 1e400}', '{"kind": "latency", "latency_ms": 1e400}',
                                  '{"kind": "latency", "latency_ms": NaN}', '{"kind": "webhook_duplicate", "count": 1e400}',
                                  '{"kind": "webhook_out_of_order", "count": -Infinity}'])
def test_fault_numbers_out_of_range_are_a_400_and_add_nothing(emulator, spec: str) -> None:
    faults = emulator.url + "/_emulator/faults"
    reply = httpx.post(faults, content=spec, headers=emulator.control_headers, timeout=BOUND)
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["type"] == "invalid_request_error"
    assert httpx.get(faults, headers=emulator.control_headers, timeout=BOUND).json() == {
        "rules": [], "webhook_duplicate": 0, "webhook_out_of_order": 0}


@pytest.mark.parametrize("settings", ['{"timeout_seconds": 1e400}', '{"max_attempts": NaN}',
                                      '{"retry_base_seconds": -1}', '{"hold_seconds": Infinity}',
                                      '{"max_attempts": 1e9}', '{"max_attempts": 2.5}', '{"timeout_seconds": 0}',
                                      '{"retry_base_seconds": 1, "max_attempts": 1e400}', '[1, 2]', '"x"'])
def test_webhook_settings_out_of_range_are_a_400_and_change_nothing(emulator, settings: str) -> None:
    url = emulator.url + "/_emulator/webhook_settings"
    before = httpx.get(url, headers=emulator.control_headers, timeout=BOUND).json()
    reply = httpx.post(url, content=settings, headers=emulator.control_headers, timeout=BOUND)
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["type"] == "invalid_request_error"
    after = httpx.get(url, headers=emulator.control_headers, timeout=BOUND)
    assert after.status_code == 200 and after.json() == before


@pytest.mark.parametrize("move", [{"set": 2**63}, {"set": 10**20}, {"set": -(2**63) - 1}, {"set": -1},
                                  {"advance": 10**20}, {"advance": -(10**20)}, {"set": 253402300800},
                                  '{"set": 1e400}', '{"advance": NaN}', '{"set": 1.5}', "set=99999999999999999999"])
def test_the_clock_is_moved_only_within_the_calendar(emulator, api, move: dict | str) -> None:
    url = emulator.url + "/_emulator/clock"
    before = httpx.get(url, headers=emulator.control_headers, timeout=BOUND).json()
    if isinstance(move, dict):
        reply = httpx.post(url, json=move, headers=emulator.control_headers, timeout=BOUND)
    else:
        kind = "application/json" if move.startswith("{") else "application/x-www-form-urlencoded"
        reply = httpx.post(url, content=move, headers={**emulator.control_headers, "Content-Type": kind},
                           timeout=BOUND)
    assert reply.status_code == 400, reply.text
    assert reply.json()["error"]["type"] == "invalid_request_error"
    assert httpx.get(url, headers=emulator.control_headers, timeout=BOUND).json()["frozen"] == before["frozen"]
    assert abs(emulator.emulator.clock.now() - before["now"]) < 60
    # billing still works (a clock past the year 9999 made subscriptions a 500)
    product = api.post("/v1/products", data={"name": "p"}).json()
    price = api.post("/v1/prices", data={"product": product["id"], "unit_amount": 100, "currency": "usd",
                                         "recurring[interval]": "year"}).json()
    customer = api.post("/v1/customers", data={"payment_method": "pm_card_visa",
                                               "invoice_settings[default_payment_method]": "pm_card_visa"}).json()
    made = api.post("/v1/subscriptions", data={"customer": customer["id"], "items[0][price]": price["id"]})
    assert made.status_code == 200, made.text


def test_the_clock_can_still_be_set_far_ahead_within_range(emulator, api) -> None:
    from stripebench_emulator.web.limits import MAX_CLOCK

    url = emulator.url + "/_emulator/clock"
    reply = httpx.post(url, json={"set": MAX_CLOCK, "freeze": True}, headers=emulator.control_headers, timeout=BOUND)
    assert reply.status_code == 200 and reply.json()["now"] == MAX_CLOCK
    product = api.post("/v1/products", data={"name": "p"}).json()
    price = api.post("/v1/prices", data={"product": product["id"], "unit_amount": 100, "currency": "usd",
                                         "recurring[interval]": "year", "recurring[interval_count]": 3}).json()
    customer = api.post("/v1/customers", data={"payment_method": "pm_card_visa",
                                               "invoice_settings[default_payment_method]": "pm_card_visa"}).json()
    made = api.post("/v1/subscriptions", data={"customer": customer["id"], "items[0][price]": price["id"],
                                               "trial_period_days": 730})
    assert made.status_code == 200, made.text
    assert httpx.post(url, json={"advance": 5 * 365 * 86400}, headers=emulator.control_headers,
                      timeout=BOUND).status_code == 400


# --- the command line ---

@pytest.mark.parametrize("value", ["0", "-1", "nan", "3601"])
def test_a_bad_request_timeout_is_a_one_line_usage_error(value: str) -> None:
    done = subprocess.run([sys.executable, "-m", "stripebench_emulator", "--port", "0", "--request-timeout", value],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--request-timeout" in done.stderr, done.stderr


def test_the_command_line_takes_the_request_timeout() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "stripebench_emulator", "--port", "0", "--request-timeout", "0.3"],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert proc.stderr is not None
        port = int(re.search(r"127\.0\.0\.1:(\d+)", proc.stderr.readline()).group(1))
        with socket.create_connection(("127.0.0.1", port), timeout=BOUND) as sock:
            started = time.monotonic()
            assert sock.recv(1) == b""  # closed by the server, well before the default
            assert time.monotonic() - started < REQUEST_TIMEOUT - 1
    finally:
        proc.terminate()
        proc.wait(10)
