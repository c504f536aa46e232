"""Names of the upstream apipod toolkit (SocAIty's, on PyPI) that svc's toolkit does not provide.

A service importing one gets an ImportError that says so and what to do instead, rather than
a bare "cannot import name". Source: `__all__` of apipod 1.0.33 and its
`apipod/common/schemas.py`, less what svc's toolkit provides.
"""
from __future__ import annotations

_MODEL_PRESETS = ("one of upstream's model-loading presets: load the model yourself (at import or in "
                  "APIPod(lifespan=...)) and serve it from @app.endpoint functions")
_JOB_QUEUE = "part of upstream's own job queue: svc's gateway runs the jobs (svc start --compute serverless)"
_STREAMING = ("part of upstream's own streaming: an endpoint that yields streams through svc's gateway "
              "(Accept: text/event-stream)")
_SCHEMA = ("a schema of the socaity-schemas package: svc's toolkit has ChatCompletionRequest and "
           "ChatCompletionResponse; install socaity-schemas for the others, or declare the fields yourself")

# Module -> name -> what it is upstream and what to do instead.
NOT_PROVIDED: dict[str, dict[str, str]] = {
    "apipod": {
        **{name: _MODEL_PRESETS for name in (
            "serve", "Chat", "Model", "Transformers", "VLM", "VLLMChat", "IncludeHandle", "include", "include_hf")},
        **{name: _JOB_QUEUE for name in ("BaseJob", "LocalJob")},
        **{name: _STREAMING for name in ("StreamStore", "LocalStreamStore", "StreamProducer")},
    },
    "apipod.common.schemas": {name: _SCHEMA for name in (
        "ChatCompletionChoice", "ChatCompletionMessage", "CompletionChoice", "CompletionRequest",
        "CompletionResponse", "EmbeddingData", "EmbeddingRequest", "EmbeddingResponse", "Generation3DRequest",
        "Generation3DResponse", "ImageGenerationRequest", "ImageGenerationResponse", "MultimodalEmbeddingRequest",
        "MultimodalEmbeddingResponse", "SpeechRequest", "SpeechResponse", "VideoGenerationRequest",
        "VideoGenerationResponse")},
}


class NotProvidedBySvc(ImportError):
    """An upstream apipod name svc's toolkit does not have. An ImportError, since `from apipod
    import X` reports an AttributeError from a module's __getattr__ only as "cannot import name"."""


def missing_name(module: str, name: str) -> Exception:
    """What a module's __getattr__ raises for `name`."""
    reason = NOT_PROVIDED.get(module, {}).get(name)
    if reason is None:
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    return NotProvidedBySvc(f"{module}.{name} is {reason}. svc's toolkit does not provide it (svc's README: "
                            "\"Services written for the apipod toolkit\")", name=name)
