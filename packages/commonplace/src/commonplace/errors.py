"""The one exception hierarchy of commonplace.

Every error raised on purpose by commonplace or its integrations derives from
:class:`CommonplaceError`, and every message says how to fix the problem::

    CommonplaceError
     +-- InvalidInputError (ValueError)      bad text, role, scope, option or URL
     |    +-- InvalidTypeError (TypeError)   an argument of the wrong type
     |    +-- InvalidScopeError              a scope that is empty or malformed
     |    +-- InvalidURLError                a store URL that cannot be opened
     +-- NotFoundError (KeyError)            no record with that id in this store
     +-- PluginError                         a hook implementation misbehaved
     +-- EmbedderUnavailableError            a model's runtime or weights are missing or damaged
     +-- StoreError                          the store cannot be used as it is
          +-- StoreClosedError               the Memory was closed
          +-- CorruptStoreError              the file is not a healthy commonplace store
          +-- SchemaVersionError             the store was written by a newer commonplace
          +-- EmbedderMismatchError          the store is pinned to another embedding model
          +-- UnsupportedError               the backend lacks an optional capability

A refused call changes nothing: validation happens before any write, and every write
runs in one transaction.
"""

from __future__ import annotations

__all__ = [
    "CommonplaceError",
    "CorruptStoreError",
    "EmbedderMismatchError",
    "EmbedderUnavailableError",
    "InvalidInputError",
    "InvalidScopeError",
    "InvalidTypeError",
    "InvalidURLError",
    "NotFoundError",
    "PluginError",
    "SchemaVersionError",
    "StoreClosedError",
    "StoreError",
    "UnsupportedError",
]


class CommonplaceError(Exception):
    """Base class of every error commonplace raises on purpose."""


class InvalidInputError(CommonplaceError, ValueError):
    """An argument has a value commonplace cannot accept."""


class InvalidTypeError(InvalidInputError, TypeError):
    """An argument has the wrong type."""


class InvalidScopeError(InvalidInputError):
    """A scope is empty, has an unknown field or a malformed value."""


class InvalidURLError(InvalidInputError):
    """A store URL is malformed or names a scheme no backend serves."""


class NotFoundError(CommonplaceError, KeyError):
    """No record with the given id exists in this store (or in this scope)."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class PluginError(CommonplaceError):
    """A hook implementation returned something commonplace cannot use."""


class EmbedderUnavailableError(CommonplaceError):
    """An embedding model cannot run here: its runtime or weights are not installed, or
    its weights file does not match the SHA-256 it is pinned to. The message says which
    ``pip`` command installs what is missing."""


class StoreError(CommonplaceError):
    """The store cannot be used as it is."""


class StoreClosedError(StoreError):
    """The Memory (and its store) was closed."""


class CorruptStoreError(StoreError):
    """The file is not a healthy commonplace store."""


class SchemaVersionError(StoreError):
    """The store was written by a newer version of commonplace."""


class EmbedderMismatchError(StoreError):
    """The store is pinned to a different embedding model than the one given."""


class UnsupportedError(StoreError):
    """The store's backend lacks an optional capability the call needs (say, re-embedding
    in place): the message names the way around it."""
