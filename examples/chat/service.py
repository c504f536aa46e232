"""A chat-completion endpoint that needs no model download: it answers deterministically
by echoing the last user message, so any chat client can be tried against it.
"""
from apipod import APIPod, ChatCompletionRequest

app = APIPod(title="Echo chat")


@app.endpoint("/chat")
def chat(request: ChatCompletionRequest) -> str:
    last_user = next(
        (message for message in reversed(request.messages) if message.role == "user"),
        None,
    )
    if last_user is None:
        return "Say something and I will repeat it."
    return f"You said: {last_user.content}"


if __name__ == "__main__":
    app.start()
