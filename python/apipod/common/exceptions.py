"""The upstream apipod toolkit's exceptions (apipod 1.0.33, apipod/common/exceptions.py), for
services that raise or catch them. Raised from an endpoint, one fails its call (or job) with
its message, as any exception does under svc; none of them is a 500 of the server's own."""


class JobException(Exception):
    """A job that failed for a reason other than the function's own work (an upload that could
    not be read, say)."""


class FileUploadException(JobException):
    def __init__(self, file_name: str = "", message: str = "File upload failed"):
        self.file_name = file_name
        prefix = f"FileUploadException: {file_name} - " if file_name else "FileUploadException: "
        super().__init__(prefix + message)


class InsufficientBalanceException(JobException):
    """Upstream's platform refuses a job for want of balance; svc never raises it itself."""

    def __init__(self, message: str = "Insufficient balance"):
        super().__init__(message)
