"""Failure-mode findings: detectors that read the event stream and mark turns, apart from the verdicts.

Each detector is one module with a class following ``base.Detector``; ``DETECTORS`` names them (an import path,
so naming one imports only its module). ``FindingsRunner`` feeds them events live on the bus or over a recorded
trace (``detect``) and emits ``Finding`` events; ``with_derived_findings`` puts them into a trace that has none.
"""

from __future__ import annotations

from stripebench_tui.findings.base import Detector
from stripebench_tui.findings.derived import with_derived_findings
from stripebench_tui.findings.runner import DETECTORS, FindingsRunner, create_detectors, detect, findings_of

__all__ = ["DETECTORS", "Detector", "FindingsRunner", "create_detectors", "detect", "findings_of", "with_derived_findings"]
