"""`ClusterHost`: one SGLang server across several nodes, driven as one `Host`.

The operator edits one unit (node 0's); each node runs it with its own --node-rank (`core.cluster_units`).
Every step spans every node, and the cluster is never left half-changed:
- push is all-or-none: every node stages and verifies first (`TwoPhaseHost.prepare`); a node that refuses
  leaves every node unchanged. Then the nodes are replaced one by one; if that is cut part-way, the nodes
  already replaced are put back (their rollback restores the previous text byte for byte) and the error
  says, node by node, what each one holds now;
- restart stops every node, then starts every node (a rank cannot rejoin a world whose other ranks live on);
- status is the worst node's, naming it; rollback restores every node, after checking every node has a backup;
- the journal is every node's, tagged with its node and merged in time order.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from specdec_tui.core.cluster_units import node_units
from specdec_tui.core.config import ClusterConfig, HostConfig
from specdec_tui.core.unit_errors import UnitSyntaxError
from specdec_tui.hosts.base import (
    FileReader,
    GpuFact,
    HostInfo,
    JournalRecord,
    PushResult,
    RestartResult,
    ServiceStatus,
    StagedPush,
    TwoPhaseHost,
)
from specdec_tui.hosts.errors import ConnectionLost, HostError, UnitRejected

# Worst first: the state a cluster shows is that of its worst node.
_STATE_RANK = ("failed", "deactivating", "inactive", "activating", "reloading", "active")
AfterReplace = Callable[[int], Awaitable[None]]  # called with a node's rank once its unit is replaced


@dataclass(frozen=True, slots=True)
class Node:
    """One node of the cluster: its [hosts.*] name and table, its rank, its host."""

    name: str
    rank: int
    config: HostConfig
    host: TwoPhaseHost


def combine_status(unit: str, statuses: Sequence[tuple[str, ServiceStatus]]) -> ServiceStatus:
    """The cluster's status: the worst node's state (failed if any node failed), node 0's main PID, and every
    node's state in sub_state ("h0 active; h1 failed (exit-code)")."""
    def rank(status: ServiceStatus) -> int:
        state = status.active_state
        return _STATE_RANK.index(state) if state in _STATE_RANK else 0

    worst_name, worst = min(statuses, key=lambda item: rank(item[1]))
    each = [f"{name} {s.active_state}" + (f" ({s.result})" if s.is_failed and s.result else "")
            for name, s in statuses]
    node0 = statuses[0][1]
    return ServiceStatus(
        unit=unit,
        active_state=worst.active_state,
        sub_state="; ".join(each),
        main_pid=node0.main_pid,
        exec_main_status=worst.exec_main_status,
        n_restarts=max(s.n_restarts for _, s in statuses),
        active_enter=node0.active_enter,
        result=f"{worst.result} on {worst_name}" if worst.is_failed and worst.result else worst.result,
    )


