"""The upstream apipod toolkit's settings (apipod 1.0.33, apipod/common/settings.py): the same
environment variables with the same defaults, read once at import, for services that read
them (`from apipod.common.settings import APIPOD_PORT`). They are only what the environment
says: svc serves on its own options (svc start --port, --host), and reads APIPOD_COMPUTE and
APIPOD_PROVIDER itself (docs/start.md)."""
from os import environ

from .constants import COMPUTE, PROVIDER

APIPOD_COMPUTE = environ.get("APIPOD_COMPUTE", COMPUTE.DEDICATED.value)
APIPOD_PROVIDER = environ.get("APIPOD_PROVIDER", PROVIDER.LOCALHOST.value)
APIPOD_REGION = environ.get("APIPOD_REGION", "")
APIPOD_SIMULATE = environ.get("APIPOD_SIMULATE", "")
APIPOD_NATIVE = environ.get("APIPOD_NATIVE", "").strip().lower() in ("1", "true", "yes")
APIPOD_HOST = environ.get("APIPOD_HOST", "0.0.0.0")
APIPOD_PORT = int(environ.get("APIPOD_PORT", 8000))
MAX_CONCURRENCY = max(1, int(environ.get("MAX_CONCURRENCY", "1")))
SERVER_DOMAIN = environ.get("SERVER_DOMAIN", "")
DEFAULT_DATE_TIME_FORMAT = environ.get("FTAPI_DATETIME_FORMAT", "%Y-%m-%dT%H:%M:%S.%f%z")
