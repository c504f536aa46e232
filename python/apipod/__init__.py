"""apipod: the toolkit a service file imports, and the worker svc runs it in.

    from apipod import APIPod, ImageFile, JobProgress

It stands in for the upstream apipod toolkit, under its module paths too (apipod.api,
apipod.common.*, apipod.engine.jobs.*, ...): names and modules of upstream's that svc does not
provide raise an ImportError saying so (upstream_names.py).
"""
from .app import APIPod
from .chat import ChatCompletionRequest, ChatCompletionResponse, ChatMessage
from .common import constants
from .file_model import FileModel
from .job_result import JobLinks, JobMetrics, JobResult
from .media import AudioFile, ImageFile, MediaFile, VideoFile
from .media_containers import MediaDict, MediaList
from .progress import JobProgress
from ._runtime.upstream_names import install_module_finder, missing_name
from ._runtime.version import toolkit_version

__version__ = toolkit_version()
install_module_finder()

__all__ = [
    "APIPod",
    "AudioFile",
    "ChatCompletionRequest",
    "ChatCompletionResponse",
    "ChatMessage",
    "FileModel",
    "ImageFile",
    "JobLinks",
    "JobMetrics",
    "JobProgress",
    "JobResult",
    "MediaDict",
    "MediaFile",
    "MediaList",
    "VideoFile",
    "constants",
]


def __getattr__(name: str):
    raise missing_name(__name__, name)
