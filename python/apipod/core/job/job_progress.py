"""`apipod.core.job.job_progress`, apipod 1.0.1 to 1.0.4's module path of JobProgress: svc's."""
from ...progress import JobProgress

__all__ = ["JobProgress"]
