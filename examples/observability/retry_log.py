import logging

import retrycore

logging.basicConfig(format="%(levelname)s %(message)s [%(correlation_id)s]")
policy = retrycore.RetryPolicy(jitter="none", initial="1ms", logger=logging.getLogger("retrycore"))


class Unavailable(Exception):
    status = 503


calls = 0


@retrycore.retry(policy, key=lambda: "order-1001:charge:v1", method="GET")
def charge() -> str:
    global calls
    calls += 1
    if calls == 1:
        raise Unavailable("try later")
    return "ok"


charge()
# WARNING attempt 1 of 3 failed (server_error: __main__.Unavailable); retry 1 in 1ms [order-1001:charge:v1]
