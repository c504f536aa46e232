"""`apipod.core.job.job_result`, apipod 1.0.1 to 1.0.4's module path of JobResult (and
FileModel): the same names as `apipod.engine.jobs.job_result`, later releases' path."""
from ...engine.jobs.job_result import FileModel, JobLinks, JobMetrics, JobResult, __all__, __getattr__  # noqa: F401
