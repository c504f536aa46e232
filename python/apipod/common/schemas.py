"""`apipod.common.schemas`: where the upstream apipod toolkit re-exports socaity-schemas'
request and response models (`EmbeddingRequest`, `ImageGenerationRequest`, ...). Those come
from socaity-schemas itself when the service's environment has it, so a service annotating
with them gets the same pydantic classes as under upstream; without it, importing one raises
an ImportError saying to install it. ChatCompletionRequest, ChatCompletionResponse and
ChatMessage are svc's own (upstream's README imports them from here), which svc's chat
endpoints and its OpenAI-compatible routes are built on."""
from ..chat import ChatCompletionRequest, ChatCompletionResponse, ChatMessage
from .._runtime.socaity_schemas_lookup import socaity_schema

__all__ = ["ChatCompletionRequest", "ChatCompletionResponse", "ChatMessage"]


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)  # module dunders (__path__, __file__, ...) are never schemas
    return socaity_schema(__name__, name)
