"""The ENDPOINT object a worker reports in `ready` (see docs/worker-protocol.md)."""
from __future__ import annotations

import inspect
from typing import Callable

from ..app import Endpoint
from ..chat import ChatCompletionRequest
from .parameter_docs import split_parameter_docs
from .schema import SchemaBuilder, UnsupportedType, add_default, allows_null
from .signature import RETURN, EndpointSchemaError, EndpointSignature, strip_annotated, union_members
from .socaity_schemas_lookup import is_schema_endpoint_request


def describe_endpoint(endpoint: Endpoint, signature: EndpointSignature) -> dict:
    target = inspect.unwrap(endpoint.function)
    is_async_generator = inspect.isasyncgenfunction(target)
    schema = input_schema(endpoint.path, endpoint.function, signature)
    doc = _document_parameters(inspect.getdoc(endpoint.function), schema["properties"],
                               {parameter.name for parameter in signature.parameters})
    return {
        "path": endpoint.path,
        "methods": list(endpoint.methods),
        "function": getattr(endpoint.function, "__name__", type(endpoint.function).__name__),
        "doc": doc,
        "is_async": inspect.iscoroutinefunction(target) or is_async_generator,
        "is_generator": inspect.isgeneratorfunction(target) or is_async_generator,
        "is_chat": any(_is_chat_request(parameter.annotation) for parameter in signature.parameters
                       if not parameter.is_injected),
        # The apipod package's use_queue=False: answered directly under serverless compute too.
        "direct": endpoint.options.get("use_queue") is False,
        "body_parameter": _body_parameter(signature),
        "input_schema": schema,
        "output_schema": output_schema(endpoint.path, endpoint.function, signature),
        "injected": [parameter.name for parameter in signature.parameters if parameter.is_injected],
    }


def input_schema(path: str, function: Callable, signature: EndpointSignature) -> dict:
    builder = SchemaBuilder()
    properties, required = {}, []
    additional_properties = False
    for parameter in signature.parameters:
        if parameter.is_injected:
            continue
        try:
            schema = builder.describe(parameter.annotation)
        except UnsupportedType as error:
            raise EndpointSchemaError(path, function, parameter.name, str(error)) from None
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:  # **options: any other names
            additional_properties = schema or True
            continue
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:  # *items: an optional list
            schema = {"type": "array", "items": schema}
        elif parameter.has_default:
            if parameter.default is None and not allows_null(schema):
                schema = {"anyOf": [schema, {"type": "null"}]}  # `x: str = None` takes null too
            add_default(schema, parameter.default)
        elif parameter.is_none_when_left_out:
            add_default(schema, None)
        else:
            required.append(parameter.name)
        properties[parameter.name] = schema
    document = {"type": "object", "properties": properties, "required": required,
                "additionalProperties": additional_properties}
    if builder.definitions:
        document["$defs"] = builder.definitions
    return document


def output_schema(path: str, function: Callable, signature: EndpointSignature) -> dict:
    builder = SchemaBuilder(for_output=True)
    try:
        document = builder.describe(signature.return_annotation)
    except UnsupportedType as error:
        raise EndpointSchemaError(path, function, RETURN, str(error)) from None
    if builder.definitions:
        document["$defs"] = builder.definitions
    return document


def _document_parameters(doc: str | None, properties: dict, names: set[str]) -> str | None:
    """Gives each parameter its docstring help as its schema's `description` (an Annotated
    description wins), so /openapi.json and /docs show it by the parameter; the docstring keeps
    the rest. It keeps its parameter section too when that names a parameter the function
    lacks, so no text is lost (`**options` and injected parameters are the function's)."""
    rest, described = split_parameter_docs(doc)
    for name, text in described.items():
        if name in properties and text:
            properties[name].setdefault("description", text)
    return rest if all(name in names for name in described) else doc


def _is_chat_request(annotation) -> bool:
    base, _ = strip_annotated(annotation)
    candidates = union_members(base) or (base,)
    return any(isinstance(candidate, type) and issubclass(candidate, ChatCompletionRequest)
               for candidate in candidates)


def _body_parameter(signature: EndpointSignature):
    """The parameter the whole body is, as the apipod toolkit reads a schema endpoint: the only
    one a client sends, annotated with a socaity-schemas request model (Optional too)."""
    sent = [parameter for parameter in signature.parameters if not parameter.is_injected]
    if len(sent) != 1 or sent[0].kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY):
        return None
    base, _ = strip_annotated(sent[0].annotation)
    candidates = union_members(base) or (base,)
    return sent[0].name if any(is_schema_endpoint_request(candidate) for candidate in candidates) else None
