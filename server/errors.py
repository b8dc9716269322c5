"""A request refused: what every part of the server raises for the client to be told, with the
protocol's error code; nothing was changed."""

from __future__ import annotations

from tonk.shared.game.session import SessionError


class RequestError(Exception):
    """A request refused; nothing was changed. `code` is a protocol error code."""

    def __init__(self, code: str, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = detail

    @classmethod
    def refused(cls, exc: SessionError) -> RequestError:
        """The request the session's rules refused, as the protocol's error (a field at fault
        named first: `stake: ...`)."""
        message = exc.message if exc.detail is None else f"{exc.detail}: {exc.message}"
        return cls(exc.code, message, exc.detail)
