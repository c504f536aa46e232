"""Image bytes <-> numpy arrays the way OpenCV reads and writes them, done with Pillow.

The apipod toolkit's `ImageFile.to_np_array()` is `cv2.imdecode(..., IMREAD_UNCHANGED)` and its
`from_np_array(array, img_type)` is `cv2.imencode("." + img_type, array)` (media-toolkit 0.2.24),
so services written for it, and the models they feed, expect OpenCV's arrays: channels in BGR
or BGRA order, palette images expanded, 16-bit greyscale kept. svc's toolkit needs no OpenCV;
the rules below reproduce what OpenCV 5.0 gives for each kind of file, checked image by image.
Where the service's environment has OpenCV and no Pillow (media-toolkit brings OpenCV, not
Pillow), OpenCV itself does the work, as in the toolkit.
"""
from __future__ import annotations

import importlib
import io
import struct
from dataclasses import dataclass
from typing import Any

from .optional_types import require


@dataclass(frozen=True)
class ImageFormat:
    pillow_format: str  # the name Pillow's save() takes
    content_type: str
    save_options: tuple = ()  # (name, value) pairs: OpenCV's defaults where Pillow's differ


# img_type (OpenCV's extension without the dot) -> how Pillow writes it. OpenCV writes JPEG at
# quality 95 and WebP lossless unless told otherwise (cv::ImwriteFlags).
IMAGE_FORMATS = {
    "png": ImageFormat("PNG", "image/png"),
    "jpg": ImageFormat("JPEG", "image/jpeg", (("quality", 95),)),
    "jpeg": ImageFormat("JPEG", "image/jpeg", (("quality", 95),)),
    "jpe": ImageFormat("JPEG", "image/jpeg", (("quality", 95),)),
    "bmp": ImageFormat("BMP", "image/bmp"),
    "tif": ImageFormat("TIFF", "image/tiff"),
    "tiff": ImageFormat("TIFF", "image/tiff"),
    "webp": ImageFormat("WEBP", "image/webp", (("lossless", True),)),
    "gif": ImageFormat("GIF", "image/gif"),
}


def decode_image(content: bytes) -> Any:
    """The image as OpenCV's `imdecode(IMREAD_UNCHANGED)` gives it: height x width for one
    channel, height x width x 3 (BGR) or x 4 (BGRA), a new writable array."""
    numpy = require("numpy", "ImageFile.to_np_array")
    if _image_library("ImageFile.to_np_array") == "cv2":
        return _opencv_decode(content, "ImageFile.to_np_array", numpy)
    image = _open(content, "ImageFile.to_np_array")
    if _has_16_bit_colour(content, image):
        raise ValueError("ImageFile.to_np_array: this is a 16-bit colour image, of which Pillow, which svc's toolkit "
                         "decodes images with, reads 8 bits only; decode it with OpenCV (pip install "
                         "opencv-python-headless): cv2.imdecode(numpy.frombuffer(image.to_bytes(), numpy.uint8), "
                         "cv2.IMREAD_UNCHANGED)")
    image.load()
    converted = image.convert(_decoded_mode(image)) if _decoded_mode(image) != image.mode else image
    array = numpy.array(converted)
    if image.mode == "I" and image.format in ("PNG", "TIFF") and _bits_per_sample(content, image) == (16,):
        # 16-bit greyscale that Pillow opened as 32-bit: OpenCV keeps 16 bits, signed as the TIFF says
        signed = image.format == "TIFF" and image.tag_v2.get(339) in (2, (2,))
        array = array.astype(numpy.int16 if signed else numpy.uint16)
    if _has_tiff_alpha(image):
        # OpenCV reads such a TIFF through libtiff's RGBA interface, which gives the colours
        # premultiplied by the alpha, rounding as libtiff does: (colour * alpha + 127) // 255.
        # Pillow gives them straight, for associated alpha too (exact again within 1).
        alpha = array[:, :, 3:].astype(numpy.uint32)
        array[:, :, :3] = (array[:, :, :3].astype(numpy.uint32) * alpha + 127) // 255
    return _swap_red_and_blue(array, numpy)