class ClusterHost:
    """The nodes of `cluster` as one host; `after_replace` is a test hook (a cut between two replaces)."""

    def __init__(self, cluster: ClusterConfig, nodes: Sequence[tuple[HostConfig, TwoPhaseHost]], *,
                 after_replace: AfterReplace | None = None) -> None:
        if len(nodes) < 2:
            raise ValueError(f"cluster {cluster.name!r} needs at least 2 nodes")
        self.cluster = cluster
        self.nodes = [Node(cfg.name, rank, cfg, host) for rank, (cfg, host) in enumerate(nodes)]
        self.after_replace = after_replace
        head = self.nodes[0].host.info
        self.info = HostInfo(
            name=cluster.name, kind=head.kind, address=", ".join(n.host.info.address for n in self.nodes),
            unit=head.unit, unit_path=head.unit_path, base_url=head.base_url,
            extra={"cluster": cluster.name, "nodes": ", ".join(n.name for n in self.nodes)},
        )

    @property
    def configs(self) -> Mapping[str, HostConfig]:
        return {n.name: n.config for n in self.nodes}

    async def _each(self, step: Callable[[Node], Awaitable[object]]) -> list[object]:
        """`step` on every node at once; the first failure is raised naming its node (the rest still finish)."""
        results = await asyncio.gather(*(step(n) for n in self.nodes), return_exceptions=True)
        for node, result in zip(self.nodes, results, strict=True):
            if isinstance(result, HostError):
                raise type(result)(f"{node.name}: {result.message}", result.hint)
            if isinstance(result, BaseException):
                raise result
        return list(results)

    # --- connection ------------------------------------------------------------------------------
    async def connect(self) -> None:
        await self._each(lambda n: n.host.connect())

    async def close(self) -> None:
        await asyncio.gather(*(n.host.close() for n in self.nodes), return_exceptions=True)

    # --- unit ------------------------------------------------------------------------------------
    async def read_file(self, path: str) -> bytes:
        """Node 0's file (every node runs node 0's unit)."""
        head = self.nodes[0].host
        if not isinstance(head, FileReader):
            raise HostError(f"{self.nodes[0].name} cannot read files")
        return await head.read_file(path)

    async def read_unit(self) -> str:
        """Node 0's unit: the one the operator edits (the others differ only in --node-rank)."""
        return await self.nodes[0].host.read_unit()

    def node_texts(self, text: str) -> list[str]:
        try:
            return [u.text for u in node_units(text, self.cluster, self.configs)]
        except UnitSyntaxError as err:
            raise UnitRejected(f"{self.cluster.name}: the unit was not pushed to any node: {err}",
                               "fix the unit and push again") from None

    async def prepare(self, text: str) -> list[StagedPush]:
        """Stage and verify on every node; if any node refuses, drop what the others staged and raise."""
        texts = self.node_texts(text)
        results = await asyncio.gather(*(n.host.prepare(t) for n, t in zip(self.nodes, texts, strict=True)),
                                       return_exceptions=True)
        failed = [(n, r) for n, r in zip(self.nodes, results, strict=True) if isinstance(r, BaseException)]
        if not failed:
            return [r for r in results if isinstance(r, StagedPush)]
        for node, result in zip(self.nodes, results, strict=True):
            if isinstance(result, StagedPush):
                with contextlib.suppress(HostError):
                    await node.host.discard(result)
        node, err = failed[0]
        if not isinstance(err, HostError):
            raise err
        others = ", ".join(n.name for n, _ in failed[1:])
        also = f" (also refused on {others})" if others else ""
        raise type(err)(f"{node.name}: {err.message}{also}; no node was changed", err.hint)

    async def push(self, text: str) -> PushResult:
        staged = await self.prepare(text)
        replaced: list[tuple[Node, PushResult]] = []
        for node, stage in zip(self.nodes, staged, strict=True):
            try:
                replaced.append((node, await node.host.commit(stage)))
                if self.after_replace is not None:
                    await self.after_replace(node.rank)
            except HostError as err:
                report = await self._repair(replaced, node, stage, staged, err)
                raise ConnectionLost(
                    f"{self.cluster.name}: the push stopped at {node.name} ({err.message}); every node is back to "
                    f"its previous unit where it could be: {report}",
                    "check the nodes named above, then push again",
                ) from err
        head = replaced[0][1]
        return PushResult(unit=head.unit, changed=any(r.changed for _, r in replaced), backup=head.backup)

    async def _repair(self, replaced: list[tuple[Node, PushResult]], failed: Node, stage: StagedPush,
                      staged: list[StagedPush], err: HostError) -> str:
        """Put the replaced nodes back, settle the node whose replace was cut, drop the rest's staging;
        returns one clause per node saying what it holds now."""
        words: dict[str, str] = {}
        for node, result in replaced:
            words[node.name] = await self._put_back(node, result.changed, stage_text=None)
        words[failed.name] = await self._put_back(failed, None, stage_text=stage.text)
        for node, later in zip(self.nodes, staged, strict=True):
            if node.rank > failed.rank:
                try:
                    await node.host.discard(later)
                    words[node.name] = "not replaced (its staged copy dropped)"
                except HostError as drop_err:
                    words[node.name] = f"not replaced (its staged copy could not be dropped: {drop_err.message})"
        return "; ".join(f"{n.name}: {words[n.name]}" for n in self.nodes)

    async def _put_back(self, node: Node, changed: bool | None, *, stage_text: str | None) -> str:
        """`changed` True/False: this node's replace is known to have (not) happened. None: it was cut, so
        look at what the node holds (after reconnecting) and undo it if the new text landed."""
        try:
            if changed is None:
                landed = await node.host.read_unit() == stage_text
                if stage_text is not None:
                    with contextlib.suppress(HostError):
                        await node.host.discard(StagedPush(node.host.info.unit, stage_text, True))
                if not landed:
                    return "cut before its replace; still the previous unit"
                await node.host.rollback()
                return "cut after its replace; put back to the previous unit"
            if not changed:
                return "already had this unit; unchanged"
            await node.host.rollback()
            return "was replaced; put back to the previous unit"
        except HostError as repair_err:
            return f"UNKNOWN — could not be checked or put back ({repair_err.message}); look at it before pushing"

    async def history(self) -> list[int]:
        """Node 0's backups; a rollback needs one on every node (checked before any node changes)."""
        return await self.nodes[0].host.history()

    async def read_backup(self, number: int) -> str:
        """Node 0's backup: every node holds the same text (a push reaches all or none)."""
        return await self.nodes[0].host.read_backup(number)

    async def rollback(self) -> str:
        histories = await self._each(lambda n: n.host.history())
        empty = [n.name for n, h in zip(self.nodes, histories, strict=True) if not h]
        if empty:
            raise HostError(f"{self.cluster.name}: no backup to roll back to on {', '.join(empty)}; no node was changed",
                            "push a unit first (every push keeps the previous one)")
        texts = await self._each(lambda n: n.host.rollback())
        head = texts[0]
        assert isinstance(head, str)
        return head

    async def drop_backups(self, numbers: Sequence[int]) -> None:
        """On every node, when every node numbers its backups as node 0 does (a push reaches all or none);
        else on none: a number would name another unit on a node whose history went its own way."""
        histories = await self._each(lambda n: n.host.history())
        if any(h != histories[0] for h in histories):
            return
        await self._each(lambda n: n.host.drop_backups(numbers))

    # --- service ---------------------------------------------------------------------------------
    async def status(self) -> ServiceStatus:
        statuses = await self._each(lambda n: n.host.status())
        pairs = [(n.name, s) for n, s in zip(self.nodes, statuses, strict=True) if isinstance(s, ServiceStatus)]
        return combine_status(self.info.unit, pairs)

    async def restart(self) -> RestartResult:
        """Stop every node, then start every node (daemon-reload + restart of a stopped unit = start)."""
        await self.stop()
        results = await self._each(lambda n: n.host.restart())
        restarts = [r for r in results if isinstance(r, RestartResult)]
        job = next((r.job_result for r in restarts if not r.ok), "done")
        return RestartResult(job_result=job, status=await self.status())

    async def stop(self) -> None:
        await self._each(lambda n: n.host.stop())

    async def gpu_facts(self) -> list[GpuFact]:
        facts = await self._each(lambda n: n.host.gpu_facts())
        return [f for node_facts in facts if isinstance(node_facts, list) for f in node_facts]

    async def upload(self, name: str, data: bytes) -> str:
        """The file beside every node's unit (each node's server reads its own); node 0's path is returned, and
        nodes whose units live elsewhere are refused (one unit text names one path)."""
        paths = [p for p in await self._each(lambda n: n.host.upload(name, data)) if isinstance(p, str)]
        if len(set(paths)) > 1:
            raise HostError(f"{self.cluster.name}: {name} landed at different paths on the nodes "
                            f"({', '.join(sorted(set(paths)))}); one unit cannot name them all",
                            "keep every node's unit at the same path")
        return paths[0]

    # --- journal ---------------------------------------------------------------------------------
    async def journal(
        self, *, after_cursor: str | None = None, follow: bool = True, lines: int | None = None,
        node: str | None = None,
    ) -> AsyncIterator[JournalRecord]:
        """Every node's journal (or only `node`'s), each record tagged with its node, merged in time order.
        A cursor is every node's cursor at that record (JSON), so a follow resumes per node."""
        nodes = [n for n in self.nodes if node is None or n.name == node]
        if not nodes:
            raise HostError(f"{self.cluster.name} has no node named {node!r}",
                            f"nodes: {', '.join(n.name for n in self.nodes)}")
        cursors = _parse_cursor(after_cursor)
        backlog: list[tuple[datetime, int, JournalRecord]] = []
        for order, n in enumerate(nodes):
            async for record in n.host.journal(after_cursor=cursors.get(n.name), follow=False, lines=lines):
                backlog.append((record.timestamp, order, replace(record, node=n.name)))
        backlog.sort(key=lambda item: (item[0], item[1]))
        for _, _, record in backlog:
            cursors[record.node or ""] = record.cursor
            yield replace(record, cursor=json.dumps(cursors, sort_keys=True))
        if not follow:
            return
        async for record in self._follow(nodes, dict(cursors)):
            cursors[record.node or ""] = record.cursor
            yield replace(record, cursor=json.dumps(cursors, sort_keys=True))

    async def _follow(self, nodes: list[Node], cursors: dict[str, str]) -> AsyncIterator[JournalRecord]:
        """Live records of every node as they arrive (arrival order is time order for live lines)."""
        queue: asyncio.Queue[JournalRecord | BaseException] = asyncio.Queue()

        async def pump(n: Node) -> None:
            try:
                start = cursors.get(n.name)
                async for record in n.host.journal(after_cursor=start, follow=True, lines=None if start else 0):
                    await queue.put(replace(record, node=n.name))
            except Exception as err:  # a node's follow ended in error: surface it, naming the node
                await queue.put(HostError(f"{n.name}: {err}") if not isinstance(err, HostError) else
                                type(err)(f"{n.name}: {err.message}", err.hint))

        tasks = [asyncio.create_task(pump(n)) for n in nodes]
        try:
            while True:
                item = await queue.get()
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


def _parse_cursor(cursor: str | None) -> dict[str, str]:
    if not cursor:
        return {}
    try:
        parsed = json.loads(cursor)
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in parsed.items()} if isinstance(parsed, dict) else {}
