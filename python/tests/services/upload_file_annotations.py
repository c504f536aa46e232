"""Parameters annotated with FastAPI's UploadFile, as the apipod toolkit's own test service
(test/services/core_service.py) writes them, with FastAPI's parameter markers as FastAPI
services write them, and with socaity-schemas' file models."""
from typing import Optional

from fastapi import Body, File, Form, UploadFile
from fastapi import UploadFile as FastAPIUploadFile
from socaity_schemas.public.inference.media import ImageFileModel

from apipod import APIPod, FileModel, ImageFile

app = APIPod()


def describe(upload) -> dict:
    return {"type": type(upload).__name__, "file_name": upload.file_name, "filename": upload.filename,
            "content_type": upload.content_type, "read": upload.read().decode(), "file": upload.file.read().decode(),
            "size": upload.size}


@app.endpoint("/upload")
def upload(anyfile3: FastAPIUploadFile):
    return describe(anyfile3)


@app.endpoint("/maybe")
async def maybe(document: Optional[UploadFile] = None, note: str = ""):
    return None if document is None else describe(document)


@app.endpoint("/mixed")
def mixed(anyfile2: FileModel, img: ImageFile | str | bytes | FileModel, picture: ImageFileModel):
    return [type(anyfile2).__name__, type(img).__name__, type(picture).__name__, picture.content_type]


@app.endpoint("/form")
def form(document: UploadFile = File(...), note: str = Form("none"), tags: list[str] = Body(default_factory=list)):
    return {"document": document.filename, "note": note, "tags": tags}
