# Served by `bentoml serve service:Bench --port PORT` (BentoML): POST /echo {"text": ...}, POST /image {"image": base64}.
import base64

import bentoml


@bentoml.service
class Bench:
    @bentoml.api
    def echo(self, text: str) -> dict:
        return {"text": text}

    @bentoml.api
    def image(self, image: str) -> bytes:
        return base64.b64decode(image)
