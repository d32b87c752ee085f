# The snippet of docs/python.md ("Policies and the retry loop", tenacity's knobs), verbatim:
# tests/python/test_knobs.py checks that it is the block of the doc and runs it.
import retrycore

policy = retrycore.RetryPolicy(max_attempts=5, initial=0.01, jitter="none")
states = iter(["queued", "running", "done"])


@retrycore.retry(
    policy,
    retry_if_result=lambda state: state != "done",  # poll until done
    retry_if_exception=lambda e: "overloaded" if isinstance(e, LookupError) else None,
    after=lambda ev: print("attempt", ev.attempt, "failed:", ev.category),
    fallback=lambda ev: "unknown",  # instead of RetryError
)
def job_state() -> str:
    return next(states)


assert job_state() == "done"
