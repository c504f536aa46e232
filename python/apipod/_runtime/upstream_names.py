"""Names and modules of the upstream apipod toolkit (SocAIty's, on PyPI) that svc's toolkit does
not provide.

A service importing one gets an ImportError that says so and what to do instead, rather than
a bare "cannot import name" or "No module named". Sources: `__all__` of apipod 1.0.33 and the
module trees of apipod 1.0.1 to 1.0.33, less what svc's toolkit provides. What is left is the
upstream server's own machinery (its FastAPI and runpod routers, job queue, stream store, model
presets and deploy tooling), whose work svc's gateway and CLI do.
"""
from __future__ import annotations

import sys

_MODEL_PRESETS = ("one of upstream's model-loading presets: load the model yourself (at import or in "
                  "APIPod(lifespan=...)) and serve it from @app.endpoint functions")
_JOB_QUEUE = "part of upstream's own job queue: svc's gateway runs the jobs (svc start --compute serverless)"
_STREAMING = ("part of upstream's own streaming: an endpoint that yields streams through svc's gateway "
              "(Accept: text/event-stream)")
_SERVER = ("part of upstream's FastAPI and runpod server: svc's gateway and worker read the endpoints' "
           "signatures, convert uploads and serve the routes; register endpoints with @app.endpoint")
_DEPLOY = "part of upstream's deploy tooling: svc scan and svc build do this"
_RUNPOD_PROGRESS = ("upstream's progress reporter for its runpod worker: svc's provider runpod (svc start "
                    "--provider runpod) reports a JobProgress's status itself")
_OLD_SETTINGS = "apipod 1.0.1 to 1.0.4's settings: apipod.common.settings has the same values"

# Module -> name -> what it is upstream and what to do instead.
NOT_PROVIDED: dict[str, dict[str, str]] = {
    "apipod": {
        **{name: _MODEL_PRESETS for name in (
            "serve", "Chat", "Model", "Transformers", "TransformersLLM", "TransformersVLM", "VLM", "VLLMChat",
            "IncludeHandle", "include", "include_hf")},
        **{name: _JOB_QUEUE for name in ("BaseJob", "LocalJob")},
        **{name: _STREAMING for name in ("StreamStore", "LocalStreamStore", "StreamProducer")},
    },
    **{module: {"JobResultFactory": _JOB_QUEUE}
       for module in ("apipod.engine.jobs.job_result", "apipod.core.job.job_result")},
    **{module: {"JobProgressRunpod": _RUNPOD_PROGRESS}
       for module in ("apipod.engine.jobs.job_progress", "apipod.core.job.job_progress")},
}

# Upstream module (and the modules under it) -> what it is upstream and what to do instead.
# Longer names win: apipod.engine.jobs.base_job is the job queue's, apipod.engine.jobs is provided.
NOT_PROVIDED_MODULES: dict[str, str] = {
    "apipod.serve": _MODEL_PRESETS,
    "apipod.models": _MODEL_PRESETS,
    "apipod.engine.jobs.base_job": _JOB_QUEUE,
    "apipod.engine.queue": _JOB_QUEUE,
    "apipod.core.job.base_job": _JOB_QUEUE,
    "apipod.core.job_queues": _JOB_QUEUE,
    "apipod.engine.streaming": _STREAMING,
    "apipod.engine.backend": _SERVER,
    "apipod.engine.base_backend": _SERVER,
    "apipod.engine.compatibility": _SERVER,
    "apipod.engine.endpoint_config": _SERVER,
    "apipod.engine.files": _SERVER,
    "apipod.engine.llm": _SERVER,
    "apipod.engine.signatures": _SERVER,
    "apipod.engine.utils": _SERVER,
    "apipod.core.routers": _SERVER,
    "apipod.core.utils": _SERVER,
    "apipod.compatibility": _SERVER,
    "apipod.apipod": _SERVER.replace("register endpoints with @app.endpoint", "import APIPod from apipod"),
    "apipod.deploy": _DEPLOY,
    "apipod.cli": _DEPLOY,
    "apipod.settings": _OLD_SETTINGS,
}


class NotProvidedBySvc(ImportError):
    """An upstream apipod name svc's toolkit does not have. An ImportError, since `from apipod
    import X` reports an AttributeError from a module's __getattr__ only as "cannot import name"."""


def missing_name(module: str, name: str) -> Exception:
    """What a module's __getattr__ raises for `name`."""
    reason = NOT_PROVIDED.get(module, {}).get(name)
    if reason is None:
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    return _not_provided(f"{module}.{name}", reason, name=name)


def missing_module_reason(module: str):
    """Why svc's toolkit lacks upstream's `module` (or the package it is in); None when upstream
    never had it."""
    parts = module.split(".")
    for end in range(len(parts), 1, -1):
        reason = NOT_PROVIDED_MODULES.get(".".join(parts[:end]))
        if reason is not None:
            return reason
    return None


class _UpstreamModuleFinder:
    """Last on sys.meta_path, so it is asked only about modules no other finder has: of those, an
    upstream apipod module gets its reason instead of "No module named". A finder needs only
    `find_spec` (PEP 451); importlib.abc's base class would load importlib.resources, pathlib
    and tempfile into every worker."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("apipod."):
            return None
        reason = missing_module_reason(fullname)
        if reason is None:
            return None
        raise _not_provided(fullname, reason, name=fullname)


def install_module_finder() -> None:
    if not any(isinstance(finder, _UpstreamModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(_UpstreamModuleFinder())


def _not_provided(what: str, reason: str, name: str) -> NotProvidedBySvc:
    return NotProvidedBySvc(f"{what} is {reason}. svc's toolkit does not provide it (see svc's docs/apipod-toolkit.md)",
                            name=name)
