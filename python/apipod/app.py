"""APIPod: the app object a service file creates, and the endpoints registered on it."""
from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional, Union

from .service_module import SERVICE_MODULE_NAME

# The methods an endpoint may take; the gateway serves these (src/http-methods.ts holds the same list).
HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE")
COMPUTE_CHOICES = ("dedicated", "serverless")
PROVIDER_CHOICES = ("localhost", "runpod", "auto", "scaleway", "azure")

@dataclass
class Endpoint:
    path: str
    methods: list[str]
    function: Callable
    options: dict = field(default_factory=dict)  # queue_size and other per-endpoint settings


class APIPod:
    def __init__(self, title: Optional[str] = None, compute: str = "dedicated", provider: str = "localhost",
                 backend: Optional[str] = None, lifespan: Optional[Callable] = None, **options):
        self.title = title
        self.compute = _choose("compute", compute, COMPUTE_CHOICES)
        self.provider = _choose("provider", provider, PROVIDER_CHOICES)
        self.backend = backend  # accepted for compatibility; svc picks the server itself
        self.lifespan = lifespan
        self.options = options
        self.endpoints: list[Endpoint] = []

    def endpoint(self, path: Union[str, Callable, None] = None,
                 methods: Union[str, Iterable[str], None] = None, **options):
        """Registers a function as an endpoint: `@app.endpoint("/path")`, or bare `@app.endpoint`
        for the path "/<function name>". The default method is POST."""
        if callable(path):  # used bare, without parentheses
            return self.endpoint()(path)
        # Checked here, so a bad method fails the import on the decorator's own line.
        checked_methods = _normalise_methods(methods)

        def register(function: Callable) -> Callable:
            self._add(Endpoint(_normalise_path(path or function.__name__), list(checked_methods),
                               function, options))
            return function

        return register

    def post(self, path: Optional[str] = None, **options):
        return self.endpoint(path, methods=["POST"], **options)

    def get(self, path: Optional[str] = None, **options):
        return self.endpoint(path, methods=["GET"], **options)

    def start(self) -> None:
        """Serves the calling file, like `svc start <file>`; extra command-line arguments pass on."""
        caller = sys._getframe(1)
        if caller.f_globals.get("__name__") == SERVICE_MODULE_NAME:
            return  # a worker is importing the service: it is being served already
        service_file = os.path.abspath(caller.f_code.co_filename)
        svc = shutil.which("svc")
        if svc is None:
            print(
                "apipod: svc is not installed (no `svc` on PATH). Install it with `npm install -g .` "
                f"in a clone of svc, then run `svc start {service_file}`; or run it once with "
                f"`npx svc start {service_file}`.",
                file=sys.stderr,
            )
            sys.exit(1)
        os.execvp(svc, [svc, "start", service_file, *sys.argv[1:]])  # exec: signals reach svc directly

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
