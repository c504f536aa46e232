"""JSON Schema derived from endpoint signatures."""
import dataclasses
import datetime
import enum
import typing
import unittest
import uuid
from typing import Annotated, Any, AsyncIterator, Dict, Iterator, List, Literal, Optional, Tuple, TypedDict, Union

from apipod import APIPod, AudioFile, ChatCompletionRequest, ImageFile, JobProgress, MediaFile, VideoFile
from apipod._runtime.endpoint_description import describe_endpoint, input_schema, output_schema
from apipod._runtime.schema import MEDIA_OBJECT_SCHEMA
from apipod._runtime.signature import EndpointSchemaError, read_signature


def parameter_schema(annotation, default=None, has_default=False) -> dict:
    """The schema of a one-parameter endpoint's only parameter."""
    if has_default:
        def endpoint(value=default):
            ...
    else:
        def endpoint(value):
            ...
    endpoint.__annotations__ = {"value": annotation}
    schema = input_schema("/test", endpoint, read_signature("/test", endpoint))
    return schema["properties"]["value"]


def return_schema(annotation) -> dict:
    def endpoint():
        ...
    endpoint.__annotations__ = {"return": annotation}
    return output_schema("/test", endpoint, read_signature("/test", endpoint))


class Colour(enum.Enum):
    red = "red"
    green = "green"


class Size(enum.IntEnum):
    small = 1
    large = 2


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0
    label: Optional[str] = None
    tags: list = dataclasses.field(default_factory=list)


class Box(TypedDict, total=False):
    width: int
    height: int


class Named(TypedDict):
    name: str


class Unknown:
    pass


@dataclasses.dataclass
class Node:
    children: List["Node"]


class PrimitiveSchemaTest(unittest.TestCase):
    def test_json_scalars(self):
        self.assertEqual(parameter_schema(str), {"type": "string"})
        self.assertEqual(parameter_schema(int), {"type": "integer"})
        self.assertEqual(parameter_schema(float), {"type": "number"})
        self.assertEqual(parameter_schema(bool), {"type": "boolean"})
        self.assertEqual(parameter_schema(None), {"type": "null"})

    def test_dates_times_and_uuids_are_strings_in_their_standard_format(self):
        self.assertEqual(parameter_schema(datetime.datetime), {"type": "string", "format": "date-time"})
        self.assertEqual(parameter_schema(datetime.date), {"type": "string", "format": "date"})
        self.assertEqual(parameter_schema(datetime.time), {"type": "string", "format": "time"})
        self.assertEqual(parameter_schema(uuid.UUID), {"type": "string", "format": "uuid"})

    def test_any_and_unannotated_accept_anything(self):
        self.assertEqual(parameter_schema(Any), {})

        def endpoint(value):
            ...
        self.assertEqual(input_schema("/t", endpoint, read_signature("/t", endpoint))["properties"], {"value": {}})

    def test_optional_and_union_become_any_of(self):
        # Left out, an Optional gets None: its schema says so.
        self.assertEqual(parameter_schema(Optional[int]), {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None})
        self.assertEqual(parameter_schema(Union[int, str]), {"anyOf": [{"type": "integer"}, {"type": "string"}]})
        self.assertEqual(parameter_schema(int | None), {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None})


class ContainerSchemaTest(unittest.TestCase):
    def test_lists_and_sets(self):
        self.assertEqual(parameter_schema(list[int]), {"type": "array", "items": {"type": "integer"}})
        self.assertEqual(parameter_schema(List[str]), {"type": "array", "items": {"type": "string"}})
        self.assertEqual(parameter_schema(set[str]), {"type": "array", "items": {"type": "string"}})
        self.assertEqual(parameter_schema(list), {"type": "array"})

    def test_tuples(self):
        self.assertEqual(parameter_schema(tuple[int, ...]), {"type": "array", "items": {"type": "integer"}})
        self.assertEqual(parameter_schema(Tuple[int, str]), {
            "type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}], "minItems": 2, "maxItems": 2,
        })

    def test_dicts_with_string_keys(self):
        self.assertEqual(parameter_schema(dict[str, float]),
                         {"type": "object", "additionalProperties": {"type": "number"}})
        self.assertEqual(parameter_schema(Dict[str, Any]), {"type": "object", "additionalProperties": {}})
        self.assertEqual(parameter_schema(dict), {"type": "object"})

    def test_dicts_with_other_keys_are_refused(self):
        with self.assertRaisesRegex(EndpointSchemaError, "keys are strings"):
            parameter_schema(dict[int, str])


