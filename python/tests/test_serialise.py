"""Results and chunks written as protocol VALUEs."""
import dataclasses
import contextlib
import datetime
import enum
import importlib.util
import io
import math
import os
import unittest
import uuid

from apipod import ChatCompletionResponse, ImageFile
from apipod._runtime.file_reference import INLINE_LIMIT
from apipod._runtime import serialise
from apipod._runtime.doubles import DOUBLES_MIN, Doubles
from apipod._runtime.serialise import to_json_value
from apipod._runtime.value_depth import ResultTooDeep


class Mode(enum.Enum):
    fast = "fast"


@dataclasses.dataclass
class Result:
    mode: Mode
    scores: tuple
    image: ImageFile


class DoublesTest(unittest.TestCase):
    """A result's long lists of floats may travel as doubles (docs/worker-protocol.md, `numbers`)."""

    def test_a_long_list_or_tuple_of_finite_floats_becomes_doubles_that_give_it_back(self):
        floats = [index / 3 for index in range(DOUBLES_MIN)]
        value = to_json_value({"a": floats, "b": [tuple(floats)]}, doubles=True)
        self.assertIsInstance(value["a"], Doubles)
        self.assertEqual((value["a"].tolist(), value["b"][0].tolist()), (floats, floats))
        self.assertEqual(to_json_value({"a": floats}), {"a": floats})  # only where asked: a result, not a chunk

    def test_anything_but_a_long_list_of_finite_floats_stays_as_json_writes_it(self):
        floats = [index / 3 for index in range(DOUBLES_MIN)]
        class Measure(float):
            pass

        for other in (floats[:-1], floats[:-1] + [1], [1] + floats[1:], floats[:-1] + [True], floats[:-1] + [Measure(2.5)], floats[:-1] + [float("nan")],
                      floats[:-1] + [float("inf")], [float(index) for index in range(DOUBLES_MIN - 1)] + [2**60]):
            with self.subTest(last=repr(other[-1]), length=len(other)):
                value = to_json_value(other, doubles=True)
                self.assertIsInstance(value, list)
                self.assertEqual(value, [item if not isinstance(item, float) or math.isfinite(item) else None for item in other])
        huge = [1.5e308] * DOUBLES_MIN  # finite, though their sum is not
        self.assertEqual(to_json_value(huge, doubles=True).tolist(), huge)

    @unittest.skipUnless(importlib.util.find_spec("numpy"), "numpy is not installed")
    def test_a_numpy_arrays_rows_of_finite_floats_become_doubles_and_the_rest_lists_as_tolist_makes_them(self):
        import numpy
        matrix = numpy.arange(2 * DOUBLES_MIN, dtype=numpy.float32).reshape(2, DOUBLES_MIN) / 7
        value = to_json_value({"m": matrix, "v": matrix[0]}, doubles=True)
        self.assertEqual([row.tolist() for row in value["m"]], matrix.tolist())
        self.assertEqual(value["v"].tolist(), matrix[0].tolist())
        with_nan = matrix[0].copy()
        with_nan[3] = numpy.nan
        for array in (numpy.arange(DOUBLES_MIN), matrix[0][:4], with_nan):
            with self.subTest(dtype=str(array.dtype), length=len(array)):
                self.assertEqual(to_json_value(array, doubles=True), to_json_value(array))
        with self.assertRaises(ResultTooDeep):
            to_json_value(matrix, max_depth=1, doubles=True)


