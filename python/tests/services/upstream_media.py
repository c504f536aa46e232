"""What services written for the apipod toolkit read off media files (media-toolkit's API)."""
import numpy as np

from apipod import APIPod, AudioFile, ImageFile, MediaFile

app = APIPod()


@app.post("/file-facts")
def file_facts(file: MediaFile):
    return {"file_name": file.file_name, "extension": file.extension, "kb": file.file_size("kb"),
            "bytes": file.file_size(), "head": file.read(4).hex(), "same": bytes(file) == file.to_bytes_io().read(),
            "path": file.path}


@app.post("/info")
def info(audio: AudioFile):
    return {"sample_rate": audio.sample_rate, "channels": audio.channels, "duration": audio.duration,
            "extension": audio.extension, "shape": list(audio.to_np_array().shape)}


@app.post("/beep")
def beep(seconds: float = 0.5, sample_rate: int = 16000):
    time = np.arange(int(seconds * sample_rate)) / sample_rate
    return AudioFile().from_np_array(0.5 * np.sin(2 * np.pi * 440 * time), sample_rate=sample_rate)


@app.post("/as-array")
def as_array(image: ImageFile):
    return list(np.array(image).shape)


@app.post("/frames")
def frames(video: MediaFile):
    from apipod import VideoFile
    return len(list(VideoFile.from_any(video)))
