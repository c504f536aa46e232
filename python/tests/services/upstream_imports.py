"""A service importing what the apipod toolkit's services import (QA's s04, upstream's README chat)."""
from typing import Iterator, List

from apipod import (APIPod, FileModel, ImageFile, JobProgress, JobResult, MediaDict, MediaList,
                    constants)
from apipod.common import schemas
from apipod.common.schemas import ChatCompletionRequest

app = APIPod(compute=constants.COMPUTE.DEDICATED.value)


@app.endpoint("/images")
def images(files: MediaList[ImageFile], job_progress: JobProgress):
    return {"type": type(files).__name__, "items": [type(file).__name__ for file in files],
            "names": [file.file_name for file in files]}


@app.endpoint("/any-files")
def any_files(files: MediaList):
    return [type(file).__name__ for file in files]


@app.endpoint("/listed")
def listed(files: List[ImageFile]):
    return len(files)


@app.endpoint("/upload")
def upload(anyfile: FileModel):
    return {"type": type(anyfile).__name__, "file_name": anyfile.file_name, "content_type": anyfile.content_type}


@app.endpoint("/bundle")
def bundle(image: ImageFile) -> MediaList[ImageFile]:
    return MediaList([image, image.to_bytes()])


@app.endpoint("/named")
def named(image: ImageFile) -> MediaDict[ImageFile]:
    return MediaDict({"original": image})


@app.endpoint("/wire")
def wire() -> FileModel:
    return FileModel(file_name="hi.txt", content_type="text/plain", content="aGk=")


@app.endpoint("/job")
def job() -> JobResult:
    return JobResult(job_id="j-1", status="finished", result="done")


@app.endpoint("/chat")
def chat(request: ChatCompletionRequest) -> Iterator[str]:
    yield "echo: " + request.messages[-1].text


class ChatRequestPlus(schemas.ChatCompletionRequest):
    """Extended as the toolkit's own schema test service extends it."""
    persona: str = "pirate"


@app.endpoint("/chat-extended")
def chat_extended(request: ChatRequestPlus):
    return f"[{request.persona}] {request.messages[-1].content}"
