"""apipod.common.chat_parsing: an open model's raw text as chat deltas, as the apipod toolkit parses it."""
import json
import unittest

from apipod.common.chat_parsing import ChatOutputParser, combine_deltas, parse_chat_output


def parsed_in_pieces(text: str, size: int) -> list:
    parser = ChatOutputParser()
    deltas = []
    for start in range(0, len(text), size):
        deltas += parser.feed(text[start:start + size])
    return deltas + parser.flush()


class ChatOutputParserTest(unittest.TestCase):
    def test_reasoning_and_content_whatever_the_fragments(self):
        text = "<think>The user greets.</think>Hello, world!"
        for size in (1, 2, 3, 7, len(text)):
            message = combine_deltas(parsed_in_pieces(text, size))
            self.assertEqual(message, {"role": "assistant", "content": "Hello, world!", "reasoning_content": "The user greets."}, size)

    def test_no_text_of_a_tag_leaks_into_content(self):
        deltas = parsed_in_pieces("Hi <thi", 3)
        self.assertEqual("".join(delta for delta in deltas if isinstance(delta, str)), "Hi <thi")
        self.assertNotIn("<think>", json.dumps(parsed_in_pieces("a<think>b</think>c", 1)))

    def test_a_hermes_tool_call_becomes_one_whole_call(self):
        parser = ChatOutputParser()
        text = 'I will check.<tool_call>{"name": "weather", "arguments": {"location": "Boston"}}</tool_call>'
        message = combine_deltas(parser.feed(text) + parser.flush())
        self.assertTrue(parser.saw_tool_call)
        self.assertEqual(message["content"], "I will check.")
        [call] = message["tool_calls"]
        self.assertEqual((call["type"], call["function"]["name"], json.loads(call["function"]["arguments"])), ("function", "weather", {"location": "Boston"}))

    def test_a_qwen_xml_tool_call_has_typed_arguments(self):
        message = parse_chat_output("<tool_call><function=search>\n<parameter=query>\ncats\n</parameter>\n<parameter=limit>3</parameter>\n</function></tool_call>")
        self.assertEqual(json.loads(message["tool_calls"][0]["function"]["arguments"]), {"query": "cats", "limit": 3})

    def test_what_is_no_call_reaches_the_client_as_text(self):
        self.assertEqual(parse_chat_output("<tool_call>not json</tool_call>")["content"], "not json")
        self.assertEqual(parse_chat_output("text <tool_call>cut")["content"], "text <tool_call>cut")


if __name__ == "__main__":
    unittest.main()
