"""OpenAI-style chat types."""
import unittest

from apipod import ChatCompletionRequest, ChatCompletionResponse, ChatMessage


class ChatCompletionRequestTest(unittest.TestCase):
    def test_messages_have_attribute_access(self):
        request = ChatCompletionRequest.from_dict({
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
            "max_tokens": 16,
            "temperature": 0.2,
        })
        self.assertEqual([message.role for message in request.messages], ["system", "user"])
        self.assertEqual(request.messages[1].content, "Hi")
        self.assertEqual((request.max_tokens, request.temperature, request.stream), (16, 0.2, False))

    def test_what_the_client_left_out_has_the_apipod_toolkits_defaults_and_is_not_written_back(self):
        request = ChatCompletionRequest.from_dict({"messages": [{"role": "user", "content": "Hi"}], "n": 2})
        self.assertEqual((request.temperature, request.top_p, request.n, request.stream), (0.7, 1.0, 2, False))
        self.assertEqual((request.presence_penalty, request.frequency_penalty), (0.0, 0.0))
        self.assertEqual(request.to_dict(), {"messages": [{"role": "user", "content": "Hi"}], "n": 2})

    def test_unknown_fields_are_kept_and_written_back(self):
        data = {
            "model": "echo",
            "messages": [{"role": "assistant", "content": None, "tool_calls": [{"id": "t1"}]}],
            "response_format": {"type": "json_object"},
            "guided_json": {"type": "object"},
            "stop": ["\n"],
        }
        request = ChatCompletionRequest.from_dict(data)
        self.assertEqual(request.response_format, {"type": "json_object"})
        self.assertEqual(request.extra, {"guided_json": {"type": "object"}})
        self.assertEqual(request.messages[0].extra, {"tool_calls": [{"id": "t1"}]})
        self.assertEqual(request.to_dict(), data)

    def test_message_text_joins_the_text_parts_of_multimodal_content(self):
        request = ChatCompletionRequest.from_dict({"messages": [
            {"role": "user", "content": "plain"},
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "x"}},
                                         {"type": "text", "text": "b"}]},
            {"role": "assistant", "content": None, "tool_calls": []},
        ]})
        self.assertEqual([message.text for message in request.messages], ["plain", "a b", ""])

    def test_a_request_without_messages_is_a_value_error(self):
        with self.assertRaisesRegex(ValueError, "messages"):
            ChatCompletionRequest.from_dict({"model": "x"})
        with self.assertRaisesRegex(ValueError, "role"):
            ChatCompletionRequest.from_dict({"messages": [{"content": "no role"}]})


class ChatCompletionResponseTest(unittest.TestCase):
    def test_from_text_builds_one_assistant_choice(self):
        response = ChatCompletionResponse.from_text("Hello", model="echo")
        data = response.to_dict()
        self.assertEqual(set(data), {"id", "object", "created", "model", "choices", "usage"})
        self.assertEqual(data["object"], "chat.completion")
        self.assertTrue(data["id"].startswith("chatcmpl-"))
        self.assertEqual(data["choices"], [
            {"index": 0, "message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"},
        ])

    def test_dict_round_trip(self):
        response = ChatCompletionResponse.from_text("Hi")
        self.assertEqual(ChatCompletionResponse.from_dict(response.to_dict()).to_dict(), response.to_dict())

    def test_chat_messages_in_choices_are_written_as_dicts(self):
        response = ChatCompletionResponse(choices=[{"index": 0, "message": ChatMessage("assistant", "x").to_dict()}])
        self.assertEqual(response.to_dict()["choices"][0]["message"], {"role": "assistant", "content": "x"})


if __name__ == "__main__":
    unittest.main()
