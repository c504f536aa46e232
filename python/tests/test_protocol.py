"""The shared protocol examples in test/fixtures/protocol/, which the TypeScript side reads too."""
import json
import os
import unittest

from apipod._runtime import protocol
from tests.worker_process import REPOSITORY

FIXTURES = os.path.join(REPOSITORY, "test", "fixtures", "protocol")
COMMAND_TYPES = ("call", "cancel", "shutdown", "withdraw")
EVENT_TYPES = ("ready", "setup_failed", "progress", "chunk", "result", "streamed", "error", "cancelled", "withdrawn")


def load_fixture(name: str) -> list:
    with open(os.path.join(FIXTURES, f"{name}.json"), encoding="utf-8") as file:
        return json.load(file)


class FixtureTest(unittest.TestCase):
    def test_every_message_type_has_examples_of_its_own_type(self):
        for message_type in COMMAND_TYPES + EVENT_TYPES:
            examples = load_fixture(message_type)
            self.assertTrue(examples, message_type)
            self.assertEqual({example["type"] for example in examples}, {message_type})

    def test_every_command_example_is_a_valid_command(self):
        for message_type in COMMAND_TYPES:
            for example in load_fixture(message_type):
                with self.subTest(example=example):
                    self.assertIs(protocol.validate_command(example), example)

    def test_every_event_example_is_a_valid_event(self):
        for message_type in EVENT_TYPES:
            for example in load_fixture(message_type):
                with self.subTest(example=example):
                    self.assertIs(protocol.validate_event(example), example)

    def test_commands_are_not_events_and_events_are_not_commands(self):
        for message_type in COMMAND_TYPES:
            with self.assertRaises(protocol.ProtocolError):
                protocol.validate_event(load_fixture(message_type)[0])
        for message_type in EVENT_TYPES:
            with self.assertRaises(protocol.ProtocolError):
                protocol.validate_command(load_fixture(message_type)[0])

    def test_every_invalid_example_is_rejected_by_both_validators(self):
        for example in load_fixture("invalid"):
            with self.subTest(example=example):
                with self.assertRaises(protocol.ProtocolError):
                    protocol.validate_command(example)
                with self.assertRaises(protocol.ProtocolError):
                    protocol.validate_event(example)


class ConstructorTest(unittest.TestCase):
    def test_constructed_commands_are_valid(self):
        for command in (protocol.call("c-1", "/hello", {"name": "Ada"}), protocol.cancel("c-1"), protocol.withdraw(["c-2"]),
                        protocol.shutdown()):
            protocol.validate_command(command)

    def test_constructed_events_are_valid(self):
        error = protocol.error_info(ValueError("boom"))
        for event in (
            protocol.ready("3.11.7", {"title": None, "compute": "dedicated", "provider": "localhost"}, []),
            protocol.setup_failed("lifespan", error),
            protocol.progress("c-1", None, None),
            protocol.chunk("c-1", "a"),
            protocol.result("c-1", None),
            protocol.streamed("c-1", 0),
            protocol.error("c-1", error),
            protocol.cancelled("c-1"),
            protocol.withdrawn(["c-2"]),
        ):
            protocol.validate_event(event)

    def test_error_info_names_the_type_and_message_and_formats_the_traceback(self):
        try:
            raise KeyError("missing")
        except KeyError as exception:
            error = protocol.error_info(exception)
        self.assertEqual(error["type"], "KeyError")
        self.assertEqual(error["message"], "'missing'")
        self.assertIn("test_protocol.py", error["traceback"])
        self.assertTrue(error["traceback"].endswith("KeyError: 'missing'\n"))

    def test_a_rejection_says_what_is_wrong(self):
        with self.assertRaisesRegex(protocol.ProtocolError, "progress.*from 0 to 1"):
            protocol.validate_event({"type": "progress", "call": "c-1", "progress": 2, "message": None})
        with self.assertRaisesRegex(protocol.ProtocolError, r"'endpoints' \[0\] 'methods'"):
            protocol.validate_event({**load_fixture("ready")[0], "endpoints": [
                {**load_fixture("ready")[0]["endpoints"][0], "methods": ["get"]}]})


if __name__ == "__main__":
    unittest.main()
