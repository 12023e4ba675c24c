"""Cloudify's operation errors, as its scripts raise them."""


class NonRecoverableError(Exception):
    """The operation fails at once, without retries."""


class RecoverableError(Exception):
    """The operation fails and may be retried (after ``retry_after`` seconds, if given)."""

    def __init__(self, message="", retry_after=None, causes=None):
        super().__init__(message)
        self.retry_after = retry_after
        self.causes = causes or []


class OperationRetry(RecoverableError):
    """Ask for the operation to run again."""
