import retrycore

policy = retrycore.RetryPolicy(max_attempts=4, initial=0.05, max_delay=1.0, deadline=5.0)
keys = []

@retrycore.retry(policy, idempotent=True)
def fetch_price(item: str) -> float:
    keys.append(retrycore.current_attempt().key)  # one idempotency key for every attempt
    if len(keys) < 3:
        raise ConnectionResetError("peer reset")  # connection lost: retried, the call is idempotent
    return 9.99

print(fetch_price("book"), "after", len(keys), "attempts with key", keys[0])
