"""Stand-in for the face2face package (onnxruntime models): only what server.py imports."""
__version__ = "0.0.0-standin"
