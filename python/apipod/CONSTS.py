"""`apipod.CONSTS`, the upstream apipod toolkit's constants module of 1.0.1 to 1.0.4 (later
apipod.common.constants), for services that still import it."""
from enum import Enum

from .common.constants import COMPUTE, PROVIDER, SERVER_HEALTH


class ORCHESTRATOR(Enum):
    SOCAITY = "socaity"
    LOCAL = "local"


__all__ = ["COMPUTE", "ORCHESTRATOR", "PROVIDER", "SERVER_HEALTH"]
