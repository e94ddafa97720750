"""The window's connection to the runtime process: QProcess lines in, Qt signals out."""

from app.runtime_link.link import Call, ConnectionState, RuntimeLink

__all__ = ["Call", "ConnectionState", "RuntimeLink"]
