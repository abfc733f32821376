"""Signed checkpoints of the audit chains, kept outside the database.

The chain head lives in the same database as the events, so someone who can write there can
cut off the newest events and move the head back; nothing inside the database can tell. A
checkpoint (chain, workspace, event count, head hash, time) signed with HMAC-SHA256 under the
active ``MEMADMIN_AUDIT_KEYS`` key is written by the scheduler to the default storage (under
``audit-anchors/<chain>/``), to the log, and, when ``MEMADMIN_AUDIT_ANCHOR_URL`` is set, POSTed
there. Verification then compares the chain with the last checkpoint: fewer events, or another
hash at the anchored position, is a failure (``memadmin.audit.services.check_anchor``).

HMAC rather than Ed25519: the checkpoint is checked by memadmin itself (the page and
``verify_audit_chain``), which holds the audit key anyway; a verifier without that key would
need a public-key signature, which this format leaves room for (``alg``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hmac
import json
import logging
from pathlib import Path
from typing import Any

import httpx
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.utils import timezone

from memadmin.audit.models import AuditChainHead, AuditEvent
from memadmin.audit.services import (
    UnknownAuditKey,
    WalkState,
    active_audit_key_id,
    audit_mac,
    chain_workspace_id,
    check_event,
    known_chains,
)
from memadmin.lib import outbound

logger = logging.getLogger(__name__)

ANCHOR_DIR = "audit-anchors"
CHECKPOINT_TYPE = "memadmin.audit.checkpoint"
POST_TIMEOUT = 10.0


class BadCheckpoint(ValueError):
    """A checkpoint that is malformed or whose signature does not hold."""


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    chain: str
    workspace: str | None
    count: int
    head_hash: str
    at: str
    key_id: str
    signature: str = ""

    def body(self) -> dict[str, Any]:
        return {"type": CHECKPOINT_TYPE, "version": 1, "alg": "HMAC-SHA256",
                "chain": self.chain, "workspace": self.workspace, "count": self.count,
                "head_hash": self.head_hash, "at": self.at, "key_id": self.key_id}

    def as_json(self) -> dict[str, Any]:
        return {**self.body(), "signature": self.signature}

    def signed(self) -> Checkpoint:
        return dataclasses.replace(self, signature=audit_mac(self.key_id, self.body()))

    def signature_holds(self) -> bool:
        try:
            expected = audit_mac(self.key_id, self.body())
        except UnknownAuditKey:
            return False
        return hmac.compare_digest(expected, self.signature)

    @classmethod
    def parse(cls, raw: Any) -> Checkpoint:
        """A checkpoint from its JSON form; ``BadCheckpoint`` unless well formed and signed."""
        try:
            if raw.get("type") != CHECKPOINT_TYPE or raw.get("version") != 1:
                raise BadCheckpoint("not a memadmin audit checkpoint")
            checkpoint = cls(chain=str(raw["chain"]), workspace=raw["workspace"],
                             count=int(raw["count"]), head_hash=str(raw["head_hash"]),
                             at=str(raw["at"]), key_id=str(raw["key_id"]),
                             signature=str(raw["signature"]))
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, BadCheckpoint):
                raise
            raise BadCheckpoint(f"malformed checkpoint: {exc}") from None
        if checkpoint.count < 0 or not checkpoint.signature_holds():
            raise BadCheckpoint(f"the checkpoint of chain {checkpoint.chain} at "
                                f"{checkpoint.at} is not signed by a configured audit key")
        return checkpoint


def _latest_name(chain: str) -> str:
    return f"{ANCHOR_DIR}/{chain}/latest.json"


def latest_checkpoint(chain: str) -> Checkpoint | None:
    """The last checkpoint stored for ``chain`` (``BadCheckpoint`` if it was tampered with)."""
    name = _latest_name(chain)
    if not default_storage.exists(name):
        return None
    with default_storage.open(name, "rb") as handle:
        raw = handle.read()
    try:
        return Checkpoint.parse(json.loads(raw))
    except json.JSONDecodeError:
        raise BadCheckpoint(f"the stored checkpoint of chain {chain} is not JSON") from None


def anchored_chains() -> list[str]:
    """Every chain that has checkpoints in storage: a chain whose events, head and workspace
    were all removed from the database is still known here."""
    if not default_storage.exists(ANCHOR_DIR):
        return []
    directories, _ = default_storage.listdir(ANCHOR_DIR)
    return sorted(directories)


def read_checkpoint_file(path: Path) -> dict[str, Checkpoint]:
    """Checkpoints from a file (one JSON object, or JSON Lines as the log and the storage keep
    them); per chain the one with the most events. ``BadCheckpoint`` for any bad one."""
    found: dict[str, Checkpoint] = {}
    text = path.read_text(encoding="utf-8")
    try:
        values = [json.loads(text)]
    except json.JSONDecodeError:
        try:
            values = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError:
            raise BadCheckpoint(f"{path.name} is neither JSON nor JSON Lines") from None
    for value in values:
        checkpoint = Checkpoint.parse(value)
        best = found.get(checkpoint.chain)
        if best is None or checkpoint.count > best.count:
            found[checkpoint.chain] = checkpoint
    return found


def _walk_since(chain: str, since: Checkpoint | None, count: int) -> str:
    """Check the events the new checkpoint adds (those after ``since``, up to ``count``);
    the problem found, or an empty string."""
    state = WalkState()
    if since is not None:
        anchored = AuditEvent.objects.filter(chain=chain, seq=since.count).values("hash").first()
        if since.count and (anchored is None or anchored["hash"] != since.head_hash):
            return f"event {since.count} no longer matches the checkpoint of {since.at}"
        state = WalkState(seq=since.count, hash=since.head_hash, keyed=True)
    events = (AuditEvent.objects.filter(chain=chain, seq__gt=state.seq, seq__lte=count)
              .order_by("seq").iterator(chunk_size=2000))
    for event in events:
        problem = check_event(event, state, chain)
        if problem is not None:
            return f"event {problem.seq}: {problem.text}"
    if state.seq != count:
        return f"event {state.seq + 1} is missing"
    return ""


def _post_checkpoint(url: str, body: bytes) -> None:
    """POST a checkpoint under the outbound policy (``memadmin.lib.outbound``: checked address,
    no redirect). The one outgoing call of the audit app."""
    with outbound.client(timeout=POST_TIMEOUT) as client:
        response = client.post(url, content=body, headers={"Content-Type": "application/json"})
    if not response.is_success:
        raise httpx.HTTPStatusError(f"{response.status_code}", request=response.request,
                                    response=response)


def anchor_chain(chain: str, *, now: dt.datetime | None = None) -> Checkpoint | None:
    """Write a signed checkpoint of ``chain`` if it grew since the last one; None otherwise
    (nothing new, or the new events do not verify, which is logged as an error)."""
    head = AuditChainHead.objects.filter(chain=chain).values("seq", "hash").first()
    if head is None or head["seq"] == 0:
        return None
    try:
        previous = latest_checkpoint(chain)
    except BadCheckpoint as exc:
        logger.error("audit anchor: chain %s not anchored: %s", chain, exc)
        return None
    if previous is not None and previous.count == head["seq"]:
        return None
    problem = _walk_since(chain, previous, head["seq"])
    if problem:
        logger.error("audit anchor: chain %s not anchored, it does not verify: %s", chain,
                     problem)
        return None
    moment = (now or timezone.now()).astimezone(dt.UTC)
    checkpoint = Checkpoint(chain=chain, workspace=chain_workspace_id(chain), count=head["seq"],
                            head_hash=head["hash"], at=moment.isoformat(),
                            key_id=active_audit_key_id()).signed()
    body = json.dumps(checkpoint.as_json(), sort_keys=True).encode()
    stamp = moment.strftime("%Y%m%dT%H%M%S%fZ")
    default_storage.save(f"{ANCHOR_DIR}/{chain}/{stamp}-{checkpoint.count}.json",
                         ContentFile(body))
    latest = _latest_name(chain)
    if default_storage.exists(latest):
        default_storage.delete(latest)
    default_storage.save(latest, ContentFile(body))
    logger.info("audit checkpoint %s", body.decode())
    url = settings.MEMADMIN_AUDIT_ANCHOR_URL
    if url:
        try:
            _post_checkpoint(url, body)
        except httpx.HTTPError as exc:
            logger.warning("audit anchor: POST of chain %s's checkpoint failed: %s", chain,
                           type(exc).__name__)
    return checkpoint


def anchor_all() -> int:
    """Anchor every chain that grew; the number of checkpoints written."""
    written = 0
    for chain in known_chains():
        if anchor_chain(chain) is not None:
            written += 1
    return written

