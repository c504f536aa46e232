"""JobProgress: how an endpoint reports how far along it is."""
from __future__ import annotations

import math
from typing import Callable, Optional

ProgressReporter = Callable[[Optional[float], Optional[str]], None]


class JobProgress:
    """Passed to a parameter annotated `JobProgress` (or named `job_progress`).

    Inside a worker each `set_status` becomes a `progress` event for the running call; made
    by hand (outside a worker) it only remembers the last status, so endpoint functions can
    be called directly in tests.
    """

    def __init__(self, progress: Optional[float] = 0.0, message: Optional[str] = None,
                 reporter: Optional[ProgressReporter] = None):
        self.progress = progress
        self.message = message
        self._reporter = reporter

    def set_status(self, progress: Optional[float] = None, message: Optional[str] = None) -> "JobProgress":
        """`progress` from 0 to 1 (clamped; NaN means unknown) and a `message` for the client.
        Either left as None keeps its last value, as in the APIPod toolkit."""
        if progress is not None:
            self.progress = _clamp(progress)
        if message is not None:
            self.message = str(message)
        if self._reporter is not None:
            self._reporter(self.progress, self.message)
        return self


def _clamp(progress: float) -> Optional[float]:
    value = float(progress)
    if math.isnan(value):
        return None
    return min(1.0, max(0.0, value))
