"""The upstream apipod toolkit's constants (apipod 1.0.33, apipod/common/constants.py), for
services that name them. svc reads compute and provider as strings; COMPUTE.SERVERLESS.value
is "serverless"."""
from enum import Enum


class COMPUTE(Enum):
    DEDICATED = "dedicated"
    SERVERLESS = "serverless"


class PROVIDER(Enum):
    AUTO = "auto"
    LOCALHOST = "localhost"
    SOCAITY = "socaity"
    RUNPOD = "runpod"
    SCALEWAY = "scaleway"
    AZURE = "azure"


class SERVER_HEALTH(Enum):
    INITIALIZING = "initializing"
    BOOTING = "booting"
    RUNNING = "running"
    BUSY = "busy"
    ERROR = "error"
