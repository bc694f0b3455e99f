"""How the ranks of a distributed run differ: each divergence, the ranks grouped by what
they compiled, and how each node ended (``inspector/ranks.py`` finds them; ``summary`` and
``check`` print them)."""

from __future__ import annotations

from dyn_inspect.inspector import ranks
from dyn_inspect.inspector.outputs import Divergence, NodeStatus, RankGroup


def divergence(d: ranks.Divergence) -> Divergence:
    return Divergence(kind=d.kind, compile_id=d.compile_id, message=d.message, ranks=list(d.ranks))


def rank_group(b: ranks.Behaviour) -> RankGroup:
    return RankGroup(ranks=list(b.ranks), reference=b.reference, differences=list(b.differences), text=b.describe())


def node_status(n: ranks.NodeStatus) -> NodeStatus:
    return NodeStatus(node=n.node, hosts=list(n.hosts), ranks=list(n.ranks), status=n.status)
