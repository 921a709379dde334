"""A coroutine of known suspensions: work() suspends twice, so it runs three times."""

import asyncio


async def work():
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    return 1
