"""`apipod.engine.jobs.job_result`, upstream's module path of JobResult (and, up to 1.0.5,
FileModel): svc's. Its ImageFileModel, AudioFileModel and VideoFileModel are socaity-schemas'
(which later releases take them from), when the service's environment has it."""
from ...file_model import FileModel
from ..._runtime.socaity_schemas_lookup import socaity_schema
from ..._runtime.upstream_names import missing_name
from ...job_result import JobLinks, JobMetrics, JobResult

__all__ = ["FileModel", "JobLinks", "JobMetrics", "JobResult"]


def __getattr__(name: str):
    if name in ("ImageFileModel", "AudioFileModel", "VideoFileModel"):
        return socaity_schema(__name__, name)
    raise missing_name(__name__, name)