def image_channels(content: bytes) -> int:
    """How many channels `decode_image` gives, read from the header without decoding the pixels
    (OpenCV, which reads no header alone, decodes them)."""
    if _image_library("ImageFile.channels") == "cv2":
        pixels = _opencv_decode(content, "ImageFile.channels", require("numpy", "ImageFile.channels"))
        return 1 if pixels.ndim == 2 else pixels.shape[2]
    return _CHANNELS[_decoded_mode(_open(content, "ImageFile.channels"))]


def image_size(content: bytes) -> tuple[int, int]:
    """(width, height), read from the header."""
    if _image_library("ImageFile.dimensions") == "cv2":
        pixels = _opencv_decode(content, "ImageFile.dimensions", require("numpy", "ImageFile.dimensions"))
        return pixels.shape[1], pixels.shape[0]
    return _open(content, "ImageFile.dimensions").size


def encode_image(array: Any, img_type: str) -> bytes:
    """The bytes OpenCV's `imencode("." + img_type, array)` writes, for a BGR / BGRA / greyscale array."""
    numpy = require("numpy", "ImageFile.from_np_array")
    library = _image_library("ImageFile.from_np_array")
    image_format = IMAGE_FORMATS.get(str(img_type).lower().lstrip("."))
    if image_format is None:
        raise ValueError(f"Could not convert numpy array to {img_type} image: img_type is an image format, one of "
                         f"{', '.join(IMAGE_FORMATS)} (to name the file, set file_name on the result)")
    if library == "cv2":
        return _opencv_encode(numpy.asarray(array), str(img_type).lower().lstrip("."))
    image_module = require("PIL.Image", "ImageFile.from_np_array")
    pixels = numpy.asarray(array)
    if pixels.ndim == 3 and pixels.shape[2] == 1:
        pixels = pixels[:, :, 0]
    if not (pixels.ndim == 2 or (pixels.ndim == 3 and pixels.shape[2] in (3, 4))):
        raise ValueError(f"cannot write an array of shape {pixels.shape} as an image: it needs height x width, "
                         "or height x width x 3 (BGR) or x 4 (BGRA)")
    pixels = _writable_depth(pixels, image_format, numpy)
    if image_format.pillow_format == "BMP" and pixels.ndim == 3 and pixels.shape[2] == 4:
        return _bmp_with_alpha(pixels, numpy)
    pixels = _swap_red_and_blue(pixels, numpy)
    if image_format.pillow_format == "JPEG" and pixels.ndim == 3 and pixels.shape[2] == 4:
        pixels = pixels[:, :, :3]  # JPEG has no alpha: OpenCV drops it too
    buffer = io.BytesIO()
    image_module.fromarray(numpy.ascontiguousarray(pixels)).save(
        buffer, format=image_format.pillow_format, **dict(image_format.save_options))
    if image_format.pillow_format == "TIFF" and pixels.ndim == 3 and pixels.shape[2] == 4:
        return _without_extra_samples(buffer.getvalue())
    return buffer.getvalue()


# Pillow mode of the decoded image -> channels in the array.
_CHANNELS = {"L": 1, "I;16": 1, "I;16B": 1, "I;16L": 1, "I": 1, "F": 1, "RGB": 3, "RGBA": 4}


