"""The command pipe's reader, with and without polling before it sleeps."""
import base64
import json
import math
import os
import struct
import threading
import time
import unittest

from apipod._runtime.channel import LONG_TEXT_CHARS, EventWriter, PollWindow, ResultTooLarge, read_commands
from apipod._runtime.serialise import to_json_value
from apipod._runtime import protocol


class ReadCommandsTest(unittest.TestCase):
    def read_all(self, chunks: list[bytes], poll_seconds: float, pause: float = 0.0) -> list[dict]:
        """Commands read while another thread writes `chunks`, `pause` apart, then closes the pipe."""
        read_end, write_end = os.pipe()
        self.addCleanup(os.close, read_end)

        def write():
            for chunk in chunks:
                os.write(write_end, chunk)
                time.sleep(pause)
            os.close(write_end)

        writer = threading.Thread(target=write)
        writer.start()
        commands = list(read_commands(read_end, protocol.CALL_CHANNEL_TYPES, poll_seconds))
        writer.join()
        return commands

    def test_lines_split_across_writes_are_read_whole_in_order(self):
        line_1 = b'{"type":"call","call":"c-1","endpoint":"/a","arguments":{"text":"\xc3\xa9"}}\n'
        line_2 = b'{"type":"shutdown"}\n'
        chunks = [line_1[:10], line_1[10:40], line_1[40:] + line_2[:5], line_2[5:]]
        for poll_seconds in (0.0, 0.0005):
            with self.subTest(poll_seconds=poll_seconds):
                commands = self.read_all(chunks, poll_seconds)
                self.assertEqual([command["type"] for command in commands], ["call", "shutdown"])
                self.assertEqual(commands[0]["arguments"], {"text": "é"})

    def test_several_lines_in_one_write_and_a_line_over_many_reads_are_read_whole(self):
        big = b'{"type":"call","call":"c-2","endpoint":"/a","arguments":{"image":"' + b"A" * (3 * 2**20) + b'"}}\n'
        small = b'{"type":"call","call":"c-1","endpoint":"/a","arguments":{}}\n'
        chunks = [small + big[:100], *(big[i:i + 100_000] for i in range(100, len(big), 100_000)), small.replace(b"c-1", b"c-3")]
        commands = self.read_all(chunks, poll_seconds=0.0)
        self.assertEqual([command["call"] for command in commands], ["c-1", "c-2", "c-3"])
        self.assertEqual(len(commands[1]["arguments"]["image"]), 3 * 2**20)

    def test_a_calls_texts_follow_its_line_and_take_their_places_in_its_arguments(self):
        text = "é😀 \"quoted\" " + "x" * 200_000
        call = b'{"type":"call","call":"c-1","endpoint":"/a","arguments":{"a":"","n":1,"b":""},"texts":["b","a"],"line_bytes":[6,%d]}\n' % len(text.encode())
        stream = call + b"second\n" + text.encode() + b"\n" + b'{"type":"shutdown"}\n'
        for poll_seconds, size in ((0.0, 65536), (0.0005, 65536), (0.0005, 7), (0.0, len(stream))):
            with self.subTest(poll_seconds=poll_seconds, write_size=size):
                commands = self.read_all([stream[i:i + size] for i in range(0, len(stream), size)], poll_seconds)
                self.assertEqual(commands, [
                    {"type": "call", "call": "c-1", "endpoint": "/a", "arguments": {"a": text, "n": 1, "b": "second"}},
                    {"type": "shutdown"},
                ])

    def test_a_call_whose_texts_name_no_argument_never_come_or_have_no_true_size_is_not_run(self):
        shutdown = b'{"type":"shutdown"}\n'
        for stream in (
            b'{"type":"call","call":"c-1","endpoint":"/a","arguments":{},"texts":["a"],"line_bytes":[1]}\n',
            b'{"type":"call","call":"c-8","endpoint":"/a","arguments":{"a":""},"texts":5,"line_bytes":[1]}\n',
            b'{"type":"call","call":"c-3","endpoint":"/a","arguments":{"a":""},"texts":["a"]}\nabc\n',
            b'{"type":"call","call":"c-4","endpoint":"/a","arguments":{"a":""},"texts":["a"],"line_bytes":[3,4]}\nabc\n',
            b'{"type":"call","call":"c-5","endpoint":"/a","arguments":{"a":""},"texts":["a"],"line_bytes":[-1]}\nabc\n',
            # The size says where the line ends: a newline elsewhere means the two disagree.
            b'{"type":"call","call":"c-6","endpoint":"/a","arguments":{"a":""},"texts":["a"],"line_bytes":[2]}\nabc\n',
            b'{"type":"call","call":"c-7","endpoint":"/a","arguments":{"a":""},"texts":["a"],"line_bytes":[6]}\nabc\ndefg\n',
        ):
            with self.subTest(stream=stream[:40]):
                self.assertEqual(self.read_all([stream + shutdown], 0.0), [{"type": "shutdown"}])
        cut = b'{"type":"call","call":"c-2","endpoint":"/a","arguments":{"a":""},"texts":["a"],"line_bytes":[10]}\nno newline'
        self.assertEqual(self.read_all([cut], 0.0), [])

    def test_a_calls_numbers_follow_its_texts_as_doubles_and_take_their_places_as_floats(self):
        numbers = [0.1, -2.5e-300, 1.7976931348623157e308, 5e-324, float(2**60)] * 3000
        doubles = base64.b64encode(struct.pack(f"<{len(numbers)}d", *numbers))
        call = b'{"type":"call","call":"c-1","endpoint":"/a","arguments":{"a":"","v":[],"w":[]},"texts":["a"],"numbers":["w","v"],"line_bytes":[4,24,%d]}\n' % len(doubles)
        stream = call + b"text\n" + base64.b64encode(struct.pack("<2d", 1.0, -0.0)) + b"\n" + doubles + b"\n" + b'{"type":"shutdown"}\n'
        commands = self.read_all([stream[i:i + 65536] for i in range(0, len(stream), 65536)], poll_seconds=0.0)
        self.assertEqual([command["type"] for command in commands], ["call", "shutdown"])
        arguments = commands[0]["arguments"]
        self.assertEqual((arguments["a"], arguments["w"], arguments["v"]), ("text", [1.0, -0.0], numbers))
        self.assertEqual(math.copysign(1, arguments["w"][1]), -1)

    def test_a_call_whose_numbers_name_no_empty_list_are_cut_or_are_no_doubles_is_not_run(self):
        doubles = base64.b64encode(struct.pack("<2d", 1.0, 2.0))
        for stream in (
            b'{"type":"call","call":"c-1","endpoint":"/a","arguments":{"v":[1]},"numbers":["v"],"line_bytes":[24]}\n' + doubles + b"\n",
            b'{"type":"call","call":"c-3","endpoint":"/a","arguments":{"v":[]},"numbers":["v"],"line_bytes":[4]}\n' + base64.b64encode(b"abc") + b"\n",
        ):
            with self.subTest(stream=stream[:60]):
                self.assertEqual(self.read_all([stream + b'{"type":"shutdown"}\n'], 0.0), [{"type": "shutdown"}])
        cut = b'{"type":"call","call":"c-2","endpoint":"/a","arguments":{"v":[]},"numbers":["v"],"line_bytes":[24]}\n' + doubles
        self.assertEqual(self.read_all([cut], 0.0), [])

    def test_a_writer_slower_than_the_poll_is_waited_for(self):
        # Each write comes after the poll has given up, so the reader sleeps on the pipe each time.
        chunks = [b'{"type":"call","call":"c-%d","endpoint":"/a","arguments":{}}\n' % n for n in range(3)]
        commands = self.read_all(chunks, poll_seconds=0.0001, pause=0.05)
        self.assertEqual([command["call"] for command in commands], ["c-0", "c-1", "c-2"])

    def test_a_last_line_without_its_newline_is_still_read(self):
        for poll_seconds in (0.0, 0.0005):
            with self.subTest(poll_seconds=poll_seconds):
                commands = self.read_all([b'{"type":"shutdown"}'], poll_seconds)
                self.assertEqual(commands, [{"type": "shutdown"}])


