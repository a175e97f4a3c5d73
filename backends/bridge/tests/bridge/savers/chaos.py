"""Misbehaving savers for the chaos trials (tests/bridge/chaos.rs, issue 40): each
breaks one way a saver can break, and the kit must reach a verdict within a bound and
name the cause. Everything not named works as LangGraph's InMemorySaver.
"""

import asyncio
import os
import sys
import time

from langgraph.checkpoint.memory import InMemorySaver

from checkpoint_bridge import Storage


class BlocksInPut(InMemorySaver):
    """aput blocks the event loop (a sync sleep in an async method)."""

    async def aput(self, config, checkpoint, metadata, new_versions):
        time.sleep(3600)


class BlocksOnLargePut(InMemorySaver):
    """aput blocks the event loop on a checkpoint that carries a value over 1 MB (as
    LangGraph JS's MemorySaver encodes 16 MiB of bytes for seconds, J-B2); every other call
    works. Each put first awaits 0.3 s (the event loop free), so the cases beside the
    blocking one have a put in flight when it blocks."""

    async def aput(self, config, checkpoint, metadata, new_versions):
        await asyncio.sleep(0.3)
        values = checkpoint.get("channel_values", {}).values()
        if any(isinstance(v, (bytes, bytearray, str)) and len(v) > 1_000_000 for v in values):
            time.sleep(3600)
        return await super().aput(config, checkpoint, metadata, new_versions)


class NeverAnswersPut(InMemorySaver):
    """aput awaits forever: the event loop is free, the call never ends."""

    async def aput(self, config, checkpoint, metadata, new_versions):
        await asyncio.Event().wait()


class AnswersLate(InMemorySaver):
    """aget_tuple answers after CHAOS_LATE_SECONDS (default 3), awaiting."""

    async def aget_tuple(self, config):
        await asyncio.sleep(float(os.environ.get("CHAOS_LATE_SECONDS", "3")))
        return await super().aget_tuple(config)


class ExitsInPut(InMemorySaver):
    """The process exits in the middle of aput."""

    async def aput(self, config, checkpoint, metadata, new_versions):
        print("chaos: exiting in aput", file=sys.stderr, flush=True)
        os._exit(7)


class PrintsToStdout(InMemorySaver):
    """Every call prints to stdout (the protocol's stream, were it not redirected)."""

    async def aput(self, config, checkpoint, metadata, new_versions):
        print("chaos: a saver printing to stdout in aput")
        sys.stdout.write('{"id":0,"ok":null}\n')
        return await super().aput(config, checkpoint, metadata, new_versions)

    async def aget_tuple(self, config):
        print("chaos: a saver printing to stdout in aget_tuple")
        return await super().aget_tuple(config)


class BigAnswers(InMemorySaver):
    """Every checkpoint read carries a channel value of CHAOS_BIG_MB megabytes."""

    async def aget_tuple(self, config):
        found = await super().aget_tuple(config)
        if found is not None:
            size = int(os.environ.get("CHAOS_BIG_MB", "100")) * 1000 * 1000
            found.checkpoint["channel_values"]["big"] = b"x" * size
        return found


class SetupNeverAnswers(Storage):
    """The lifespan setup awaits forever (the event loop stays free)."""

    async def setup(self):
        await asyncio.Event().wait()

    def open(self, location):
        return InMemorySaver()


class SetupBlocks(Storage):
    """The lifespan setup blocks the event loop."""

    async def setup(self):
        time.sleep(3600)

    def open(self, location):
        return InMemorySaver()
