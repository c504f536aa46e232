"""APIPod(...) arguments of the upstream apipod toolkit that svc reads differently, or not at all.

`simulate="{compute}-{provider}"` (apipod 1.0.33) becomes the compute and provider it runs
locally upstream; `provider="socaity"` (apipod 1.0.8) is served as localhost; arguments that
change what upstream serves but that svc does not read are named in a warning, rather than
dropped in silence. Source: apipod 1.0.33 apipod/api.py (APIPod, _resolve_intent) and the
constructor of its FastAPI router; apipod 1.0.8 apipod/api.py (orchestrator, provider).
"""
from __future__ import annotations

import sys
from typing import Mapping, Optional

from ..common.constants import COMPUTE, PROVIDER

# What simulate= may name: upstream's own COMPUTE and PROVIDER values.
SIMULATE_COMPUTES = tuple(compute.value for compute in COMPUTE)
SIMULATE_PROVIDERS = tuple(provider.value for provider in PROVIDER)
# Providers upstream has no serverless offering on: it warns and runs its local job queue.
_NO_SERVERLESS = ("scaleway", "azure")

# Argument -> what svc does instead.
UNREAD_ARGUMENTS = {
    "orchestrator": "svc start --orchestrator (local or docker) chooses where the service runs",
    "prefix": "svc serves each endpoint at its own path (and under /v1): put the prefix into the paths",
    "app": "svc serves the endpoints itself, not through a FastAPI app",
    "job_queue": "svc's gateway keeps the jobs (svc start --compute serverless, --queue-size)",
    "stream_store": "svc's gateway streams a generator's chunks (Accept: text/event-stream)",
    "dependencies": "FastAPI dependencies do not run under svc: check the request in the function, "
                    "or require a key with SERVICE_API_KEY",
    "on_startup": "use APIPod(lifespan=...)",
    "on_shutdown": "use APIPod(lifespan=...)",
}


def resolve_target(compute: Optional[str], provider: Optional[str], simulate: Optional[str],
                   direct: Optional[bool]) -> tuple[Optional[str], Optional[str]]:
    """(compute, provider) from the arguments, None where none says; svc checks the values."""
    if simulate is not None:
        if compute is not None or provider is not None:
            raise ValueError("APIPod(simulate=...) sets compute and provider itself: give simulate=, or "
                             "compute= and provider=, not both")
        return _simulated(simulate, direct)
    if provider == "socaity":
        warn("APIPod(provider='socaity'): svc does not deploy to SocAIty's platform; it serves the service "
             "itself, with provider localhost")
        return compute, "localhost"
    return compute, provider


def warn_unread(options: Mapping[str, object]) -> None:
    for name in options:
        if name in UNREAD_ARGUMENTS:
            warn(f"APIPod({name}=...) is not read by svc: {UNREAD_ARGUMENTS[name]}")


def warn(message: str) -> None:
    print(f"apipod: {message}", file=sys.stderr)


def simulated_target(target: str, direct: Optional[bool], source: str) -> tuple[str, str, Optional[str]]:
    """What upstream runs locally for the deployment target "{compute}-{provider}" (`simulate=`,
    `apipod simulate TARGET`): (compute, provider, a warning or None); `source` names where the
    target was given, for the messages. Compute defaults to serverless, which is upstream's local
    job queue (svc's serverless compute), or RunPod's own worker for "serverless-runpod" with
    direct (the CLI's --native)."""
    compute, _, provider = str(target).partition("-")
    compute = compute or "serverless"
    if compute not in SIMULATE_COMPUTES:
        raise ValueError(f"{source}: invalid compute {compute!r}; choose from "
                         f"{', '.join(SIMULATE_COMPUTES)}, optionally followed by -provider")
    if provider and provider not in SIMULATE_PROVIDERS:
        raise ValueError(f"{source}: invalid provider {provider!r}; choose from "
                         f"{', '.join(SIMULATE_PROVIDERS)}")
    if compute == "dedicated":
        return "dedicated", "localhost", None
    warning = None
    if provider in _NO_SERVERLESS:
        warning = (f"{source}: {provider} has no serverless offering; serving serverless "
                   "compute with svc's own job queue, as upstream falls back to its local one")
    if provider == "runpod" and direct:
        return "serverless", "runpod", warning
    return "serverless", "localhost", warning


def _simulated(target: str, direct: Optional[bool]) -> tuple[str, str]:
    compute, provider, warning = simulated_target(target, direct, f"APIPod(simulate={target!r})")
    if warning is not None:
        warn(warning)
    return compute, provider
