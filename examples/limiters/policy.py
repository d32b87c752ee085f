import retrycore

# AWS's adaptive client rate limiter in front of every attempt: off until the
# first throttling error, then each attempt waits for a token (slept before the call).
aws = retrycore.RetryPolicy(profile="aws-standard", limiter="aws-adaptive")


@retrycore.retry(aws)
def get_item() -> str:
    return "item"


assert get_item() == "item"

# A bulkhead: one call at a time; a second call is refused before it is made.
payments = retrycore.RetryPolicy(limiter={"kind": "bulkhead", "max_concurrent": 1})


def charge() -> str:
    try:
        return payments.call(lambda: "charged")  # a second call while this one runs
    except retrycore.LimiterRejectedError as e:
        return f"{e.limiter}: {e.reason}"


assert payments.call(charge) == "bulkhead: bulkhead_full"
assert payments.call(lambda: "charged") == "charged"  # the slot came back
