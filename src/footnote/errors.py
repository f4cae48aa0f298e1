"""The exception tree, split by who must act.

    FootnoteError
    ├── UsageError            the person at the keyboard: bad input, unknown id, bad flag
    │   ├── NotFound          a source, block, session or run id that does not exist
    │   └── ConfigError       the configuration is invalid or a role is unbound
    │       └── SandboxUnavailable  the code sandbox cannot be built on this machine
    ├── IngestError           a document could not be turned into blocks (says why)
    │   ├── EncryptedDocument needs a password (or the one given is wrong)
    │   └── UnsupportedInput  not a format we read, or over a configured limit
    ├── StoreError            persistence failed
    ├── ModelError            a model call failed at run time
    │   ├── ProviderUnavailable  the backend cannot be reached or is not installed
    │   ├── ModelOutputInvalid   output failed validation after the repair attempt
    │   └── LicenceRefused       labelled text may not be sent to this role's model
    ├── FetchError            a web page, search or database could not be read (says why)
    │   └── EgressRefused     the egress policy forbids it: scheme, domain, address, size
    ├── BudgetExceeded        a run hit its token / call / search / fetch / wall-clock budget
    └── ToolRetry             a message that goes back to the model as an observation

Exceptions carry data, never side effects (no logging in constructors).
"""

from __future__ import annotations


class FootnoteError(Exception):
    """Root of every error footnote raises on purpose."""

    @property
    def public_message(self) -> str:
        """What a reader may be shown (a refusal reason, an error event); the full message
        (`str(exc)`) goes to the trace."""
        return str(self)


class UsageError(FootnoteError):
    """The caller asked for something invalid; the message says what to do instead."""


class NotFound(UsageError):
    """An id or path names nothing we know."""


class ConfigError(UsageError):
    """Invalid configuration, or a model role with no binding."""


class SandboxUnavailable(ConfigError):
    """The code sandbox (bubblewrap, seccomp, a system Python) is missing here; nothing runs."""


class IngestError(FootnoteError):
    """A document could not be parsed into blocks."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class EncryptedDocument(IngestError):
    """The PDF is encrypted and no (correct) password was given."""


class UnsupportedInput(IngestError):
    """A format we do not read, or a file over a configured limit."""


class StoreError(FootnoteError):
    """Persistence failed."""


class ModelError(FootnoteError):
    """A model call failed at run time."""


class ProviderUnavailable(ModelError):
    """The model backend is not installed or cannot be reached."""


class ModelOutputInvalid(ModelError):
    """The model's output failed validation, even after one repair attempt. Its message quotes
    the output (for the trace and the repair prompt); readers get a generic one."""

    @property
    def public_message(self) -> str:
        """Generic: the model's raw output is never shown as a reason."""
        return "the model's reply was not a valid answer (details are in the run's trace)"


class LicenceRefused(ModelError):
    """Text carrying a restrictive label would reach a model it may not reach."""

    def __init__(self, role: str, label: str, model: str) -> None:
        super().__init__(
            f"role {role!r} is bound to external model {model!r}; "
            f"input labelled {label!r} may not be sent there"
        )
        self.role = role
        self.label = label
        self.model = model


class FetchError(FootnoteError):
    """A remote page, search API or database could not be read."""


class EgressRefused(FetchError):
    """The egress policy forbids this request (scheme, domain, resolved address, size)."""


class BudgetExceeded(FootnoteError):
    """A run reached one of its budget limits."""

    def __init__(self, resource: str, used: float, limit: float) -> None:
        super().__init__(f"budget exceeded: {resource} used {used:g} of {limit:g}")
        self.resource = resource
        self.used = used
        self.limit = limit


class ToolRetry(FootnoteError):
    """Raised inside a tool: the message is shown to the model, which may try again."""


def error_code(exc: FootnoteError) -> str:
    """The `code` of the `error` event a run that failed with `exc` ends with."""
    if isinstance(exc, BudgetExceeded):
        return "budget_exceeded"
    if isinstance(exc, LicenceRefused):
        return "licence_refused"
    if isinstance(exc, ModelError):
        return "model_unavailable"
    return "failed"
