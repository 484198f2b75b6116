"""Replaying the AWS dead-letter queue: move messages back to the ingest queue, unchanged, once
the cause is fixed (configuration, an outage). Ingest is idempotent, so a replay never duplicates."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable


def redrive(
    dlq_url: str,
    target_url: str,
    *,
    limit: int | None = None,
    client: Any = None,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Move up to ``limit`` messages (all if None) from ``dlq_url`` to ``target_url``; returns how many.

    A message is deleted from the DLQ only after the target accepted it.
    """
    if client is None:
        import boto3

        client = boto3.client("sqs")
    moved = 0
    while limit is None or moved < limit:
        batch = min(10, limit - moved) if limit is not None else 10
        messages = client.receive_message(
            QueueUrl=dlq_url, MaxNumberOfMessages=batch, WaitTimeSeconds=1, MessageAttributeNames=["All"]
        ).get("Messages", [])
        if not messages:
            break
        entries = [
            {
                "Id": str(n),
                "MessageBody": m["Body"],
                **({"MessageAttributes": m["MessageAttributes"]} if m.get("MessageAttributes") else {}),
            }
            for n, m in enumerate(messages)
        ]
        sent = client.send_message_batch(QueueUrl=target_url, Entries=entries)
        accepted = {int(entry["Id"]) for entry in sent.get("Successful", [])}
        done = [{"Id": str(n), "ReceiptHandle": messages[n]["ReceiptHandle"]} for n in sorted(accepted)]
        if done:
            client.delete_message_batch(QueueUrl=dlq_url, Entries=done)
        moved += len(done)
        if progress:
            progress(len(done))
        if len(done) < len(messages):
            break  # the target refused some; stop rather than spin on them
    return moved
