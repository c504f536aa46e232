# Served by `python server.py PORT` (LitServe): POST /predict {"text": ...} or {"image": base64}.
import base64
import sys

import litserve as ls
from fastapi import Response


class EchoAPI(ls.LitAPI):
    def setup(self, device):
        pass

    def decode_request(self, request):
        return request

    def predict(self, request):
        return request

    def encode_response(self, output):
        if "image" in output:
            return Response(base64.b64decode(output["image"]), media_type="image/png")
        return {"text": output["text"]}


if __name__ == "__main__":
    ls.LitServer(EchoAPI(), accelerator="cpu").run(host="127.0.0.1", port=int(sys.argv[1]), generate_client_file=False)