def _decoded_mode(image) -> str:
    """The Pillow mode whose pixels match OpenCV's decode of this image."""
    mode = image.mode
    if mode in _CHANNELS:
        return mode
    if mode == "1":
        return "L"  # bilevel: 0 and 255
    if mode in ("P", "PA"):
        # Palettes expand to BGR, or BGRA when they have transparency; OpenCV's GIF reader
        # gives BGRA for every animated GIF.
        animated = image.format == "GIF" and getattr(image, "n_frames", 1) > 1
        return "RGBA" if mode == "PA" or "transparency" in image.info or animated else "RGB"
    if mode in ("LA", "La", "RGBa"):
        return "RGBA"
    if mode == "CMYK":
        return "RGBA" if image.format == "TIFF" else "RGB"  # OpenCV reads CMYK TIFF with an opaque alpha
    return "RGB"


def _has_tiff_alpha(image) -> bool:
    """An 8-bit RGBA TIFF whose alpha is declared (TIFF 6.0 ExtraSamples, tag 338): associated
    (1) or unassociated (2). One without the tag, as OpenCV writes it, is read as it is stored."""
    if image.format != "TIFF" or image.mode != "RGBA":
        return False
    extra_samples = image.tag_v2.get(338)
    declared = extra_samples if isinstance(extra_samples, tuple) else (extra_samples,)
    return 1 in declared or 2 in declared


