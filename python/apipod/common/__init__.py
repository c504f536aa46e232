"""`apipod.common`: the upstream apipod toolkit's module path, kept so its services' imports
(`from apipod.common.schemas import EmbeddingRequest`, `from apipod.common import constants`,
`apipod.common.exceptions`, `apipod.common.settings`) work under svc."""
