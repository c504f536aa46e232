"""apipod: the toolkit a service file imports, and the worker svc runs it in.

    from apipod import APIPod, ImageFile, JobProgress
"""
from .app import APIPod
from .chat import ChatCompletionRequest, ChatCompletionResponse, ChatMessage
from .media import AudioFile, ImageFile, MediaFile, VideoFile
from .progress import JobProgress

__all__ = [
    "APIPod",
    "AudioFile",
    "ChatCompletionRequest",
    "ChatCompletionResponse",
    "ChatMessage",
    "ImageFile",
    "JobProgress",
    "MediaFile",
    "VideoFile",
]
