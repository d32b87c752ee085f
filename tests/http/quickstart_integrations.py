"""The integration snippets of README.md ("Quick start: Python") and docs/python.md ("HTTP
clients"), as written (tests/http/test_snippets.py checks that each block is here verbatim),
then run against a local server that answers 503 twice and then 200.
"""

# --- README.md
import requests
import retrycore
from retrycore.integrations.requests import RetryAdapter

policy = retrycore.RetryPolicy(max_attempts=4, initial=0.05, max_delay=1.0, deadline=5.0)
session = requests.Session()
session.mount("https://", RetryAdapter(policy, idempotency_header="Idempotency-Key"))
session.mount("http://", RetryAdapter(policy, idempotency_header="Idempotency-Key"))


def get_price(url: str) -> str:
    # A 503, a reset or a timeout is answered by the core: a GET is retried, a POST only
    # when it may not have run; urllib3's own retry stays off.
    resp = session.get(url, timeout=(1.0, 3.0))
    resp.raise_for_status()
    return resp.text
# --- end

# --- docs/python.md
import httpx
import retrycore
from retrycore.integrations.aiohttp import client_session
from retrycore.integrations.httpx import AsyncRetryTransport, RetryTransport

policy = retrycore.RetryPolicy(max_attempts=4, initial=0.05, max_delay=1.0, deadline=5.0)
client = httpx.Client(transport=RetryTransport(policy))


async def fetch_both(url: str) -> tuple:
    async with httpx.AsyncClient(transport=AsyncRetryTransport(policy)) as client:
        a = (await client.get(url)).status_code
    async with client_session(policy) as session, session.get(url) as resp:  # aiohttp
        b = resp.status
    return a, b
# --- end


if __name__ == "__main__":
    import asyncio
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from faults import FaultServer

    server = FaultServer()
    try:
        cases = [server.case("503_then_ok") for _ in range(4)]
        assert get_price(cases[0].url) == "ok"
        assert client.get(cases[1].url).status_code == 200
        assert asyncio.run(fetch_both(cases[2].url)) == (200, 200)  # httpx: 503, 503, 200; aiohttp: 200
        server.collect()
        assert [c.calls for c in cases[:3]] == [3, 3, 4]
    finally:
        server.close()
    print("quickstart_integrations: every snippet ran")
