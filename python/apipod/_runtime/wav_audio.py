"""WAV audio <-> numpy arrays, with the standard library's `wave` module.

The apipod toolkit decodes audio with PyAV (media-toolkit 0.2.24, AudioFile); svc's toolkit
reads and writes PCM WAV only, into the same arrays: float32 samples in [-1, 1], shaped
(samples, channels). Other formats get a message naming what decodes them.
"""
from __future__ import annotations

import io
import wave
from dataclasses import dataclass
from typing import Any, Optional

from .content_type import guess_content_type
from .optional_types import require

WAV_CONTENT_TYPE = "audio/wav"
# Full scale of each PCM sample width: 8-bit WAV is unsigned around 128, wider ones signed.
_FULL_SCALE = {1: 128.0, 2: 32768.0, 3: 2.0 ** 31, 4: 2.0 ** 31}


@dataclass(frozen=True)
class WavInfo:
    sample_rate: int
    channels: int
    frames: int

    @property
    def duration(self) -> float:
        return self.frames / self.sample_rate if self.sample_rate else 0.0


def read_wav_info(content: bytes, purpose: str, content_type: Optional[str]) -> WavInfo:
    with _open_wav(content, purpose, content_type) as reader:
        return WavInfo(reader.getframerate(), reader.getnchannels(), reader.getnframes())


def decode_wav(content: bytes, purpose: str, content_type: Optional[str]) -> tuple[Any, int]:
    """(samples as float32 in [-1, 1], shaped (samples, channels); the sample rate)."""
    numpy = require("numpy", purpose)
    with _open_wav(content, purpose, content_type) as reader:
        width, channels, rate = reader.getsampwidth(), reader.getnchannels(), reader.getframerate()
        raw = reader.readframes(reader.getnframes())
    if width == 1:
        samples = numpy.frombuffer(raw, numpy.uint8).astype(numpy.float32) - 128.0
    elif width == 3:
        # 24-bit little-endian samples, shifted into the top of an int32 so the sign comes along.
        padded = numpy.zeros((len(raw) // 3, 4), numpy.uint8)
        padded[:, 1:] = numpy.frombuffer(raw, numpy.uint8).reshape(-1, 3)
        samples = padded.view("<i4").reshape(-1).astype(numpy.float32)
    else:
        samples = numpy.frombuffer(raw, "<i2" if width == 2 else "<i4").astype(numpy.float32)
    return (samples / _FULL_SCALE[width]).reshape(-1, channels), rate


def resample(samples: Any, from_rate: int, to_rate: int) -> Any:
    """Samples (samples, channels) at another rate, band-limited through the Fourier transform
    (as scipy.signal.resample does): nothing above the lower rate's Nyquist frequency is kept."""
    numpy = require("numpy", "AudioFile.to_np_array(sr=...)")
    count = samples.shape[0]
    target = int(round(count * to_rate / from_rate))
    spectrum = numpy.fft.rfft(samples, axis=0)
    kept = numpy.zeros((target // 2 + 1, samples.shape[1]), spectrum.dtype)
    shared = min(len(kept), len(spectrum))
    kept[:shared] = spectrum[:shared]
    return (numpy.fft.irfft(kept, n=target, axis=0) * (target / count)).astype(numpy.float32)


def encode_wav(channels_first: Any, sample_rate: int) -> bytes:
    """16-bit PCM WAV of int16 samples shaped (channels, samples)."""
    numpy = require("numpy", "AudioFile.from_np_array")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(int(channels_first.shape[0]))
        writer.setsampwidth(2)
        writer.setframerate(int(sample_rate))
        writer.writeframes(numpy.ascontiguousarray(channels_first.T, dtype="<i2").tobytes())
    return buffer.getvalue()


def _open_wav(content: bytes, purpose: str, content_type: Optional[str]) -> wave.Wave_read:
    if guess_content_type(content) != WAV_CONTENT_TYPE:
        raise NotImplementedError(
            f"{purpose}: svc's toolkit reads WAV audio only, and this file is {content_type or 'not WAV'}; "
            "decode other formats from audio.to_bytes_io() with a library that reads them, such as PyAV "
            "(pip install av) or soundfile")
    try:
        reader = wave.open(io.BytesIO(content), "rb")
    except (wave.Error, EOFError) as error:
        raise ValueError(f"{purpose}: Python's wave module cannot read this WAV file ({error}); svc's toolkit "
                         "reads PCM WAV, 8 to 32 bits; decode others with PyAV (pip install av) or soundfile") from None
    if reader.getsampwidth() not in _FULL_SCALE:
        reader.close()
        raise ValueError(f"{purpose}: WAV samples of {reader.getsampwidth()} bytes are not PCM svc's toolkit reads")
    return reader
