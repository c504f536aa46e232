"""Stand-in for face2face's Face2Face (insightface + onnx models): deterministic array work,
so a request's answer depends only on its input, under either server."""
import numpy as np


class Face2Face:
    def swap_img_to_img(self, source_img, target_img, enhance_face_model=None):
        # The "swap" keeps the target's shape and marks it with the source's mean colour.
        out = np.array(target_img, copy=True)
        out[..., :] = np.asarray(source_img).reshape(-1, out.shape[-1]).mean(axis=0).astype(out.dtype)
        return out

    def add_face(self, face_name, media, save=False):
        if isinstance(face_name, list):
            return {name: {"name": name, "embedding": [float(i)] * 4} for i, name in enumerate(face_name)}
        return face_name, {"name": face_name, "embedding": [0.0] * 4}

    def enhance_faces(self, image, model=None):
        return np.asarray(image.to_np_array())

    def swap(self, faces, media, enhance_face_model=None):
        return np.asarray(media.to_np_array())

    def get_faces(self, faces):
        return {"face": faces}
