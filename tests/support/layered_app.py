"""A small repository with parts: a server that uses a router that uses handlers.

For architecture answers and their diagram: three modules of one package, each with a
docstring that says what it is for, a console script, and a test file that must not
count as a part.
"""

from __future__ import annotations

from tests.support.gitrepo import GitRepo

FILES = {
    "pyproject.toml": '[project]\nname = "app"\n\n[project.scripts]\napp = "app.server:main"\n',
    "app/__init__.py": '"""A tiny web app: a server, its router and the handlers."""\n',
    "app/server.py": '''"""The HTTP server: reads requests and hands them to the router."""

from app.router import RouteTable


def main():
    """Start serving."""
    table = RouteTable()
    return serve_forever(table)


def serve_forever(table):
    while True:
        table.dispatch(read_request())


def read_request():
    return {"path": "/"}
''',
    "app/router.py": '''"""The router: maps a request path to its handler."""

from app.handlers import HealthHandler, UserHandler


class RouteTable:
    """Routes by exact path."""

    def __init__(self):
        self.routes = {"/health": HealthHandler(), "/users": UserHandler()}

    def dispatch(self, request):
        return self.routes[request["path"]].handle(request)
''',
    "app/handlers.py": '''"""Request handlers: one class per endpoint."""


class HealthHandler:
    def handle(self, request):
        return {"ok": True}


class UserHandler:
    def handle(self, request):
        return {"users": []}
''',
    "tests/test_router.py": "from app.router import RouteTable\n\n\ndef test_it():\n    RouteTable()\n",
}


def build_layered_app(repo: GitRepo) -> GitRepo:
    for path, text in FILES.items():
        repo.write(path, text)
    repo.commit("a layered app")
    return repo
