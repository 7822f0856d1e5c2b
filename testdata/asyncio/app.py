"""A program that leaves asyncio tasks suspended, for pyattach's tests of
tasks (dump --tasks, py-tasks) and scripts/bench.sh: it prints "ready"
once every task is where it stays, then sleeps.

  python3 app.py [N]

In the main thread's event loop, under a TaskGroup (the main task,
named "main"):
  worker-0..2           worker -> middle -> leaf -> asyncio.sleep(3600)
  waits-for-worker-0    awaits the task worker-0
  never-done            awaits a Future nobody completes
  event-a, event-b      each waits on an asyncio.Event only the other
                        would set (a deadlock the await graph cannot show)
  cycle-a, cycle-b      each awaits the other task (a cycle)
  ready                 prints "ready", then sleeps
  sleeper-0..N-1        N more tasks sleeping (default 0)
A thread "other-loop" runs its own event loop, whose task "blocking"
is running: it calls time.sleep(3600) and so never yields.
"""

import asyncio
import sys
import threading
import time

started = threading.Event()


async def leaf(n):
    await asyncio.sleep(3600 + n)


async def middle(n):
    await leaf(n)


async def worker(n):
    await middle(n)


async def waits_for(task):
    await task


async def never(fut):
    await fut


async def event_a(mine, other):
    await other.wait()
    mine.set()


async def event_b(mine, other):
    await other.wait()
    mine.set()


peers = {}


async def cycle_a():
    await asyncio.sleep(0)
    await peers["cycle-b"]


async def cycle_b():
    await asyncio.sleep(0)
    await peers["cycle-a"]


async def sleeper():
    await asyncio.sleep(3600)


async def ready():
    while not started.is_set():
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    await asyncio.sleep(3600)


def blocking():
    started.set()
    time.sleep(3600)


async def blocking_task():
    blocking()


async def other_main():
    await asyncio.create_task(blocking_task(), name="blocking")


async def main(n):
    asyncio.current_task().set_name("main")
    async with asyncio.TaskGroup() as tg:
        workers = [tg.create_task(worker(i), name="worker-%d" % i) for i in range(3)]
        tg.create_task(waits_for(workers[0]), name="waits-for-worker-0")
        tg.create_task(never(asyncio.get_running_loop().create_future()), name="never-done")
        a, b = asyncio.Event(), asyncio.Event()
        tg.create_task(event_a(a, b), name="event-a")
        tg.create_task(event_b(b, a), name="event-b")
        peers["cycle-a"] = tg.create_task(cycle_a(), name="cycle-a")
        peers["cycle-b"] = tg.create_task(cycle_b(), name="cycle-b")
        for i in range(n):
            tg.create_task(sleeper(), name="sleeper-%d" % i)
        tg.create_task(ready(), name="ready")


threading.Thread(target=lambda: asyncio.run(other_main()), name="other-loop", daemon=True).start()
asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
