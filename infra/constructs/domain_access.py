"""Least-privilege access to the OpenSearch domain, written once and applied twice: as each
function role's identity policy, and as the domain's resource-based access policy, which also
denies every other principal (an account principal holding ``es:*`` cannot read workspaces).

``es:ESHttp*`` resources are ``<domain ARN>/<request path>``; the store puts the index in every
path (``/<index>/_msearch``, ``/<index>/_bulk``, ...) so grants are scoped to it. Each workspace
has an index of its own (``<index>-ws-<slug>-<digest>``, named at its first write), so the grants
name the pattern ``<index>-ws-*``; which workspace a request may touch is the store's check (one
function serves every workspace), as it was with one index.
"""

from __future__ import annotations

from typing import Any, Literal

from aws_cdk import aws_iam as iam

Access = Literal["read", "write", "admin"]

_READ_PATHS = ("_msearch", "_mget", "_search", "_count")
_ADMIN_POST_PATHS = ("_search", "_count", "_mget", "_refresh", "_delete_by_query")


Grant = tuple[tuple[str, ...], tuple[str, ...]]  # (actions, paths under the domain)


def grants(index: str, access: Access) -> list[Grant]:
    """What ``access`` allows on ``index``.

    ``index`` is the prefix of the workspace indices (``<index>-ws-*``). read: search and read
    documents (search, answer); write: also bulk writes and deletes by query (observations,
    ingest), and a workspace's index created from the template at its first write; admin
    (maintenance): put the template, create and check each workspace's index and keep its replica
    count; purge, which finds what the expired observations superseded and marks it current again
    (search, bulk); reindex into a new physical index ``<alias>-NNNNNN`` and swap the alias; copy
    the single index of earlier versions (``<index>``, ``<index>-NNNNNN``). No grant deletes an
    index by its path (old ones are dropped by an operator, on request); but the swap's
    ``POST /_aliases`` is at the domain's root, and IAM cannot scope a request body, so that one
    grant would let the maintenance role move any alias (or remove an index through it): the code
    only ever names these indices' aliases and versions.
    """
    workspaces = f"{index}-ws-*"  # every workspace's alias and physical indices, and the one over all
    template = f"_index_template/{index}-ws"  # the workspace indices' settings and mapping
    if access == "admin":
        # The single index of earlier versions (migrated from), the versioned physical indices
        # behind it, and every workspace index (``<index>-ws-*`` is within ``<index>-*``)
        own = (index, f"{index}-*")
        return [
            (("es:ESHttpHead", "es:ESHttpGet", "es:ESHttpPut"), own),
            (("es:ESHttpGet",), (f"{index}/_alias",)),
            # The bootstrap lists the workspaces' aliases and puts their template
            (("es:ESHttpHead", "es:ESHttpGet"), (f"_alias/{workspaces}",)),
            (("es:ESHttpGet", "es:ESHttpPut"), (template,)),
            (("es:ESHttpGet", "es:ESHttpPut"), tuple(f"{i}/{p}" for i in own for p in ("_mapping", "_settings"))),
            # The reindex's swap: the one request that moves an alias atomically is at the root.
            (("es:ESHttpPost",), ("_aliases",)),
            (("es:ESHttpGet", "es:ESHttpPost"), tuple(f"{i}/{p}" for i in own for p in _ADMIN_POST_PATHS)),
            (("es:ESHttpPost", "es:ESHttpPut"), tuple(f"{i}/_bulk" for i in own)),
        ]
    read: list[Grant] = [(("es:ESHttpGet", "es:ESHttpPost"), tuple(f"{workspaces}/{path}" for path in _READ_PATHS))]
    if access == "read":
        return read
    return [
        *read,
        (("es:ESHttpPost",), (f"{workspaces}/_bulk",)),
        (("es:ESHttpPost",), (f"{workspaces}/_delete_by_query",)),
        # A workspace's first write creates its index from the template (the bootstrap's)
        (("es:ESHttpHead", "es:ESHttpPut"), (workspaces,)),
        (("es:ESHttpGet",), (template,)),
    ]


def denials(index: str, access: Access) -> list[Grant]:
    """What ``access`` may never do though a grant's wildcard reaches it. In an IAM resource ``*``
    also matches ``/``: the writers' PUT of ``<index>-ws-*`` (a workspace's index created at its
    first write) would also reach ``<index>-ws-x/_alias/<another workspace's alias>``, its
    ``_settings`` and ``_mapping``; writers create an index and write by POST, nothing else."""
    if access != "write":
        return []
    return [(("es:ESHttpPut",), (f"{index}-ws-*/*",))]


def grant(role: iam.IRole, domain_arn: str, index: str, access: Access) -> None:
    """Add the identity statements of ``access`` to ``role``."""
    for effect, rules in ((iam.Effect.ALLOW, grants(index, access)), (iam.Effect.DENY, denials(index, access))):
        for actions, paths in rules:
            role.add_to_principal_policy(
                iam.PolicyStatement(
                    effect=effect, actions=list(actions), resources=[f"{domain_arn}/{path}" for path in paths]
                )
            )


def resource_policy(
    domain_arn: str, index: str, roles: dict[str, Access], extra_principals: list[str]
) -> dict[str, Any]:
    """The domain's access policy: each role's grants, full access for ``extra_principals``
    (a break-glass operator role), and an explicit deny for every other principal."""
    statements: list[dict[str, Any]] = [
        {
            "Effect": effect,
            "Principal": {"AWS": role_arn},
            "Action": list(actions),
            "Resource": [f"{domain_arn}/{path}" for path in paths],
        }
        for effect, rules in (("Allow", grants), ("Deny", denials))
        for role_arn, access in roles.items()
        for actions, paths in rules(index, access)
    ]
    allowed = [*roles, *extra_principals]
    statements += [
        {"Effect": "Allow", "Principal": {"AWS": arn}, "Action": "es:ESHttp*", "Resource": f"{domain_arn}/*"}
        for arn in extra_principals
    ]
    statements.append(
        {
            "Effect": "Deny",
            "Principal": {"AWS": "*"},
            "Action": "es:ESHttp*",
            "Resource": f"{domain_arn}/*",
            "Condition": {"ArnNotEquals": {"aws:PrincipalArn": allowed}},
        }
    )
    return {"Version": "2012-10-17", "Statement": statements}
