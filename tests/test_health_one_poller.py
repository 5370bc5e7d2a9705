

async def test_a_wait_probes_at_once_and_fast_though_the_watch_idles_slowly() -> None:
    """Idle, the watch polls slowly (an hour here); a restart's wait wakes it and polls fast until READY."""
    server = CountingServer()
    server.health_status = 503
    await server.open()
    watch = HealthWatch(None, server.url, fast_interval=0.01, idle_interval=3600, slow_interval=3600)
    first = asyncio.Event()

    async def panel() -> None:
        async for _snap in watch.changes():
            first.set()

    reader = asyncio.create_task(panel())
    try:
        await asyncio.wait_for(first.wait(), 10)
        assert watch.latest is not None and watch.latest.state is HealthState.WARMING_UP
        waiting = asyncio.create_task(watch.wait_ready(30))
        async with asyncio.timeout(10):
            while server.asked["/health"] < 3:  # the wait polls fast though the watch idles for an hour
                await asyncio.sleep(0.01)
        server.health_status = 200
        snap = await asyncio.wait_for(waiting, 10)
        assert snap.state is HealthState.READY
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        await server.close()
