"""A service annotated with the schemas the apipod toolkit re-exports from socaity-schemas."""
from apipod import APIPod
from apipod.common import schemas
from apipod.common.exceptions import FileUploadException, JobException
from apipod.common.schemas import EmbeddingRequest, EmbeddingResponse

app = APIPod()


@app.endpoint("/embed")
def embed(request: EmbeddingRequest) -> EmbeddingResponse:
    texts = [request.input] if isinstance(request.input, str) else request.input
    return EmbeddingResponse(data=[{"embedding": [float(len(text))], "index": index} for index, text in enumerate(texts)],
                             model=request.model or "length")


@app.endpoint("/speak")
def speak(request: schemas.SpeechRequest):
    return {"type": type(request).__module__.split(".")[0], "input": request.input}


@app.endpoint("/refuse")
def refuse(file_name: str):
    raise FileUploadException(file_name, "not an image")


@app.endpoint("/is-job-exception")
def is_job_exception() -> bool:
    return issubclass(FileUploadException, JobException)
