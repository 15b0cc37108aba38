"""Graders: weighted criteria checked through public means only, live during an episode and at its end.

``load_grader(env)`` finds ``graders/<env>.py``; ``LiveGrading(grader, ctx)`` wires it to an
episode's bus and driver; ``Evaluator`` grades once (``stripebench grade``).
Scenario graders share ``app_copy.AppCopy`` (a second copy of the app), ``stripe_proxy.StripeProxy`` (recording
and fault injection in front of Stripe), ``once.once_per_context`` and ``scenarios`` (Miss, need, outcomes).
"""

from stripebench_tui.grading.context import GradingContext, GradingUnavailable
from stripebench_tui.grading.criteria import (
    ANY_OBJECT,
    ERROR,
    FAIL,
    PASS,
    PENDING,
    Candidates,
    Criterion,
    Grader,
    GradingView,
    Outcome,
    expect,
    failed,
    first_id,
    passed,
    pending,
)
from stripebench_tui.grading.evaluate import Evaluator, Reported
from stripebench_tui.grading.live import LiveGrading
from stripebench_tui.grading.loader import grader_path, graders_dir, load_grader

__all__ = [
    "ANY_OBJECT",
    "Candidates",
    "Criterion",
    "ERROR",
    "Evaluator",
    "FAIL",
    "Grader",
    "GradingContext",
    "GradingUnavailable",
    "GradingView",
    "LiveGrading",
    "Outcome",
    "PASS",
    "PENDING",
    "Reported",
    "expect",
    "failed",
    "first_id",
    "grader_path",
    "graders_dir",
    "load_grader",
    "passed",
    "pending",
]