class SerialiseTest(unittest.TestCase):
    def test_json_values_pass_unchanged(self):
        value = {"a": [1, 2.5, "x", True, None], "b": {"c": []}}
        self.assertEqual(to_json_value(value), value)

    def test_lists_and_dicts_nest_up_to_max_depth_and_no_deeper(self):
        def nested(levels, inner=1):
            for level in range(levels):
                inner = [inner] if level % 2 else {"a": inner}
            return inner
        self.assertEqual(to_json_value(nested(5), max_depth=5), nested(5))
        self.assertEqual(to_json_value(Result(Mode.fast, (nested(3),), None), max_depth=5)["scores"], [nested(3)])
        for too_deep in (nested(6), Result(Mode.fast, (nested(4),), None)):
            with self.assertRaises(ResultTooDeep) as raised:
                to_json_value(too_deep, max_depth=5)
            self.assertIn("more than 5 levels deep", str(raised.exception))
        self.assertEqual(to_json_value(nested(300)), nested(300))  # no limit given: none applies

    def test_nan_and_infinities_become_null(self):
        self.assertEqual(to_json_value([float("nan"), float("inf"), -float("inf"), 1.5]), [None, None, None, 1.5])

    def test_bytes_become_a_file_as_their_schema_says(self):
        self.assertEqual(to_json_value(b"\x00\x01"),
                         {"file_name": "file", "content_type": "application/octet-stream", "content": "AAE="})
        self.assertEqual(to_json_value({"png": bytearray(b"\x89PNG\r\n\x1a\n")})["png"]["content_type"], "image/png")
        self.assertIn("$file", to_json_value(bytes(INLINE_LIMIT + 1)))

    def test_sets_and_tuples_become_lists(self):
        self.assertEqual(to_json_value((1, 2)), [1, 2])
        self.assertEqual(to_json_value({3}), [3])

    def test_enums_become_their_value(self):
        self.assertEqual(to_json_value(Mode.fast), "fast")

    def test_dataclasses_become_objects_with_nested_values_converted(self):
        image = ImageFile.from_bytes(b"\x89PNG\r\n\x1a\n", "a.png")
        self.assertEqual(to_json_value(Result(Mode.fast, (1, 2), image)), {
            "mode": "fast", "scores": [1, 2], "image": image.to_json(),
        })

    def test_objects_with_to_json_are_serialised_by_calling_it(self):
        response = ChatCompletionResponse.from_text("hi")
        self.assertEqual(to_json_value(response), response.to_dict())

    def test_pydantic_models_become_objects(self):
        try:
            import pydantic
        except ImportError:
            self.skipTest("pydantic is not installed")

        class Answer(pydantic.BaseModel):
            text: str
            confidence: float

        self.assertEqual(to_json_value(Answer(text="yes", confidence=0.9)), {"text": "yes", "confidence": 0.9})

    def test_a_pydantic_model_with_a_to_json_text_becomes_its_fields(self):
        try:
            import pydantic
        except ImportError:
            self.skipTest("pydantic is not installed")

        class Upstream(pydantic.BaseModel):  # as the openai SDK's models are
            content: str

            def to_json(self) -> str:
                return self.model_dump_json(indent=2)

        self.assertEqual(to_json_value(Upstream(content="hi")), {"content": "hi"})

    def test_dict_keys_are_written_as_json_writes_them(self):
        self.assertEqual(to_json_value({1: "a", None: "b", Mode.fast: "c"}), {"1": "a", "null": "b", "fast": "c"})

    def test_dates_and_uuids_become_strings(self):
        moment = datetime.datetime(2024, 5, 1, 12, 30)
        identifier = uuid.UUID(int=1)
        self.assertEqual(to_json_value([moment, identifier]), ["2024-05-01T12:30:00", str(identifier)])

    def test_small_media_is_inline(self):
        image = ImageFile.from_bytes(b"\x89PNG\r\n\x1a\n", "a.png")
        self.assertEqual(to_json_value(image), image.to_json())

    def test_media_above_64_kib_becomes_a_file_reference(self):
        content = b"\x89PNG\r\n\x1a\n" + bytes(64 * 1024)
        reference = to_json_value(ImageFile.from_bytes(content, "big.png"))["$file"]
        self.addCleanup(os.remove, reference["path"])
        self.assertEqual((reference["file_name"], reference["content_type"]), ("big.png", "image/png"))
        with open(reference["path"], "rb") as file:
            self.assertEqual(file.read(), content)

    def test_anything_else_is_a_type_error_naming_the_type(self):
        class Opaque:
            pass
        with self.assertRaisesRegex(TypeError, "Opaque"):
            to_json_value({"x": Opaque()})
        with self.assertRaisesRegex(TypeError, "keys must be strings"):
            to_json_value({(1, 2): "tuple key"})


if __name__ == "__main__":
    unittest.main()


class LargeIntegerTest(unittest.TestCase):
    def test_an_integer_json_readers_round_is_sent_whole_and_noted_once(self):
        serialise._noted_large_integer = False
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            value = to_json_value({"id": 2**64 + 1, "ids": [2**60, 2**53 - 1]})
        self.assertEqual(value, {"id": 2**64 + 1, "ids": [2**60, 2**53 - 1]})
        self.assertEqual(stderr.getvalue().count("beyond 2**53 - 1"), 1)
        self.assertIn("18446744073709551617", stderr.getvalue())
