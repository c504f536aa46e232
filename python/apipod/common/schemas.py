"""`apipod.common.schemas`, where the upstream apipod toolkit's README imports its chat schemas
from: svc's ChatCompletionRequest and ChatCompletionResponse. Its other schemas (socaity-schemas')
raise an ImportError saying so."""
from ..chat import ChatCompletionRequest, ChatCompletionResponse
from ..upstream_names import missing_name

__all__ = ["ChatCompletionRequest", "ChatCompletionResponse"]


def __getattr__(name: str):
    raise missing_name(__name__, name)
