"""JobResult: the upstream apipod toolkit's job snapshot (apipod 1.0.33,
apipod/engine/jobs/job_result.py), for services and clients that name it. svc's own job
envelope is the gateway's (docs/jobs.md)."""
from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class JobLinks:
    status: Optional[str] = None
    cancel: Optional[str] = None
    stream: Optional[str] = None


@dataclass
class JobMetrics:
    created_at: Optional[datetime.datetime] = None
    queued_at: Optional[datetime.datetime] = None
    started_at: Optional[datetime.datetime] = None
    finished_at: Optional[datetime.datetime] = None
    execution_time_s: Optional[float] = None


@dataclass
class JobResult:
    job_id: str
    status: Optional[str] = None
    result: Any = None
    error: Optional[str] = None
    progress: Optional[float] = None
    message: Optional[str] = None
    metrics: Optional[JobMetrics] = None
    links: Optional[JobLinks] = None
