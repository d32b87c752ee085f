# Undo a saga's completed steps (docs/compensation.md): refund, then release.
from retrycore.saga import run_compensations

policy = {"purpose": "compensation", "max_attempts": 5, "initial": "0s", "deadline": "1h"}
saga = {
    "saga": "order-7",
    "steps": [
        {"name": "reserve", "completed": True, "compensate": "release", "policy": policy},
        {"name": "charge", "completed": True, "compensate": "refund", "policy": policy},
        {"name": "ship", "completed": False, "compensate": "cancel", "policy": policy},
    ],
}
done = []


def refund() -> None:
    raise ConnectionError("payments is down")  # retried 5 times, then a dead letter


def release() -> None:
    done.append("release")  # still runs after the refund gave up


result = run_compensations(saga, {"refund": refund, "release": release})
assert [s["outcome"] for s in result["steps"]] == ["compensated", "dead_lettered", "not_completed"]
assert result["dead_letters"][0]["msg_id"] == "order-7:charge:compensation"
assert done == ["release"]
