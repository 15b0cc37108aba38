"""Reading an external grader's report: JUnit XML, pytest-json-report, RSpec's JSON formatter or a score JSON.

Each parser returns one ``TestResult`` per test (passed, failed, error or skipped) with the failure message;
``parse_report`` picks the parser (``auto`` looks at the text) and raises ``ReportError`` for garbage, so a
grader that prints nonsense is an error, never a pass.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any, cast

from stripebench_tui.core.json_value import JSONValue

PASSED, FAILED, ERRORED, SKIPPED = "passed", "failed", "error", "skipped"
MESSAGE_HEAD = 400  # characters of a report's one-line failure message kept before the traceback's tail
MESSAGE_TAIL = 1500  # characters of a failure's text kept as evidence (its end: where the assertion is)
_NAME_BAD = re.compile(r"[^A-Za-z0-9_.\- ]+")


class ReportError(ValueError):
    """The report is missing, malformed or lists no tests."""


@dataclass(frozen=True)
class TestResult:
    """One test of the report."""

    __test__ = False  # not a pytest test class

    name: str
    outcome: str  # PASSED | FAILED | ERRORED | SKIPPED
    message: str = ""
    detail: str = ""  # the test's full id or description
    score: float | None = None  # a score JSON's partial credit, when it gives one


def criterion_name(raw: str) -> str:
    """A test id as a criterion name (letters, digits, spaces, ``_.-``; at most 120 characters)."""
    name = re.sub(r"\s+", " ", _NAME_BAD.sub(" ", raw)).strip(" .-_")
    name = name[:120].rstrip(" .-_")
    return name if name and name[0].isalnum() else ("test " + name).strip()


def tail(text: str, limit: int = MESSAGE_TAIL) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else "…" + text[-limit:]


# ---- JUnit XML (pytest --junitxml, most test runners) ----

def parse_junit(text: str) -> list[TestResult]:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ReportError(f"not JUnit XML: {exc}") from None
    out = []
    for case in root.iter("testcase"):
        name, classname = case.get("name", ""), case.get("classname", "")
        outcome, message = PASSED, ""
        for tag, kind in (("error", ERRORED), ("failure", FAILED), ("skipped", SKIPPED)):
            node = case.find(tag)
            if node is not None:
                outcome = kind
                # The runner's one-line message first (it says what failed), then the end of the traceback.
                head = (node.get("message") or "")[:MESSAGE_HEAD]
                message = "\n".join(p for p in (head, tail(node.text or "", MESSAGE_TAIL - len(head))) if p)
                break
        out.append(TestResult(name or classname, outcome, message, f"{classname}::{name}" if classname else name))
    return out


# ---- pytest-json-report ----

def parse_pytest_json(data: dict[str, Any]) -> list[TestResult]:
    tests = data.get("tests")
    if not isinstance(tests, list):
        raise ReportError("not a pytest JSON report: no 'tests' list")
    out = []
    for t in tests:
        nodeid = str(t.get("nodeid", ""))
        raw = str(t.get("outcome", ""))
        outcome = {"passed": PASSED, "xpassed": PASSED, "failed": FAILED, "error": ERRORED,
                   "skipped": SKIPPED, "xfailed": SKIPPED}.get(raw, ERRORED)
        message = ""
        for stage in ("setup", "call", "teardown"):
            info = t.get(stage) or {}
            if info.get("outcome") not in (None, "passed"):
                crash = info.get("crash") or {}
                message = str(info.get("longrepr") or crash.get("message") or "")
                break
        out.append(TestResult(nodeid.rsplit("::", 1)[-1] or nodeid, outcome, tail(message), nodeid))
    return out


# ---- RSpec --format json ----

def parse_rspec_json(data: dict[str, Any]) -> list[TestResult]:
    examples = data.get("examples")
    if not isinstance(examples, list):
        raise ReportError("not an RSpec JSON report: no 'examples' list")
    out = []
    for ex in examples:
        raw = str(ex.get("status", ""))
        outcome = {"passed": PASSED, "failed": FAILED, "pending": SKIPPED}.get(raw, ERRORED)
        exc = ex.get("exception") or {}
        message = "\n".join(str(p) for p in (exc.get("class", ""), exc.get("message", "")) if p)
        desc = str(ex.get("full_description") or ex.get("description") or ex.get("id") or "")
        out.append(TestResult(desc, outcome, tail(message), str(ex.get("id") or ex.get("file_path") or desc)))
    return out


# ---- a score JSON: {"score": 0.5}, [{"name":…, "score":…}], {"results": […]}, {"name": true|0.7, …} ----

_NAME_KEYS = ("name", "challenge_name", "test", "id", "key", "criterion", "title")
_PASS_WORDS = {"pass", "passed", "ok", "success", "match", "true"}


def _item(name: str, value: JSONValue) -> TestResult:
    if isinstance(value, bool):
        return TestResult(name, PASSED if value else FAILED, "" if value else "false", name)
    if isinstance(value, (int, float)):
        return TestResult(name, PASSED if value >= 1.0 else FAILED,
                          "" if value >= 1.0 else f"score {value:g}", name, float(value))
    if isinstance(value, dict):
        score = value.get("score")
        passed = value.get("passed", value.get("pass"))
        status = str(value.get("status", value.get("result", ""))).lower()
        if isinstance(passed, bool):
            ok = passed
        elif status:
            ok = status in _PASS_WORDS
        elif isinstance(score, (int, float)) and not isinstance(score, bool):
            ok = score >= float(cast(float, value.get("max_score", 1.0)))  # not a number: raises, as before
        else:
            raise ReportError(f"score JSON entry {name!r} has neither score, passed nor status")
        message = "" if ok else str(value.get("message") or value.get("error") or "")
        if not ok and not message:
            details = value.get("details")
            message = f"score {score}" if score is not None else status or "failed"
            if details:
                message += "; " + json.dumps(details, default=str)
        return TestResult(name, PASSED if ok else FAILED, tail(message), name,
                          float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None)
    raise ReportError(f"score JSON entry {name!r} is a {type(value).__name__}, not a score")


def parse_score_json(data: JSONValue) -> list[TestResult]:
    if isinstance(data, dict):
        for key in ("results", "criteria", "tests", "checks", "challenges"):
            if isinstance(data.get(key), (list, dict)):
                return parse_score_json(data[key])
        if set(data) & {"score", "passed"} and not any(isinstance(v, dict) for v in data.values()):
            return [_item("score", data)]
        return [_item(str(k), v) for k, v in data.items()]
    if isinstance(data, list):
        out = []
        for n, entry in enumerate(data, 1):
            if not isinstance(entry, dict):
                raise ReportError(f"score JSON list entry {n} is a {type(entry).__name__}, not an object")
            name = next((str(entry[k]) for k in _NAME_KEYS if entry.get(k) not in (None, "")), f"item {n}")
            out.append(_item(name, entry))
        return out
    raise ReportError(f"a score JSON is an object or a list, not a {type(data).__name__}")


def _json_tail(text: str) -> Any:
    """The JSON document in ``text``: the whole text, else from the first line that opens one (scripts print first)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if line.lstrip().startswith(("{", "[")):
            try:
                return json.loads("\n".join(lines[n:]))
            except json.JSONDecodeError:
                continue
    raise ReportError("not JSON")


def parse_report(text: str, kind: str = "auto") -> list[TestResult]:
    """The tests in a report of ``kind`` (auto: recognised from the text); ReportError when it holds none."""
    if not text.strip():
        raise ReportError("the report is empty")
    if kind == "junit" or (kind == "auto" and text.lstrip().startswith("<")):
        results = parse_junit(text)
    else:
        data = _json_tail(text)
        if kind == "pytest-json" or (kind == "auto" and isinstance(data, dict) and "tests" in data and "summary" in data):
            results = parse_pytest_json(data)
        elif kind == "rspec-json" or (kind == "auto" and isinstance(data, dict) and "examples" in data):
            results = parse_rspec_json(data)
        else:
            results = parse_score_json(data)
    if not results:
        raise ReportError("the report lists no tests")
    return results


__all__ = ["ERRORED", "FAILED", "PASSED", "ReportError", "SKIPPED", "TestResult", "criterion_name", "parse_report", "tail"]
