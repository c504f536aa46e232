"""APIPod: the app object a service file creates, and the endpoints registered on it."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, TypeVar, Union, overload

from ._runtime.service_module import SERVICE_MODULE_NAME
from ._runtime.svc_executable import find_svc, install_advice
from ._runtime.upstream_arguments import resolve_target, warn_unread

# The methods an endpoint may take; the gateway serves these (src/http-methods.ts holds the same list).
HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE")
COMPUTE_CHOICES = ("dedicated", "serverless")
PROVIDER_CHOICES = ("localhost", "runpod", "auto", "scaleway", "azure")

# A decorator hands back the function it registers, so an editor keeps its signature.
Function = TypeVar("Function", bound=Callable[..., Any])

@dataclass
class Endpoint:
    path: str
    methods: list[str]
    function: Callable
    options: dict = field(default_factory=dict)  # queue_size and other per-endpoint settings


class APIPod:
    def __init__(self, title: Optional[str] = None, compute: Optional[str] = None, provider: Optional[str] = None,
                 backend: Optional[str] = None, lifespan: Optional[Callable] = None, *,
                 simulate: Optional[str] = None, direct: Optional[bool] = None, **options):
        """compute "dedicated" (default) or "serverless", provider "localhost" (default) or
        another of PROVIDER_CHOICES; or the upstream toolkit's `simulate="serverless"`
        ("{compute}-{provider}"; direct=True with "serverless-runpod" for the provider's worker)."""
        self.title = title
        compute, provider = resolve_target(compute, provider, simulate, direct)
        self.compute = _choose("compute", compute or "dedicated", COMPUTE_CHOICES)
        self.provider = _choose("provider", provider or "localhost", PROVIDER_CHOICES)
        self.backend = backend  # accepted for compatibility; svc picks the server itself
        self.lifespan = lifespan
        self.options = options
        warn_unread(options)
        self.endpoints: list[Endpoint] = []

    @overload
    def endpoint(self, path: Function, methods: Union[str, Iterable[str], None] = None, **options: Any) -> Function: ...

    @overload
    def endpoint(self, path: Optional[str] = None, methods: Union[str, Iterable[str], None] = None,
                 **options: Any) -> Callable[[Function], Function]: ...

    def endpoint(self, path: Union[str, Callable, None] = None,
                 methods: Union[str, Iterable[str], None] = None, **options: Any) -> Any:
        """Registers a function as an endpoint: `@app.endpoint("/path")`, or bare `@app.endpoint`
        for the path "/<function name>". The default method is POST."""
        if callable(path):  # used bare, without parentheses
            return self.endpoint()(path)
        # Checked here, so a bad method fails the import on the decorator's own line.
        checked_methods = _normalise_methods(methods)

        def register(function: Function) -> Function:
            self._add(Endpoint(_normalise_path(path or function.__name__), list(checked_methods),
                               function, options))
            return function

        return register

    def post(self, path: Optional[str] = None, **options: Any) -> Callable[[Function], Function]:
        return self.endpoint(path, methods=["POST"], **options)

    def get(self, path: Optional[str] = None, **options: Any) -> Callable[[Function], Function]:
        return self.endpoint(path, methods=["GET"], **options)

    # The upstream toolkit's APIPod is a FastAPI APIRouter, so a service may register routes with
    # the router's own methods too; svc serves them as endpoints. Their FastAPI-only options
    # (response_model, status_code, tags, ...) are accepted and not read.
    def put(self, path: Optional[str] = None, **options: Any) -> Callable[[Function], Function]:
        return self.endpoint(path, methods=["PUT"], **options)

    def patch(self, path: Optional[str] = None, **options: Any) -> Callable[[Function], Function]:
        return self.endpoint(path, methods=["PATCH"], **options)

    def delete(self, path: Optional[str] = None, **options: Any) -> Callable[[Function], Function]:
        return self.endpoint(path, methods=["DELETE"], **options)

    def api_route(self, path: str, methods: Union[str, Iterable[str], None] = None,
                  **options: Any) -> Callable[[Function], Function]:
        """FastAPI's `@router.api_route(path, methods=[...])`; GET when methods is None, as FastAPI's."""
        return self.endpoint(path, methods=["GET"] if methods is None else methods, **options)

    def add_api_route(self, path: str, endpoint: Callable, methods: Union[str, Iterable[str], None] = None,
                      **options: Any) -> None:
        """FastAPI's `router.add_api_route(path, function, methods=[...])`; GET when methods is None."""
        self.api_route(path, methods, **options)(endpoint)

    def include_router(self, router: "APIPod", prefix: str = "", **options) -> None:
        """Serves another APIPod's endpoints (those it has now) under `prefix`, as the upstream
        toolkit's include_router mounts a child APIPod (1.0.33); its FastAPI options are not read."""
        if not isinstance(router, APIPod):
            raise TypeError(f"include_router: svc serves the endpoints of another APIPod, and {type(router).__name__} is not "
                            "one; register its functions with @app.endpoint(\"/path\")")
        mount = "/" + prefix.strip("/") if prefix.strip("/") else ""
        for endpoint in router.endpoints:
            self._add(Endpoint(_normalise_path(mount + endpoint.path), list(endpoint.methods), endpoint.function,
                               dict(endpoint.options)))

    # *args and **kwargs take the rest of the upstream toolkit's start(), which its server ignores too.
    def start(self, port: Optional[int] = None, host: Optional[str] = None, *args, **kwargs) -> None:
        """Serves the calling file, like `svc start <file>`, on `port` and `host` when given
        (svc's --port and --host); command-line arguments pass on after them, so they win."""
        caller = sys._getframe(1)
        if caller.f_globals.get("__name__") == SERVICE_MODULE_NAME:
            # A worker is importing the service: it is being served already, on svc start's
            # --port and --host (which were these when `python service.py` ran svc start).
            return
        service_file = os.path.abspath(caller.f_code.co_filename)
        chosen = [*(["--port", str(port)] if port is not None else []), *(["--host", host] if host is not None else [])]
        command = " ".join(["svc start", service_file, *chosen])
        svc = find_svc()
        if svc is None:
            print(install_advice(command), file=sys.stderr)
            sys.exit(1)
        os.execv(svc[0], [*svc, "start", service_file, *chosen, *sys.argv[1:]])  # exec: signals reach svc directly

    def _add(self, endpoint: Endpoint) -> None:
        # A call names its endpoint by path alone, so one path is one function.
        for existing in self.endpoints:
            if existing.path == endpoint.path:
                raise ValueError(
                    f"{endpoint.path} is already served by {existing.function.__name__}(); "
                    f"give {endpoint.function.__name__}() another path, or one function several methods"
                )
        self.endpoints.append(endpoint)


def _choose(option: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ValueError(f"APIPod({option}={value!r}): {option} must be one of {', '.join(choices)}")
    return value


def _normalise_path(path: str) -> str:
    if "{" in path or "}" in path:
        # Served literally, "/items/{id}" would answer only at "/items/%7Bid%7D", while the
        # OpenAPI document promised a path parameter.
        raise ValueError(f"{path}: path parameters are not supported; take them as parameters of the "
                         "function, which callers send in the body (or the query string of a GET)")
    return path if path.startswith("/") else "/" + path


def _normalise_methods(methods: Union[str, Iterable[str], None]) -> list[str]:
    """Upper-cased, each once; a method the gateway cannot serve is refused here rather than
    as an internal error when it starts."""
    if methods is None:
        return ["POST"]
    normalised: list[str] = []
    for method in [methods] if isinstance(methods, str) else list(methods):
        name = method.upper() if isinstance(method, str) else method
        if name not in HTTP_METHODS:
            several = ' (several are a list: methods=["GET", "POST"])' if isinstance(method, str) and "," in method else ""
            raise ValueError(f"methods: {method!r} is not an HTTP method svc serves ({', '.join(HTTP_METHODS)}){several}")
        if name not in normalised:
            normalised.append(name)
    if not normalised:
        raise ValueError("methods: the list is empty; name at least one HTTP method, or leave methods out for POST")
    return normalised
