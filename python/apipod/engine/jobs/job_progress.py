"""`apipod.engine.jobs.job_progress`, upstream's module path of JobProgress: svc's."""
from ...progress import JobProgress

__all__ = ["JobProgress"]
