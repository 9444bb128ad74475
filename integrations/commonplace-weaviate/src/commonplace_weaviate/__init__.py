"""commonplace-weaviate: a commonplace store in a Weaviate server.

``Memory("weaviate://host:8080?grpc_port=50051")`` works once this package is
installed (it registers itself through the ``commonplace`` entry point). See
``docs/weaviate.md`` for the layout, the guarantees and the migration command.
"""

from ._backend import MIN_SERVER_VERSION, WeaviateBackend
from ._errors import WeaviateServerError
from ._migrate import MigrationReport, migrate
from ._url import Settings, parse_url

__version__ = "0.1.0"

__all__ = [
    "MIN_SERVER_VERSION",
    "MigrationReport",
    "Settings",
    "WeaviateBackend",
    "WeaviateServerError",
    "__version__",
    "migrate",
    "parse_url",
]
