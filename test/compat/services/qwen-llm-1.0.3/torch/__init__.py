"""Stand-in for torch: only what test_qwen_llm.py touches, on numpy, CPU only."""
import contextlib

import numpy as np

float16 = np.float16
float32 = np.float32


class Tensor:
    def __init__(self, array):
        self.array = array.array if isinstance(array, Tensor) else np.asarray(array)

    @property
    def shape(self):
        return self.array.shape

    def __getitem__(self, index):
        return Tensor(self.array[index])

    def __iter__(self):
        return (Tensor(row) for row in self.array)

    def tolist(self):
        return self.array.tolist()

    def mean(self, dim=None):
        return Tensor(self.array.mean(axis=dim))

    def to(self, _device):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.array


class _Cuda:
    @staticmethod
    def is_available():
        return False

    @staticmethod
    def empty_cache():
        pass


class _Version:
    hip = None


cuda = _Cuda()
version = _Version()


def no_grad():
    return contextlib.nullcontext()
