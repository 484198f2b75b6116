"""An index per workspace: each workspace's documents live in an index of their own, so its BM25
statistics (document count, document frequencies, average length) are its own alone.

Names derive from the configured prefix (``Settings.opensearch_index``) and the workspace id:
``<prefix>-ws-<slug>-<digest>`` is the workspace's alias, ``<alias>-NNNNNN`` its versioned
physical indices (``index.OpenSearchAdmin``: bootstrap and reindex, per workspace). The slug is
the id lower-cased with every other character than ``a-z0-9`` turned into ``-`` and cut to
``SLUG_CHARS`` (readable in a listing); the digest, 16 hex of the id's SHA-256, keeps two ids
apart whatever the slug made of them ("Acme" and "acme", "a.b" and "a_b"). An alias always ends
in those 16 hex, never in ``-NNNNNN``, so no workspace's alias is another's physical index.

Every live workspace index is also behind ``<prefix>-ws-all``: the maintenance (expiry, archive,
vectors due) reads and deletes across workspaces through it. A physical index is created from the
index template ``<prefix>-ws`` (put by the bootstrap for the configured model: the settings and
mapping of ``mapping.index_body``) on the workspace's first write, with both aliases in the same
request. The template also covers ``<prefix>-ws-*``: an index a stray write would auto-create
there has the strict mapping all the same.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from neural_memory.errors import ConfigurationError
from neural_memory.stores.opensearch.index import VERSION_DIGITS, OpenSearchAdmin
from neural_memory.stores.opensearch.mapping import index_body

# How documents are laid out in indices: a deployment's bootstrap runs again when it changes (the
# stack passes it to the bootstrap's custom resource), so an upgrade from the single index migrates
# before any function of the new code is deployed.
LAYOUT = "index-per-workspace/1"
SLUG_CHARS = 40
DIGEST_HEX = 16  # 64 bits: a collision among even a million workspace ids is ~3e-8
_ALIAS = re.compile(rf"-[0-9a-f]{{{DIGEST_HEX}}}$")
_ALREADY = "resource_already_exists_exception"


def workspace_alias(prefix: str, workspace_id: str) -> str:
    """The alias of ``workspace_id``'s index (see the module docstring)."""
    slug = re.sub(r"[^a-z0-9]+", "-", workspace_id.lower()).strip("-")[:SLUG_CHARS].strip("-")
    digest = hashlib.sha256(workspace_id.encode()).hexdigest()[:DIGEST_HEX]
    return f"{prefix}-ws-{slug}-{digest}" if slug else f"{prefix}-ws-{digest}"


def all_alias(prefix: str) -> str:
    """The alias over every workspace's live index (maintenance across workspaces)."""
    return f"{prefix}-ws-all"


def pattern(prefix: str) -> str:
    """The names of every workspace index and alias (the template's pattern, the IAM grants')."""
    return f"{prefix}-ws-*"


def template_name(prefix: str) -> str:
    """The index template every workspace index is created from."""
    return f"{prefix}-ws"


class WorkspaceIndices:
    """The workspace indices under one prefix: the template, each workspace's admin, creation on
    first write."""

    def __init__(self, client: Any, prefix: str, shards: int = 1, replicas: int = 1) -> None:
        self.client = client
        self.prefix = prefix
        self.shards = shards
        self.replicas = replicas

    def admin(self, alias: str) -> OpenSearchAdmin:
        """Index management behind one workspace's alias (its live index stays behind the
        all-workspaces alias through a reindex's swap)."""
        return OpenSearchAdmin(
            self.client, alias, shards=self.shards, replicas=self.replicas, group=all_alias(self.prefix)
        )

    def aliases(self) -> list[str]:
        """Every workspace's alias, sorted."""
        from opensearchpy.exceptions import NotFoundError

        try:
            found = self.client.indices.get_alias(name=pattern(self.prefix))
        except NotFoundError:
            return []
        names = {alias for entry in found.values() for alias in entry.get("aliases", {})}
        return sorted(name for name in names if _ALIAS.search(name))

    def put_template(self, dimension: int, model_id: str) -> str:
        """Put the template for this model: ``template created``, ``template ok`` or ``template
        updated`` (a new model: the workspaces created from now on are built for it)."""
        from opensearchpy.exceptions import NotFoundError

        body = index_body(dimension, model_id, self.shards, self.replicas)
        wanted = {"index_patterns": [pattern(self.prefix)], "template": body}
        try:
            found = self.client.indices.get_index_template(name=template_name(self.prefix))["index_templates"]
            current = found[0]["index_template"]["template"]
        except (NotFoundError, IndexError, KeyError):
            current = None
        if current is not None and _same(current, body):
            return "template ok"
        self.client.indices.put_index_template(name=template_name(self.prefix), body=wanted)
        return "template created" if current is None else "template updated"

    def template(self) -> dict[str, Any]:
        """The template's settings and mappings; ``ConfigurationError`` when the bootstrap has not
        put it yet (no workspace index can be created without it)."""
        from opensearchpy.exceptions import NotFoundError

        try:
            found = self.client.indices.get_index_template(name=template_name(self.prefix))["index_templates"]
        except NotFoundError:
            found = []
        if not found:
            raise ConfigurationError(
                f"index template {template_name(self.prefix)!r} does not exist; "
                "the maintenance function's bootstrap (or `neural-memory serve`) creates it"
            )
        template = found[0]["index_template"]["template"]
        return {"settings": template.get("settings", {}), "mappings": template.get("mappings", {})}

    def create(self, workspace_id: str, body: dict[str, Any] | None = None) -> str:
        """Create the workspace's first physical index with both aliases, in one request (a
        writer racing this one finds it created: not an error), from the template or from
        ``body`` (settings and mappings: the migration's, for the old index's model); returns
        the alias."""
        from opensearchpy.exceptions import RequestError

        alias = workspace_alias(self.prefix, workspace_id)
        body = (self.template() if body is None else body) | {"aliases": {alias: {}, all_alias(self.prefix): {}}}
        try:
            self.client.indices.create(index=f"{alias}-{1:0{VERSION_DIGITS}d}", body=body)
        except RequestError as exc:
            if _ALREADY not in str(exc.info):
                raise
        return alias

    def ensure(self, dimension: int, model_id: str) -> str:
        """The bootstrap without a reindex: the template for this model, then every workspace's
        index checked (``OpenSearchAdmin.ensure_index``: ``ConfigurationError`` for one built for
        another model). Returns what was done, in one line."""
        outcomes: dict[str, int] = {}
        for alias in self.aliases():
            outcome = self.admin(alias).ensure_index(dimension, model_id)
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
        done = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items()))
        return f"{self.put_template(dimension, model_id)}; workspace indices: {done or 'none yet'}"


def _same(found: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """Whether a stored template holds ``wanted``: its mapping, and its settings as the domain
    returns them (numbers and booleans as strings)."""
    settings = found.get("settings", {}).get("index", found.get("settings", {}))
    expected = wanted["settings"]["index"]
    return found.get("mappings") == wanted["mappings"] and all(
        str(settings.get(key)).lower() == str(value).lower()
        for key, value in expected.items()
        if not isinstance(value, dict)
    )
