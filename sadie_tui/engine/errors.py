"""The one error family of sadie: every failure a person can meet, with a title and a fix.

DuckDB, Ollama and file errors are translated into these at the edge; the CLI prints
``message`` on one line and exits with ``exit_code``; the TUI shows a notification.
"""

from __future__ import annotations

from enum import IntEnum, StrEnum


class ExitCode(IntEnum):
    """Exit statuses that scripts may rely on (documented in the README)."""

    OK = 0
    FAILURE = 1
    USAGE = 2
    STORAGE = 3
    MODEL = 4
    NOT_FOUND = 5
    PARTIAL = 6
    KEY = 7  # an encrypted memory's key is missing or wrong: nothing was opened or written


class ErrorKind(StrEnum):
    """What kind of failure an error event reports (``ErrorEvent.code``)."""

    USAGE = "usage"
    STORAGE = "storage"
    NOT_FOUND = "not_found"
    MODEL = "model"
    UNREACHABLE = "unreachable"
    MODEL_MISSING = "model_missing"
    TIMEOUT = "timeout"
    STREAM = "stream"
    NO_ANSWER = "no_answer"
    INTERRUPTED = "interrupted"  # ctrl+c or a signal stopped the reply (kept as interrupted)
    FAILURE = "error"
    KEY = "key"  # an encrypted memory's key is missing or wrong


# The one table from an error's kind to the README's exit codes.
EXIT_CODES: dict[ErrorKind, ExitCode] = {
    ErrorKind.USAGE: ExitCode.USAGE,
    ErrorKind.STORAGE: ExitCode.STORAGE,
    ErrorKind.NOT_FOUND: ExitCode.NOT_FOUND,
    ErrorKind.MODEL: ExitCode.MODEL,
    ErrorKind.UNREACHABLE: ExitCode.MODEL,
    ErrorKind.MODEL_MISSING: ExitCode.MODEL,
    ErrorKind.TIMEOUT: ExitCode.MODEL,
    ErrorKind.STREAM: ExitCode.MODEL,
    ErrorKind.NO_ANSWER: ExitCode.MODEL,
    # The stopped process itself exits 128 + the signal (130 for ctrl+c); a client reading
    # the event from its holder did not get its reply.
    ErrorKind.INTERRUPTED: ExitCode.FAILURE,
    ErrorKind.FAILURE: ExitCode.FAILURE,
    ErrorKind.KEY: ExitCode.KEY,
}


def exit_code_for(kind: str) -> ExitCode:
    """The exit status for an error event's ``code`` (unknown kinds are failures)."""
    try:
        return EXIT_CODES[ErrorKind(kind)]
    except ValueError:
        return ExitCode.FAILURE


# What a failed connection to a model server means, in words, by the transport's exception
# class (looked up by name along its classes, so this module needs no HTTP library). A person
# reads these; a class name ("RemoteProtocolError") tells them nothing.
CONNECTION_WORDS = {
    "RemoteProtocolError": "the model server closed the connection before the reply was complete",
    "ReadError": "the connection to the model server was cut while the reply came in",
    "WriteError": "the request could not be sent to the model server",
    "ProxyError": "a proxy between sadie and the model server refused the connection",
    "UnsupportedProtocol": "the model server's address does not start with http:// or https://",
    "DecodingError": "the model server sent a reply that could not be decoded",
    "TooManyRedirects": "the model server redirected sadie too many times",
    "LocalProtocolError": "sadie sent the model server a request it could not make sense of",
    "ConnectionResetError": "the model server reset the connection",
    "BrokenPipeError": "the connection to the model server broke",
}


def in_words(exc: BaseException) -> str:
    """What went wrong, for a person: the words for a known transport failure, else the
    exception's own message (its first 300 characters), never its class name alone."""
    for kind in type(exc).__mro__:
        if kind.__name__ in CONNECTION_WORDS:
            return CONNECTION_WORDS[kind.__name__]
    said = " ".join(str(exc).split())[:300]
    return said or "it gave no reason"


class SadieError(Exception):
    """A failure explained in one line, with an optional fix."""

    title = "sadie"
    exit_code: ExitCode = ExitCode.FAILURE

    def __init__(self, message: str, *, fix: str | None = None, title: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        if title is not None:
            self.title = title

    def one_line(self) -> str:
        line = self.message if not self.fix else f"{self.message} ({self.fix})"
        return " ".join(line.split())


class UsageError(SadieError):
    """The person asked for something malformed (an empty question, a bad option)."""

    title = "Usage"
    exit_code = ExitCode.USAGE


class StorageError(SadieError):
    title = "Storage"
    exit_code = ExitCode.STORAGE


class LockedError(StorageError):
    """The memory is held by another process: ``holder`` is its pid when DuckDB names it."""

    title = "Memory in use"

    def __init__(self, message: str, *, holder: int | None = None, fix: str | None = None) -> None:
        super().__init__(message, fix=fix)
        self.holder = holder

    @classmethod
    def held_by(cls, path: object, holder: int | None) -> LockedError:
        return cls(
            f"the memory at {path} is in use by {_who(holder)}",
            holder=holder,
            fix="close the other sadie first, or wait for its ingest to finish",
        )

    @property
    def who(self) -> str:
        """The holder as a person reads it: "another sadie (pid 123)", or "another process"."""
        return _who(self.holder)


def _who(holder: int | None) -> str:
    return f"another sadie (pid {holder})" if holder else "another process"


class BrokenLogError(StorageError):
    """The memory's write-ahead log cannot be replayed (a damaged entry): the file does not
    open until the log is set aside (``sadie doctor --repair``)."""

    title = "Damaged log"


class KeyNeededError(SadieError):
    """An encrypted memory's key is missing or wrong. Raised before DuckDB opens the file, so
    nothing is written."""

    title = "Key"
    exit_code = ExitCode.KEY
    code = ErrorKind.KEY


class ModelError(SadieError):
    title = "Model"
    exit_code = ExitCode.MODEL


class NotFoundError(SadieError):
    title = "Not found"
    exit_code = ExitCode.NOT_FOUND


class ConfigError(SadieError):
    title = "Configuration"
    exit_code = ExitCode.USAGE


class ModelUnreachable(ModelError):
    code = ErrorKind.UNREACHABLE


class NeedsModel(ModelUnreachable):
    """A run that has no offline form (``sadie reflect``, ``soul suggest``) found no model
    to ask; ``reason`` is why, in the model check's words."""

    FIX = "start Ollama or set OLLAMA_HOST, then run it again"

    def __init__(self, what: str, reason: str) -> None:
        super().__init__(f"{what} needs a model: {reason}", fix=self.FIX)
        self.what = what
        self.reason = reason

    def in_holder(self, pid: int) -> ModelUnreachable:
        """The same, for a client whose run the holder ``pid`` made: the holder asks its own
        model server, which the client's environment does not change."""
        return ModelUnreachable(
            f"{self.what} runs in the sadie holding this memory (pid {pid}), which uses its "
            f"own model server: {self.reason}",
            fix="F4 there changes it; OLLAMA_HOST here does not reach it",
        )


class ModelMissing(ModelError):
    code = ErrorKind.MODEL_MISSING


class ModelTimeout(ModelError):
    code = ErrorKind.TIMEOUT


class ModelStreamError(ModelError):
    code = ErrorKind.STREAM


class ModelNoAnswer(ModelError):
    """The reply had nothing to show: the model only reasoned (an unclosed ``<think>``, or
    nothing after its reasoning), or it wrote nothing visible at all."""

    code = ErrorKind.NO_ANSWER
