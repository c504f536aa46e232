"""`apipod.common`: the upstream apipod toolkit's module path, kept so its services' imports
(`from apipod.common.schemas import ChatCompletionRequest`, `from apipod.common import
constants`) work under svc."""
