"""What an endpoint function takes and returns, with every annotation resolved to a type."""
from __future__ import annotations

import inspect
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable

from ..progress import JobProgress

INJECTED_PARAMETER_NAME = "job_progress"
RETURN = "return"  # the key typing uses for the return annotation


class EndpointSchemaError(TypeError):
    """An endpoint whose signature cannot be described; names the endpoint and the parameter."""

    def __init__(self, path: str, function: Callable, parameter: str, reason: str):
        where = "the return annotation" if parameter == RETURN else f"parameter '{parameter}'"
        super().__init__(f"endpoint {path} ({_name_of(function)}): {where}: {reason}")
        self.path = path
        self.parameter = parameter
        # The traceback is svc's own code; the function's place is what the user needs.
        code = getattr(inspect.unwrap(function), "__code__", None)
        self.source = None if code is None else (code.co_filename, code.co_firstlineno, code.co_name)


@dataclass(frozen=True)
class EndpointParameter:
    name: str
    annotation: Any  # typing.Any when unannotated
    kind: inspect._ParameterKind
    default: Any  # inspect.Parameter.empty when the client must send it
    is_injected: bool
    # The function's own default is a FastAPI marker (`File(...)`, `Form("x")`), which upstream's
    # FastAPI reads: the worker passes the value it stands for, never the marker itself.
    passes_default: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not inspect.Parameter.empty

    @property
    def is_none_when_left_out(self) -> bool:
        """`Optional[X]` (or `X | None`) without a default: a client may leave it out and the
        function gets None, as the apipod package (PyPI) treats such a parameter."""
        if self.has_default or self.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            return False
        return type(None) in union_members(strip_annotated(self.annotation)[0])


@dataclass(frozen=True)
class EndpointSignature:
    parameters: list[EndpointParameter]
    return_annotation: Any  # typing.Any when unannotated


def read_signature(path: str, function: Callable) -> EndpointSignature:
    hints = _resolve_annotations(path, function)
    parameters = [
        EndpointParameter(
            name=parameter.name,
            annotation=hints.get(parameter.name, Any),
            kind=parameter.kind,
            default=_default_of(parameter.default),
            is_injected=_is_injected(parameter.name, hints.get(parameter.name, Any)),
            passes_default=_is_fastapi_marker(parameter.default),
        )
        for parameter in inspect.signature(function).parameters.values()
    ]
    return EndpointSignature(parameters, hints.get(RETURN, Any))


def strip_annotated(annotation: Any) -> tuple[Any, tuple]:
    """`Annotated[T, *metadata]` -> (T, metadata); anything else -> (annotation, ())."""
    if typing.get_origin(annotation) is typing.Annotated:
        return annotation.__origin__, annotation.__metadata__
    return annotation, ()


def union_members(annotation: Any) -> tuple:
    """The members of `Union[...]`, `Optional[...]` or `X | Y`; () for anything else."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return ()


def _is_fastapi_marker(default: Any) -> bool:
    """`File(...)`, `Form(None)`, `Query(3)`, `Body(...)`, ...: FastAPI's parameter markers (a
    pydantic FieldInfo each); `Depends(...)` is not one, and stays the function's default."""
    return type(default).__module__ == "fastapi.params" and callable(getattr(default, "is_required", None))


def _default_of(default: Any) -> Any:
    """The default a client may leave out: a FastAPI marker's own (empty when it is required, as
    `File(...)` is), else the function's."""
    if not _is_fastapi_marker(default):
        return default
    if default.is_required():
        return inspect.Parameter.empty
    return default.get_default(call_default_factory=True)


def _is_injected(name: str, annotation: Any) -> bool:
    if name == INJECTED_PARAMETER_NAME:
        return True
    base, _ = strip_annotated(annotation)
    candidates = union_members(base) or (base,)
    return any(isinstance(candidate, type) and issubclass(candidate, JobProgress) for candidate in candidates)


def _resolve_annotations(path: str, function: Callable) -> dict[str, Any]:
    """Resolves each annotation on its own, so an unresolvable one names its parameter."""
    target = inspect.unwrap(function)
    namespace = getattr(target, "__globals__", {})
    resolved = {}
    for name, annotation in getattr(target, "__annotations__", {}).items():
        holder = types.SimpleNamespace(__annotations__={name: annotation})
        try:
            resolved[name] = typing.get_type_hints(holder, globalns=namespace, include_extras=True)[name]
        except Exception as error:
            raise EndpointSchemaError(path, function, name, f"cannot resolve {annotation!r}: {error}") from None
    return resolved


def _name_of(function: Callable) -> str:
    return getattr(function, "__name__", type(function).__name__) + "()"