class ChoiceSchemaTest(unittest.TestCase):
    def test_literal_is_an_enum_of_its_values(self):
        self.assertEqual(parameter_schema(Literal["512", "768"]), {"enum": ["512", "768"]})

    def test_enum_is_an_enum_of_member_values(self):
        self.assertEqual(parameter_schema(Colour), {"title": "Colour", "enum": ["red", "green"]})
        self.assertEqual(parameter_schema(Size), {"title": "Size", "enum": [1, 2]})

    def test_an_enum_default_is_written_as_its_value(self):
        self.assertEqual(parameter_schema(Colour, Colour.green, has_default=True)["default"], "green")


class StructuredSchemaTest(unittest.TestCase):
    def test_dataclass_fields_with_defaults_are_optional(self):
        self.assertEqual(parameter_schema(Point), {
            "type": "object",
            "title": "Point",
            "properties": {
                "x": {"type": "number"},
                "y": {"type": "number", "default": 0.0},
                "label": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
                "tags": {"type": "array"},
            },
            "required": ["x"],
            "additionalProperties": False,
        })

    def test_typed_dict_required_keys(self):
        self.assertEqual(parameter_schema(Box)["required"], [])
        self.assertEqual(parameter_schema(Named), {
            "type": "object", "title": "Named", "properties": {"name": {"type": "string"}}, "required": ["name"],
        })

    def test_self_referencing_dataclass_is_refused_clearly(self):
        with self.assertRaisesRegex(EndpointSchemaError, "refers to itself"):
            parameter_schema(Node)

    def test_pydantic_models_use_their_own_schema_with_definitions_at_the_root(self):
        try:
            import pydantic
        except ImportError:
            self.skipTest("pydantic is not installed")

        class Inner(pydantic.BaseModel):
            level: int

        class Outer(pydantic.BaseModel):
            name: str
            inner: Inner

        def endpoint(value: Outer):
            ...
        schema = input_schema("/t", endpoint, read_signature("/t", endpoint))
        self.assertEqual(schema["properties"]["value"]["properties"]["inner"], {"$ref": "#/$defs/Inner"})
        self.assertEqual(schema["$defs"]["Inner"]["properties"]["level"]["type"], "integer")

    def test_annotated_constraints_become_keywords(self):
        self.assertEqual(parameter_schema(Annotated[str, "The prompt"]), {"type": "string", "description": "The prompt"})
        try:
            from pydantic import Field
        except ImportError:
            self.skipTest("pydantic is not installed")
        self.assertEqual(parameter_schema(Annotated[float, Field(ge=0, le=1, description="How much")]),
                         {"type": "number", "minimum": 0, "maximum": 1, "description": "How much"})
        self.assertEqual(parameter_schema(Annotated[list[int], Field(max_length=3)]),
                         {"type": "array", "items": {"type": "integer"}, "maxItems": 3})


class MediaSchemaTest(unittest.TestCase):
    def test_media_parameters_take_a_string_or_a_media_object(self):
        for media_class, kind in ((MediaFile, "file"), (ImageFile, "image"), (AudioFile, "audio"), (VideoFile, "video")):
            self.assertEqual(parameter_schema(media_class),
                             {"x-media-type": kind, "anyOf": [{"type": "string"}, MEDIA_OBJECT_SCHEMA]})

    def test_bytes_parameters_are_files(self):
        self.assertEqual(parameter_schema(bytes)["x-media-type"], "file")

    def test_media_results_are_media_objects(self):
        self.assertEqual(return_schema(ImageFile), {"x-media-type": "image", **MEDIA_OBJECT_SCHEMA})


class ChatSchemaTest(unittest.TestCase):
    def test_a_chat_request_is_an_open_object_that_needs_messages(self):
        schema = parameter_schema(ChatCompletionRequest)
        self.assertEqual(schema["type"], "object")
        self.assertEqual(schema["required"], ["messages"])
        self.assertIs(schema["additionalProperties"], True)