def _bits_per_sample(content: bytes, image) -> tuple:
    """Bits of each channel as the file stores them: PNG's IHDR, TIFF's BitsPerSample (tag 258)."""
    if image.format == "PNG" and len(content) > 25:
        return (content[24],) * {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(content[25], 1)
    if image.format == "TIFF":
        bits = image.tag_v2.get(258, (1,))
        return bits if isinstance(bits, tuple) else (bits,)
    return ()


def _has_16_bit_colour(content: bytes, image) -> bool:
    """More than one channel of over 8 bits, which Pillow opens as 8-bit RGB(A) or LA."""
    bits = _bits_per_sample(content, image)
    return len(bits) > 1 and max(bits) > 8


def _writable_depth(pixels, image_format: ImageFormat, numpy):
    """uint8, or uint16 where the format stores it (greyscale PNG and TIFF); TIFF keeps float32
    and int32 greyscale (int64 as int32), as OpenCV does; other depths are rounded and clipped to
    0..255, as OpenCV does for encoders that take 8 bits only."""
    if pixels.dtype == numpy.uint8:
        return pixels
    if pixels.dtype == numpy.bool_:
        return pixels.astype(numpy.uint8)
    is_tiff = image_format.pillow_format == "TIFF"
    if pixels.dtype == numpy.uint16 and (is_tiff or image_format.pillow_format == "PNG"):
        if pixels.ndim == 2:
            return pixels
        raise ValueError("cannot write a 16-bit colour image: Pillow, which svc's toolkit writes images with, "
                         "stores 16 bits for greyscale only; convert it to uint8 first")
    if is_tiff and pixels.dtype.kind in "iuf" and pixels.dtype != numpy.float16:
        # OpenCV's TIFF keeps every depth but float16; clipping to 8 bits would wreck a depth map.
        if pixels.ndim == 2 and pixels.dtype in (numpy.float32, numpy.int32):
            return pixels
        if pixels.ndim == 2 and pixels.dtype == numpy.int64:
            return pixels.astype(numpy.int32)  # wrapping, as OpenCV's conversion does
        raise ValueError(f"cannot write a {pixels.dtype} {'greyscale' if pixels.ndim == 2 else 'colour'} image as TIFF "
                         "with its depth, as OpenCV would: Pillow, which svc's toolkit writes images with, stores "
                         "uint8 colour and uint8, uint16, int32 or float32 greyscale; convert the array to one of those")
    return numpy.clip(numpy.rint(pixels), 0, 255).astype(numpy.uint8)


def _bmp_with_alpha(bgra, numpy) -> bytes:
    """A 32-bit BMP that keeps its alpha, as OpenCV writes one: a BITMAPV4HEADER naming each
    channel's bits (Pillow's 32-bit BMP has none, and every reader drops its alpha)."""
    height, width = bgra.shape[:2]
    pixels = numpy.ascontiguousarray(bgra[::-1]).tobytes()  # rows bottom-up, each pixel B, G, R, A
    info = struct.pack("<IiiHHIIiiII4II36x12x", 108, width, height, 1, 32, 3, len(pixels), 2835, 2835, 0, 0,
                       0x00FF0000, 0x0000FF00, 0x000000FF, 0xFF000000, 0x73524742)  # masks; "sRGB"
    return b"BM" + struct.pack("<IHHI", 14 + len(info) + len(pixels), 0, 0, 14 + len(info)) + info + pixels


def _without_extra_samples(tiff: bytes) -> bytes:
    """Pillow's RGBA TIFF less its ExtraSamples tag (338), as OpenCV writes one: declared
    unassociated, the alpha has libtiff (so OpenCV) premultiply the colours on reading; undeclared,
    every reader takes the four channels as stored."""
    data = bytearray(tiff)
    directory = struct.unpack_from("<I", data, 4)[0]  # Pillow writes little-endian ("II")
    count = struct.unpack_from("<H", data, directory)[0]
    end = directory + 2 + 12 * count + 4  # the entries, then the next directory's offset
    for entry_offset in range(directory + 2, end - 4, 12):
        if struct.unpack_from("<H", data, entry_offset)[0] == 338:
            # The entries after it move up; values stored elsewhere keep their offsets.
            data[entry_offset:end] = data[entry_offset + 12:end] + bytes(12)
            struct.pack_into("<H", data, directory, count - 1)
            break
    return bytes(data)


def _swap_red_and_blue(pixels, numpy):
    """RGB(A) <-> BGR(A); the same swap both ways. Other shapes pass as they are."""
    if pixels.ndim == 3 and pixels.shape[2] == 3:
        return numpy.ascontiguousarray(pixels[:, :, ::-1])
    if pixels.ndim == 3 and pixels.shape[2] == 4:
        return numpy.ascontiguousarray(pixels[:, :, [2, 1, 0, 3]])
    return pixels


def _image_library(purpose: str) -> str:
    """"PIL" when the environment has Pillow, else "cv2" when it has OpenCV (and the numpy OpenCV
    needs); an ImportError naming both when it has neither."""
    for module_names in (("PIL.Image",), ("numpy", "cv2")):
        try:
            for module_name in module_names:
                importlib.import_module(module_name)
        except ImportError:
            continue
        return module_names[-1].split(".")[0]
    raise ImportError(f"{purpose} needs Pillow or OpenCV: pip install Pillow (or opencv-python-headless)")


def _opencv_decode(content: bytes, purpose: str, numpy):
    """What the apipod toolkit's media-toolkit does: `cv2.imdecode(..., IMREAD_UNCHANGED)`."""
    cv2 = importlib.import_module("cv2")
    pixels = cv2.imdecode(numpy.frombuffer(content, numpy.uint8), cv2.IMREAD_UNCHANGED)
    if pixels is None:
        raise ValueError(f"{purpose}: the file is not an image OpenCV can read ({len(content)} bytes)")
    return pixels


def _opencv_encode(pixels, img_type: str) -> bytes:
    """What the apipod toolkit's media-toolkit does: `cv2.imencode("." + img_type, array)`."""
    cv2 = importlib.import_module("cv2")
    try:
        written, buffer = cv2.imencode("." + img_type, pixels)
    except cv2.error as error:
        raise ValueError(f"Could not convert numpy array of shape {pixels.shape} to {img_type} image: {error}") from None
    if not written:
        raise ValueError(f"Could not convert numpy array to {img_type} image: OpenCV could not write it")
    return buffer.tobytes()


def _open(content: bytes, purpose: str):
    image_module = require("PIL.Image", purpose)
    try:
        return image_module.open(io.BytesIO(content))
    except image_module.UnidentifiedImageError:
        raise ValueError(f"{purpose}: the file is not an image Pillow can read ({len(content)} bytes)") from None
