"""`apipod.core.job.job_result`, apipod 1.0.1 to 1.0.4's module path of JobResult (and
FileModel): svc's."""
from ...file_model import FileModel
from ...job_result import JobLinks, JobMetrics, JobResult

__all__ = ["FileModel", "JobLinks", "JobMetrics", "JobResult"]
