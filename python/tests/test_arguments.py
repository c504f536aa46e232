"""A call's JSON arguments converted to the Python values an endpoint expects."""
import base64
import dataclasses
import datetime
import enum
import os
import tempfile
import unittest
import uuid
from unittest import mock
from typing import Optional, TypedDict, Union

from apipod import ChatCompletionRequest, ImageFile, JobProgress, MediaFile
from apipod._runtime.arguments import ArgumentError, bind_arguments, convert
from apipod._runtime.signature import read_signature

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
PNG_BASE64 = base64.b64encode(PNG).decode()


class Colour(enum.Enum):
    red = "red"


@dataclasses.dataclass
class Point:
    x: float
    colour: Colour = Colour.red


class Box(TypedDict):
    corner: Point


def write_upload(content: bytes) -> str:
    descriptor, path = tempfile.mkstemp(prefix="apipod-upload-")
    with os.fdopen(descriptor, "wb") as file:
        file.write(content)
    return path


class ConvertTest(unittest.TestCase):
    def test_plain_json_passes_as_it_is(self):
        self.assertEqual(convert({"a": [1]}, dict), {"a": [1]})
        self.assertEqual(convert("x", str), "x")

    def test_integers_become_floats_where_floats_are_expected(self):
        self.assertIsInstance(convert(3, float), float)
        self.assertEqual(convert([1, 2], list[float]), [1.0, 2.0])
        mixed = convert([0.5, 2, 1.5], list[float])
        self.assertEqual([(item, type(item)) for item in mixed], [(0.5, float), (2.0, float), (1.5, float)])

    def test_files_referenced_anywhere_in_the_arguments_are_deleted_after_the_call(self):
        from apipod._runtime.file_reference import delete_referenced_files
        with tempfile.TemporaryDirectory() as directory, mock.patch.dict(os.environ, {"APIPOD_FILE_DIR": directory}):
            paths = [os.path.join(directory, name) for name in ("a", "b", "c")]
            for path in paths:
                open(path, "wb").close()
            reference = lambda path: {"$file": {"path": path, "file_name": None, "content_type": None}}
            delete_referenced_files({
                "values": [0.5] * 100_000 + [reference(paths[0])],
                "nested": [[1, 2, {"deeper": [reference(paths[1])]}], "text"],
                "plain": [3.0] * 100_000,
            })
            self.assertEqual([os.path.exists(path) for path in paths], [False, False, True])

    def test_a_long_list_already_of_its_item_type_is_taken_as_it_is_and_others_still_checked(self):
        values = [index / 7 for index in range(200_000)]
        self.assertEqual(convert(values, list[float]), values)
        with_integers = convert([0, 0.5, 2, True and 3], list[float])
        self.assertEqual([(item, type(item)) for item in with_integers], [(0.0, float), (0.5, float), (2.0, float), (3.0, float)])
        self.assertEqual(convert([1, 2], list[int]), [1, 2])
        self.assertEqual(convert([True, False], list[bool]), [True, False])
        self.assertEqual(convert(["a", "b"], list[str]), ["a", "b"])
        self.assertEqual(convert(["red", "red"], list[Colour]), [Colour.red, Colour.red])
        with self.assertRaisesRegex(ValueError, "1 is not a valid Colour"):
            convert(["red", 1], list[Colour])

    def test_enums_dataclasses_and_typed_dicts(self):
        self.assertIs(convert("red", Colour), Colour.red)
        self.assertEqual(convert({"x": 1, "colour": "red"}, Point), Point(1.0, Colour.red))
        self.assertEqual(convert({"corner": {"x": 2}}, Box), {"corner": Point(2.0)})
        with self.assertRaisesRegex(TypeError, "Point has no field z"):
            convert({"x": 1, "z": 2}, Point)

    def test_tuples_sets_and_dicts_of_types(self):
        self.assertEqual(convert([1, "a"], tuple[float, str]), (1.0, "a"))
        self.assertEqual(convert(["red", "red"], set[Colour]), {Colour.red})
        self.assertEqual(convert({"a": "red"}, dict[str, Colour]), {"a": Colour.red})

    def test_pydantic_models_validate(self):
        try:
            import pydantic
        except ImportError:
            self.skipTest("pydantic is not installed")

        class Settings(pydantic.BaseModel):
            steps: int

        self.assertEqual(convert({"steps": "4"}, Settings), Settings(steps=4))

    def test_dates_times_and_uuids_from_their_standard_strings(self):
        self.assertEqual(convert("2026-11-23T10:00:00Z", datetime.datetime),
                         datetime.datetime(2026, 11, 23, 10, tzinfo=datetime.timezone.utc))
        self.assertEqual(convert("2026-11-23", datetime.date), datetime.date(2026, 11, 23))
        self.assertEqual(convert("10:30", datetime.time), datetime.time(10, 30))
        # What Python 3.10's fromisoformat refuses: a Z, and fractions of other than 3 or 6 digits.
        utc = datetime.timezone.utc
        self.assertEqual(convert("12:30:00Z", datetime.time), datetime.time(12, 30, tzinfo=utc))
        self.assertEqual(convert("2024-05-01T12:30:00.5Z", datetime.datetime), datetime.datetime(2024, 5, 1, 12, 30, 0, 500000, tzinfo=utc))
        self.assertEqual(convert("2024-05-01T12:30:00.123456789Z", datetime.datetime).microsecond, 123456)
        self.assertEqual(convert("12345678123456781234567812345678", uuid.UUID), uuid.UUID(int=0x12345678123456781234567812345678))
        with self.assertRaises(ValueError):
            convert("next tuesday", datetime.datetime)

    def test_chat_requests(self):
        request = convert({"messages": [{"role": "user", "content": "hi"}]}, ChatCompletionRequest)
        self.assertEqual(request.messages[0].content, "hi")

    def test_media_from_base64_a_data_url_or_a_media_object(self):
        for value in (PNG_BASE64, "data:image/png;base64," + PNG_BASE64, {"content": PNG_BASE64, "file_name": "a.png"}):
            image = convert(value, ImageFile)
            self.assertIsInstance(image, ImageFile)
            self.assertEqual((image.to_bytes(), image.content_type), (PNG, "image/png"))

    def test_a_string_is_never_read_as_a_path(self):
        path = write_upload(PNG)
        self.addCleanup(os.remove, path)
        with self.assertRaises(ValueError):
            convert(path, ImageFile)

    def test_bytes_parameters_get_the_raw_content(self):
        self.assertEqual(convert(PNG_BASE64, bytes), PNG)

    def test_a_file_reference_is_read_then_deleted(self):
        path = write_upload(PNG)
        image = convert({"$file": {"path": path, "file_name": "up.png", "content_type": "image/png"}}, ImageFile)
        self.assertEqual((image.to_bytes(), image.file_name), (PNG, "up.png"))
        self.assertFalse(os.path.exists(path))

    def test_an_upload_without_a_content_type_is_told_by_its_bytes_then_its_name(self):
        png = convert({"$file": {"path": write_upload(PNG), "file_name": "up.bin", "content_type": None}}, ImageFile)
        text = convert({"$file": {"path": write_upload(b"hi"), "file_name": "notes.txt", "content_type": None}}, MediaFile)
        self.assertEqual((png.content_type, text.content_type), ("image/png", "text/plain"))

    def test_a_file_reference_outside_the_file_directory_is_refused(self):
        with tempfile.TemporaryDirectory() as file_dir, tempfile.TemporaryDirectory() as elsewhere:
            path = os.path.join(elsewhere, "secret")
            with open(path, "wb") as file:
                file.write(b"keep me")
            with mock.patch.dict(os.environ, {"APIPOD_FILE_DIR": file_dir}):
                with self.assertRaisesRegex(ValueError, "refusing a \\$file reference"):
                    convert({"$file": {"path": path}}, MediaFile)
            self.assertTrue(os.path.exists(path))

    def test_a_file_reference_for_an_unannotated_parameter_is_a_media_file(self):
        path = write_upload(b"%PDF-1.4")
        self.assertEqual(convert({"$file": {"path": path}}, Optional[object]).content_type, "application/pdf")

    def test_unions_prefer_the_type_the_value_already_has(self):
        self.assertEqual(convert("a prompt", Union[ImageFile, str, None]), "a prompt")
        self.assertIsInstance(convert("data:image/png;base64," + PNG_BASE64, Union[str, ImageFile]), ImageFile)
        self.assertIsInstance(convert({"content": PNG_BASE64}, Union[ImageFile, dict]), ImageFile)
        self.assertIsNone(convert(None, Optional[Point]))
        self.assertEqual(convert({"x": 1}, Optional[Point]), Point(1.0))


