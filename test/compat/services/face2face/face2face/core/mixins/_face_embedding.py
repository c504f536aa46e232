"""Stand-in for face2face's embedding file: a face (a dict here) written as .npy bytes."""
import io

import numpy as np


class FileWriteableFace(dict):
    def __init__(self, face):
        super().__init__(face)

    def to_bytes_io(self):
        buffer = io.BytesIO()
        np.save(buffer, np.asarray(self.get("embedding", []), dtype=np.float32))
        buffer.seek(0)
        return buffer