class SignatureSchemaTest(unittest.TestCase):
    def test_defaults_make_parameters_optional_and_are_included(self):
        def endpoint(prompt: str, steps: int = 20, seeds: list[int] = [], weird: object = object()):
            ...
        schema = input_schema("/t", endpoint, read_signature("/t", endpoint))
        self.assertEqual(schema["required"], ["prompt"])
        self.assertEqual(schema["properties"]["steps"], {"type": "integer", "default": 20})
        self.assertEqual(schema["properties"]["seeds"], {"type": "array", "items": {"type": "integer"}, "default": []})
        self.assertNotIn("default", schema["properties"]["weird"])

    def test_a_none_default_allows_null(self):
        self.assertEqual(parameter_schema(str, None, has_default=True),
                         {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None})

    def test_an_optional_without_a_default_is_not_required_and_defaults_to_null(self):
        def endpoint(prompt: str, seed: Optional[int], mask: "ImageFile | None", count: Annotated[Optional[int], "n"],
                     anything: Any):
            ...
        schema = input_schema("/t", endpoint, read_signature("/t", endpoint))
        self.assertEqual(schema["required"], ["prompt", "anything"])
        self.assertEqual(schema["properties"]["seed"], {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None})
        self.assertIsNone(schema["properties"]["mask"]["default"])
        self.assertIsNone(schema["properties"]["count"]["default"])

    def test_job_progress_is_injected_and_absent_from_the_schema(self):
        def endpoint(prompt: str, tracker: JobProgress, maybe: Optional[JobProgress] = None, job_progress=None):
            ...
        description = _describe(endpoint)
        self.assertEqual(description["injected"], ["tracker", "maybe", "job_progress"])
        self.assertEqual(list(description["input_schema"]["properties"]), ["prompt"])

    def test_star_parameters(self):
        def endpoint(*images: bytes, scale: int = 2, **options: str):
            ...
        schema = input_schema("/t", endpoint, read_signature("/t", endpoint))
        self.assertEqual(schema["properties"]["images"]["type"], "array")
        self.assertEqual(schema["additionalProperties"], {"type": "string"})
        self.assertEqual(schema["required"], [])

    def test_generators_describe_their_result_as_the_list_of_chunks(self):
        self.assertEqual(return_schema(Iterator[str]), {"type": "array", "items": {"type": "string"}})
        self.assertEqual(return_schema(AsyncIterator[int]), {"type": "array", "items": {"type": "integer"}})

    def test_no_return_annotation_is_an_empty_schema(self):
        self.assertEqual(return_schema(Any), {})

    def test_flags_and_docstring(self):
        async def chat(request: ChatCompletionRequest) -> AsyncIterator[str]:
            """Streams a reply."""
            yield "hi"
        description = _describe(chat, "/chat")
        self.assertEqual(description["doc"], "Streams a reply.")
        self.assertTrue(description["is_async"])
        self.assertTrue(description["is_generator"])
        self.assertTrue(description["is_chat"])

    def test_use_queue_false_marks_an_endpoint_answered_directly(self):
        def ping() -> str:
            ...
        app = APIPod()
        app.endpoint("/ping", use_queue=False)(ping)
        app.endpoint("/queued", use_queue=True)(ping)
        app.endpoint("/default")(ping)
        self.assertEqual([describe_endpoint(endpoint, read_signature(endpoint.path, ping))["direct"] for endpoint in app.endpoints],
                         [True, False, False])

    def test_docstring_parameter_help_becomes_each_property_description(self):
        def endpoint(prompt: str, steps: Annotated[int, "From the annotation."] = 4, **options: str):
            """Draws.

            Args:
                prompt: What to draw.
                steps: From the docstring.
                **options: Passed on.
            """
        described = _describe(endpoint)
        properties = described["input_schema"]["properties"]
        self.assertEqual(properties["prompt"], {"type": "string", "description": "What to draw."})
        self.assertEqual(properties["steps"]["description"], "From the annotation.")
        self.assertEqual(described["doc"], "Draws.")

    def test_a_docstring_naming_a_parameter_the_function_lacks_keeps_its_section(self):
        def endpoint(prompt: str):
            """Draws.

            Args:
                prompt: What to draw.
                seed: Gone since 1.2.
            """
        described = _describe(endpoint)
        self.assertEqual(described["input_schema"]["properties"]["prompt"]["description"], "What to draw.")
        self.assertIn("seed: Gone since 1.2.", described["doc"])

    def test_an_unsupported_parameter_names_the_endpoint_and_the_parameter(self):
        def endpoint(prompt: str, model: Unknown):
            ...
        with self.assertRaisesRegex(EndpointSchemaError, r"endpoint /predict \(endpoint\(\)\): parameter 'model'"):
            _describe(endpoint, "/predict")

    def test_an_unresolvable_annotation_names_its_parameter(self):
        def endpoint(later: "NotDefinedAnywhere"):  # noqa: F821
            ...
        with self.assertRaisesRegex(EndpointSchemaError, "parameter 'later'.*NotDefinedAnywhere"):
            _describe(endpoint)

    def test_an_unsupported_return_annotation_says_so(self):
        with self.assertRaisesRegex(EndpointSchemaError, "the return annotation"):
            return_schema(Unknown)

    def test_string_annotations_resolve_in_the_function_module(self):
        def endpoint(value: "typing.Optional[Colour]"):
            ...
        self.assertEqual(_describe(endpoint)["input_schema"]["properties"]["value"]["anyOf"][0]["enum"],
                         ["red", "green"])


def _describe(function, path="/test") -> dict:
    app = APIPod()
    app.endpoint(path)(function)
    return describe_endpoint(app.endpoints[0], read_signature(path, function))


if __name__ == "__main__":
    unittest.main()
