"""A chat-completion endpoint that needs no model download: it answers deterministically
by echoing the last user message, one word at a time, so any chat client can be tried
against it, streaming or not.
"""
from typing import Iterator

from apipod import APIPod, ChatCompletionRequest

app = APIPod(title="echo")


@app.endpoint("/chat")
def chat(request: ChatCompletionRequest) -> Iterator[str]:
    last_user = next((message for message in reversed(request.messages) if message.role == "user"), None)
    answer = f"You said: {last_user.text}" if last_user else "Say something and I will repeat it."
    for index, word in enumerate(answer.split(" ")):
        yield word if index == 0 else " " + word


if __name__ == "__main__":
    app.start()
