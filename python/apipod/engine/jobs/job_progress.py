"""`apipod.engine.jobs.job_progress`, upstream's module path of JobProgress: svc's."""
from ...progress import JobProgress
from ..._runtime.upstream_names import missing_name

__all__ = ["JobProgress"]


def __getattr__(name: str):
    raise missing_name(__name__, name)
