# Replay dead letters (docs/dead-letters.md): small batches first, growing while they succeed.
from retrycore.saga import replay_dead_letters


def letter(msg_id: str, error_class: str = "503", idempotent: bool = True) -> dict:
    return {
        "msg_id": msg_id, "message": {"order": msg_id}, "reason": "attempts_exhausted",
        "error_class": error_class, "error_message": "upstream 503", "attempts": 5,
        "first_failure_at": "2026-12-02T08:00:00.000Z", "last_failure_at": "2026-12-02T08:00:09.000Z",
        "target_idempotent": idempotent,
    }


letters = [letter(f"m{i}") for i in range(7)] + [letter("post", idempotent=False)]
sent = []
audit = replay_dead_letters(letters, lambda l: sent.append(l["msg_id"]), operator="ops@example.com")
assert audit["batches"] == [{"size": 1, "failed": 0}, {"size": 2, "failed": 0}, {"size": 4, "failed": 0}]
assert audit["skipped"] == [{"msg_id": "post", "reason": "target_not_idempotent"}]
assert sent == [f"m{i}" for i in range(7)] and letters[0]["status"] == "replayed"
