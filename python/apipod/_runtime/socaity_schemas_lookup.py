"""socaity-schemas' request and response models by name, for `apipod.common.schemas`, which
the upstream apipod toolkit fills from that package. Its names moved between versions: apipod
1.0.10 to 1.0.28 import them from `socaity_schemas` itself, 1.0.30 on from the modules under
`socaity_schemas.public.inference` (socaity-schemas 0.1.12 no longer re-exports them).
"""
from __future__ import annotations

import importlib
from typing import Any

# Where socaity-schemas keeps each name, newest layout first.
_MODULES = (
    "socaity_schemas.public.inference.language",
    "socaity_schemas.public.inference.generation",
    "socaity_schemas.public.inference.media",
    "socaity_schemas",
)

# Every name an apipod 1.0.x release has in apipod.common.schemas besides svc's chat classes:
# the `from socaity_schemas import (...)` lists of 1.0.10, 1.0.20 and 1.0.28, which hold
# 1.0.30's and 1.0.33's, and the names of 1.0.5's own models of the same fields.
UPSTREAM_SCHEMA_NAMES = frozenset((
    "APIPodSchemaBase", "AudioContentPart", "AudioFileModel", "ChatCompletionChoice", "ChatCompletionChunk",
    "ChatCompletionMessage", "ChatDelta", "ChatStreamChoice", "ChoiceLogprobs", "CompletionChoice",
    "CompletionRequest", "CompletionResponse", "ContentPart", "CreateVoiceRequest", "EmbeddingData",
    "EmbeddingRequest", "EmbeddingResponse", "FileModel", "FunctionDefinition", "Generation3DRequest",
    "Generation3DResponse", "ImageContentPart", "ImageFileModel", "ImageGenerationRequest",
    "ImageGenerationResponse", "JSONSchemaSpec", "MultimodalEmbeddingData", "MultimodalEmbeddingRequest",
    "MultimodalEmbeddingResponse", "NamedToolChoice", "ResponseFormat", "SpeechRequest",
    "SpeechResponse", "StreamOptions", "TextContentPart", "ThreeDFileModel", "TokenLogprob", "Tool", "ToolCall",
    "ToolCallDelta", "ToolCallDeltaFunction", "ToolCallFunction", "ToolChoice", "TopLogprob",
    "TranscriptionRequest", "TranscriptionResponse", "TranscriptionSegment", "TranscriptionWord", "Usage",
    "VideoFileModel", "VideoGenerationRequest", "VideoGenerationResponse", "VisionData", "VisionLabel",
    "VisionRequest", "VisionResponse", "VoiceConversionRequest", "VoiceConversionResponse", "VoiceResponse",
))


class SchemaNotAvailable(ImportError):
    """An upstream schema name the service's environment cannot give: an ImportError, since
    `from apipod.common.schemas import X` reports an AttributeError only as "cannot import name"."""


def socaity_schema(module: str, name: str) -> Any:
    """socaity-schemas' class `name`; an error saying what to install when it cannot be had."""
    try:
        importlib.import_module("socaity_schemas")
    except ImportError:
        if name not in UPSTREAM_SCHEMA_NAMES:
            raise AttributeError(f"module {module!r} has no attribute {name!r}") from None
        raise SchemaNotAvailable(
            f"{module}.{name} is socaity-schemas' {name}, as in the apipod toolkit, and the service's environment "
            f"does not have socaity-schemas: install it (pip install socaity-schemas, and list it in "
            f"requirements.txt)", name=name) from None
    for candidate in _MODULES:
        try:
            found = getattr(importlib.import_module(candidate), name, None)
        except ImportError:
            continue
        if found is not None:
            return found
    if name not in UPSTREAM_SCHEMA_NAMES:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    raise SchemaNotAvailable(
        f"{module}.{name}: the installed socaity-schemas ({_version()}) has no {name}; install the "
        "socaity-schemas release your apipod version was built with", name=name)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("socaity-schemas")
    except PackageNotFoundError:
        return "version unknown"


# The request models the apipod toolkit serves as "schema endpoints", whose body is the model
# itself (apipod 1.0.33, engine/backend/schema_resolve.py, SCHEMA_REGISTRY): an endpoint taking
# one of them, or a subclass, as its only parameter.
SCHEMA_ENDPOINT_REQUESTS = frozenset((
    "SpaineChatCompletionRequest", "AgentChatCompletionRequest", "ChatCompletionRequest", "CompletionRequest",
    "EmbeddingRequest", "ImageGenerationRequest", "VideoGenerationRequest", "TranscriptionRequest", "SpeechRequest",
    "CreateVoiceRequest", "VoiceConversionRequest", "Generation3DRequest", "VisionRequest",
    "MultimodalEmbeddingRequest",
))


def is_schema_endpoint_request(cls: Any) -> bool:
    """`cls` is one of socaity-schemas' SCHEMA_ENDPOINT_REQUESTS or a subclass of one."""
    return isinstance(cls, type) and any(
        base.__name__ in SCHEMA_ENDPOINT_REQUESTS and base.__module__.split(".")[0] == "socaity_schemas"
        for base in cls.__mro__)
