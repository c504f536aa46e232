"""A starter service written by `svc init`: change it to serve your model.

    svc start                                          # http://localhost:8000/docs to try it
    svc call /hello -i name=Ada
    svc call /shout -i file=@requirements.txt -o shouted.txt
"""
from apipod import APIPod, MediaFile

app = APIPod(title="Starter")


@app.endpoint("/hello")
def hello(name: str = "world", excited: bool = False) -> dict:
    """Greets someone: JSON in, JSON out."""
    return {"greeting": f"Hello, {name}{'!' if excited else '.'}"}


@app.endpoint("/shout")
def shout(file: MediaFile) -> MediaFile:
    """A text file in capitals: a file in (an upload, a URL or base64), a file out."""
    text = file.to_bytes().decode("utf-8", errors="replace")
    return MediaFile.from_bytes(text.upper().encode("utf-8"), "shouted.txt", "text/plain")


if __name__ == "__main__":
    app.start()
