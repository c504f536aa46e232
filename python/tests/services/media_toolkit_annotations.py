"""A service annotated with media-toolkit's own classes, as upstream's docs lead users to write."""
from media_toolkit import AudioFile, ImageFile

from apipod import APIPod

app = APIPod()


@app.endpoint("/size")
def size(image: ImageFile):
    return {"type": f"{type(image).__module__.split('.')[0]}.{type(image).__name__}",
            "file_name": image.file_name, "content_type": image.content_type, "bytes": len(image.to_bytes())}


@app.endpoint("/echo")
def echo(audio: AudioFile) -> AudioFile:
    return audio