class BindArgumentsTest(unittest.TestCase):
    def bind(self, function, arguments: dict, job_progress=None):
        signature = read_signature("/test", function)
        return bind_arguments(signature.parameters, arguments, job_progress or JobProgress())

    def test_a_pydantic_model_that_fails_validation_names_each_field_on_one_line(self):
        try:
            import pydantic
        except ImportError:
            self.skipTest("pydantic is not installed")

        class Prompt(pydantic.BaseModel):
            text: str
            stops: list[str] = []

            @pydantic.field_validator("text")
            @classmethod
            def not_blank(cls, text):
                if not text.strip():
                    raise ValueError("must not be blank")
                return text

        def endpoint(prompt: Prompt):
            ...
        with self.assertRaises(ArgumentError) as raised:
            self.bind(endpoint, {"prompt": {"text": " ", "stops": ["a", 2]}})
        self.assertEqual(str(raised.exception),
                         "argument 'prompt': text: Value error, must not be blank; stops[1]: Input should be a valid string")

    def test_keyword_arguments_by_name_and_defaults_left_out(self):
        def endpoint(prompt: str, steps: int = 20):
            ...
        self.assertEqual(self.bind(endpoint, {"prompt": "cat"}), ([], {"prompt": "cat"}))

    def test_an_optional_without_a_default_left_out_is_none(self):
        def endpoint(prompt: str, seed: Optional[int], mask: Union[ImageFile, None], /, steps: "int | None", *, scale: Optional[float]):
            ...
        self.assertEqual(self.bind(endpoint, {"prompt": "cat"}), (["cat", None, None], {"steps": None, "scale": None}))
        self.assertEqual(self.bind(endpoint, {"prompt": "cat", "seed": 3, "scale": 2})[1]["scale"], 2.0)

    def test_job_progress_is_supplied(self):
        progress = JobProgress()

        def endpoint(prompt: str, job_progress: JobProgress = None):
            ...
        self.assertIs(self.bind(endpoint, {"prompt": "x"}, progress)[1]["job_progress"], progress)

    def test_positional_only_and_star_parameters(self):
        def endpoint(a, b: float = 1.0, /, *images: bytes, scale: int = 2, **extra: Colour):
            ...
        positional, keywords = self.bind(endpoint, {"a": 1, "images": [PNG_BASE64], "tone": "red"})
        self.assertEqual(positional, [1, 1.0, PNG])
        self.assertEqual(keywords, {"tone": Colour.red})

    def test_star_items_move_earlier_parameters_to_positions(self):
        def endpoint(prompt: str, steps: int = 4, *images: bytes):
            ...
        self.assertEqual(self.bind(endpoint, {"prompt": "cat", "images": [PNG_BASE64]}), (["cat", 4, PNG], {}))
        self.assertEqual(self.bind(endpoint, {"prompt": "cat"}), ([], {"prompt": "cat"}))

    def test_an_unexpected_argument_is_a_type_error(self):
        def endpoint(prompt: str):
            ...
        with self.assertRaisesRegex(TypeError, "unexpected arguments: steps"):
            self.bind(endpoint, {"prompt": "x", "steps": 3})

    def test_a_conversion_error_names_the_argument(self):
        def endpoint(colour: Colour):
            ...
        with self.assertRaisesRegex(ValueError, "argument 'colour'") as raised:
            self.bind(endpoint, {"colour": "blue"})
        self.assertIsInstance(raised.exception, ArgumentError)
        self.assertEqual(raised.exception.argument, "colour")


if __name__ == "__main__":
    unittest.main()
