"""`apipod.engine.jobs.job_result`, upstream's module path of JobResult (and, up to 1.0.5,
FileModel): svc's."""
from ...file_model import FileModel
from ...job_result import JobLinks, JobMetrics, JobResult

__all__ = ["FileModel", "JobLinks", "JobMetrics", "JobResult"]
