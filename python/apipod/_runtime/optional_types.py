"""pydantic, numpy, Pillow, media-toolkit, socaity-schemas and Starlette (FastAPI): their types recognised without importing those
libraries (a service that uses one has imported it already, and one that does not should not
pay for it), and the library imported, with a message saying how to install it, when a feature
needs one."""
from __future__ import annotations

import sys
from typing import Any, Optional


def require(module_name: str, purpose: str):
    """The module, imported; an ImportError naming the package to install when it is missing."""
    try:
        __import__(module_name)
    except ImportError:
        package = "Pillow" if module_name.startswith("PIL") else module_name
        raise ImportError(f"{purpose} needs {package}: pip install {package}") from None
    return sys.modules[module_name]


def loaded_uuid_class() -> Optional[type]:
    """uuid.UUID once some module has imported uuid, else None. A service whose annotations or
    values hold a UUID has imported it; the toolkit does not, as uuid brings `platform` and
    costs every worker ~0.4 MiB."""
    return _loaded_class("uuid", "UUID")


def is_uuid(value: Any) -> bool:
    return _is_subclass(type(value), loaded_uuid_class())


def is_pydantic_model_class(cls: Any) -> bool:
    return _is_subclass(cls, _loaded_class("pydantic", "BaseModel"))


def is_pydantic_model(value: Any) -> bool:
    return is_pydantic_model_class(type(value))


def is_numpy_array_class(cls: Any) -> bool:
    return _is_subclass(cls, _loaded_class("numpy", "ndarray"))


def is_numpy_value(value: Any) -> bool:
    """An array or a numpy scalar (numpy.float32(1.5) and friends)."""
    return is_numpy_array_class(type(value)) or _is_subclass(type(value), _loaded_class("numpy", "generic"))


def is_pil_image_class(cls: Any) -> bool:
    return _is_subclass(cls, _loaded_class("PIL.Image", "Image"))


def is_pil_image(value: Any) -> bool:
    return is_pil_image_class(type(value))


def media_toolkit_kind(cls: Any) -> Optional[str]:
    """For media-toolkit's own media classes (the apipod toolkit's ImageFile is
    media_toolkit.ImageFile), the kind svc's media class of the same name has: "image",
    "audio", "video" or "file"; None for anything else."""
    for class_name, kind in (("ImageFile", "image"), ("AudioFile", "audio"), ("VideoFile", "video"),
                             ("MediaFile", "file")):
        if _is_subclass(cls, _loaded_class("media_toolkit", class_name)):
            return kind
    return None


# socaity-schemas' file models (apipod 1.0.33 re-exports them, and parses a parameter annotated
# with one into the media-toolkit class of the same kind), most specific first.
_SOCAITY_FILE_MODELS = (("ImageFileModel", "image"), ("AudioFileModel", "audio"), ("VideoFileModel", "video"),
                        ("FileModel", "file"))
# Where socaity-schemas keeps them: 0.1.12 under public.inference.media, older releases at the top.
_SOCAITY_MEDIA_MODULES = ("socaity_schemas.public.inference.media", "socaity_schemas")


def upload_annotation_kind(cls: Any) -> Optional[str]:
    """For the other classes the apipod toolkit reads an upload into (checked against 1.0.33):
    Starlette's UploadFile, which FastAPI's UploadFile is, "file"; socaity-schemas' FileModel
    and its ImageFileModel, AudioFileModel and VideoFileModel, their kind. None for anything else."""
    if _is_subclass(cls, _loaded_class("starlette.datastructures", "UploadFile")):
        return "file"
    for module_name in _SOCAITY_MEDIA_MODULES:
        for class_name, kind in _SOCAITY_FILE_MODELS:
            if _is_subclass(cls, _loaded_class(module_name, class_name)):
                return kind
    return None


def is_upload_file_class(cls: Any) -> bool:
    """Starlette's (so FastAPI's) UploadFile or a subclass."""
    return _is_subclass(cls, _loaded_class("starlette.datastructures", "UploadFile"))


def is_media_toolkit_file(value: Any) -> bool:
    return media_toolkit_kind(type(value)) is not None


def _loaded_class(module_name: str, class_name: str) -> Optional[type]:
    module = sys.modules.get(module_name)
    return getattr(module, class_name, None) if module is not None else None


def _is_subclass(cls: Any, base: Optional[type]) -> bool:
    return base is not None and isinstance(cls, type) and issubclass(cls, base)
