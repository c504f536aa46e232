# Served by coglet (`python -m cog.server.http`, COG_PREDICT_TYPE_STUB=predict.py:Predictor):
# POST /predictions {"input": {...}}. Async predict, so COG_MAX_CONCURRENCY calls run at once
# instead of a 409 for every call that finds the predictor busy.
import base64

from cog import BasePredictor, Input, Path


class Predictor(BasePredictor):
    async def predict(self, text: str = Input(default=""), image: Path = Input(default=None)) -> str:
        if image is not None:
            # A data URL in, a data URL out: how Cog answers a file without --upload-url.
            return "data:image/png;base64," + base64.b64encode(image.read_bytes()).decode()
        return text