class PollWindowTest(unittest.TestCase):
    def test_polling_stops_once_it_keeps_finding_nothing_and_comes_back_when_commands_come_quickly(self):
        read_end, write_end = os.pipe()
        self.addCleanup(os.close, read_end)
        self.addCleanup(os.close, write_end)
        os.set_blocking(read_end, False)
        window = PollWindow(0.0005)
        for _ in range(6):  # each command comes 5 ms after the worker started waiting: polling misses it
            timer = threading.Timer(0.005, os.write, (write_end, b"x"))
            timer.start()
            self.assertEqual(window.read(read_end), b"x")
            timer.join()
        self.assertEqual(window.seconds, 0.0)  # sleeps at once: no CPU burnt on a slow or busy machine
        for _ in range(6):  # commands already waiting: found at once
            os.write(write_end, b"y")
            self.assertEqual(window.read(read_end), b"y")
        self.assertEqual(window.seconds, 0.0005)

class EventWriterTest(unittest.TestCase):
    def test_a_result_is_written_compact_with_its_value_last(self):
        # The gateway reads a large result's value as the bytes between this start and the last "}"
        # (readResultValue in src/worker/protocol.ts).
        read_end, write_end = os.pipe()
        self.addCleanup(os.close, read_end)
        EventWriter(write_end).send(protocol.result("c-1", {"text": "é", "n": [1, 2]}))
        os.close(write_end)
        self.assertEqual(os.read(read_end, 1024), '{"type":"result","call":"c-1","value":{"text":"é","n":[1,2]}}\n'.encode())

    def written(self, message: dict, max_bytes=None) -> bytes:
        read_end, write_end = os.pipe()
        self.addCleanup(os.close, read_end)
        reader = threading.Thread(target=lambda: chunks.append(_read_to_end(read_end)))
        chunks: list[bytes] = []
        reader.start()
        try:
            EventWriter(write_end, max_bytes=max_bytes).send(message)
        finally:
            os.close(write_end)
            reader.join()
        return chunks[0]

    def test_a_results_long_strings_follow_it_as_lines_with_their_places_given_by_offset(self):
        long = "é" * LONG_TEXT_CHARS
        other = 'a"b\\c\x01' * LONG_TEXT_CHARS
        for value, texts in (
            (long, [long]),
            ({"id": 2**64 + 1, "text": long, "short": "", "other": other, "list": [long]}, [long, other]),
        ):
            with self.subTest(value=type(value).__name__):
                written = self.written(protocol.result("c-1", value))
                line, *rest = written.split(b"\n")
                self.assertEqual(rest, [text.encode() for text in texts] + [b""])
                start = b'{"type":"result","call":"c-1","texts":['
                self.assertTrue(line.startswith(start))
                offsets = [int(offset) for offset in line[len(start):line.index(b"]")].split(b",")]
                value_text = line[line.index(b',"value":') + len(b',"value":'):-1]
                for offset, text in reversed(list(zip(offsets, texts))):
                    self.assertEqual(value_text[offset:offset + 2], b'""')
                    value_text = value_text[:offset] + json.dumps(text, ensure_ascii=False).encode() + value_text[offset + 2:]
                self.assertEqual(value_text.decode(), json.dumps(value, ensure_ascii=False, separators=(",", ":")))

    def test_long_strings_that_cannot_be_lines_stay_in_the_json(self):
        for text in ("x" * LONG_TEXT_CHARS + "\n", "x" * LONG_TEXT_CHARS + "\r", "x" * LONG_TEXT_CHARS + "\ud800",
                     "\x00svc-text\x00"):
            with self.subTest(end=repr(text[-1])):
                value = {"text": text, "long": "y" * LONG_TEXT_CHARS} if text.startswith("\x00") else text
                written = self.written(protocol.result("c-1", value))
                self.assertEqual(written.count(b"\n"), 1)
                self.assertTrue(written.startswith(b'{"type":"result","call":"c-1","value":'))

    def test_a_results_lists_of_floats_follow_it_as_doubles_in_value_order_with_its_texts(self):
        embedding = [math.pi * index / 7 for index in range(-40, 60)]
        long = "é" * LONG_TEXT_CHARS
        value = {"data": [{"embedding": embedding, "index": 0}], "text": long, "rows": [embedding[:70], [1.0] * 3]}
        written = self.written(protocol.result("c-1", to_json_value(value, doubles=True)))
        line, *rest = written.split(b"\n")
        self.assertEqual(len(rest), 4)
        start = b'{"type":"result","call":"c-1","texts":['
        self.assertTrue(line.startswith(start))
        texts = json.loads(line[len(start) - 1:line.index(b"]") + 1])
        numbers = json.loads(line[line.index(b',"numbers":') + len(b',"numbers":'):line.index(b',"value":')])
        value_text = line[line.index(b',"value":') + len(b',"value":'):-1]
        # Lines in the order their places sit in the value: a list, the text, a list.
        self.assertEqual(sorted(texts + numbers), [numbers[0], texts[0], numbers[1]])
        lists = [list(struct.unpack(f"<{len(base64.b64decode(rest[index])) // 8}d", base64.b64decode(rest[index]))) for index in (0, 2)]
        self.assertEqual(lists, [embedding, embedding[:70]])
        self.assertEqual(rest[1], long.encode())
        for offset, item in reversed([(numbers[0], lists[0]), (texts[0], long), (numbers[1], lists[1])]):
            self.assertEqual(value_text[offset:offset + 2], b'""')
            value_text = value_text[:offset] + json.dumps(item, ensure_ascii=False).encode() + value_text[offset + 2:]
        self.assertEqual(json.loads(value_text), value)

    def test_a_result_holding_the_numbers_marker_is_sent_as_json_with_its_lists(self):
        value = {"marker": "\x00svc-numbers\x00", "embedding": [0.5] * 64}
        written = self.written(protocol.result("c-1", to_json_value(value, doubles=True)))
        self.assertEqual(written.count(b"\n"), 1)
        self.assertEqual(json.loads(written)["value"], value)

    def test_a_chunk_that_is_a_str_is_written_as_the_line_its_chunk_event_would_be(self):
        # send_text_chunk puts the line together itself, for a streamed token's sake.
        for text in ("", "token", ' a"b\\c/', "\x00\x1f\n\t\x7f", "é😀\u2028", "lone \ud800 surrogate"):
            with self.subTest(text=text):
                as_event = self.written_chunk(lambda writer: writer.send_chunk(protocol.chunk("c-7", text), 10))
                as_text = self.written_chunk(lambda writer: writer.send_text_chunk("c-7", text, 10))
                self.assertEqual(as_text, as_event)
                self.assertEqual(json.loads(as_text[1]), protocol.chunk("c-7", text))

    def test_text_chunks_past_the_limit_together_are_too_large(self):
        writer = EventWriter(os.open(os.devnull, os.O_WRONLY), max_bytes=100)
        self.addCleanup(os.close, writer._descriptor)
        total = writer.send_text_chunk("c-1", "x" * 30, 0)
        with self.assertRaisesRegex(ResultTooLarge, "the chunks come to more than"):
            writer.send_text_chunk("c-1", "x" * 30, total)

    def written_chunk(self, send) -> tuple[int, bytes]:
        """What `send(writer)` returned and wrote."""
        read_end, write_end = os.pipe()
        self.addCleanup(os.close, read_end)
        try:
            total = send(EventWriter(write_end))
        finally:
            os.close(write_end)
        return total, _read_to_end(read_end)

    def test_a_result_whose_texts_pass_the_limit_is_too_large(self):
        with self.assertRaisesRegex(ResultTooLarge, "the result is 0.1 MiB as JSON"):
            self.written(protocol.result("c-1", {"a": "x" * 40_000, "b": "y" * 40_000}), max_bytes=65_536)


def _read_to_end(descriptor: int) -> bytes:
    chunks = []
    while chunk := os.read(descriptor, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


if __name__ == "__main__":
    unittest.main()
