"""The one error type for "what you gave us cannot be read": printed as one line, exit 2."""


class InspectorError(Exception):
    """A user-facing problem (missing run, newer schema...). str() is the whole message."""
