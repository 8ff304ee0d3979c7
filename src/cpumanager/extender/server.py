"""The extender's HTTP front (starlette): verbs, snapshot pushes, metrics and health.

Routes: ``POST /filter`` and ``POST /prioritize`` (ExtenderArgs in, ExtenderFilterResult /
HostPriorityList out), ``POST /bind`` (ExtenderBindingArgs: ``binding.py``),
``POST /v1/nodes/{name}/snapshot`` (an agent's push; ``auth.py`` says who may push which
node), ``POST /v1/nodes/{name}/heartbeat`` (``{"digest": ...}``: unchanged since the last
push), ``GET /metrics``, ``GET /healthz`` (alive) and ``GET /readyz`` (``readiness.py``).
A malformed request is a 400 with a one-line reason. ``create_apps`` serves the agents'
two routes on a listener of their own, apart from the schedulers' (``--push-listen``).

**The event loop never computes.** A handler on the loop reads its body (bounded in size and
time: :class:`Bodies`) and hands everything else to a thread (:class:`Offload`): decoding,
restoring, judging, even taking the store's lock. Each kind of work has its own lane (a
thread limiter) and a deadline; past the deadline the caller gets a 503 and the work, which a
thread cannot be stopped in, finishes unseen. So a push being restored never delays
``/healthz``, heartbeats or another node's ``/filter``. Filter and prioritize change no
state (``assume="bind"``); bind checks and assumes under a lock per node. The verdicts
themselves come from ``decide.py``. Every cap is in ``core/limits.py`` (docs/limits.md).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from functools import partial

from prometheus_client import Counter as PromCounter
from prometheus_client import generate_latest
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from cpumanager.core import limits
from cpumanager.core.gocompat import one_line
from cpumanager.errors import InputError
from cpumanager.extender.auth import Authenticator, SharedToken, refused_push
from cpumanager.extender.binding import Bindings, PodSource, parse_bind_args
from cpumanager.extender.decide import Decider, check, gc_paused, v_checked
from cpumanager.extender.fanout import Fanout, FanoutSettings
from cpumanager.extender.guards import Bodies, BodyTimeout, BodyTooLarge, Busy, Offload
from cpumanager.extender.judge import Verdict
from cpumanager.extender.meters import Meters
from cpumanager.extender.protocol import (
    ExtenderArgs,
    filter_result,
    parse_args,
    priority_list,
)
from cpumanager.extender.readiness import readiness
from cpumanager.extender.store import NodeStore, StoreFull, pod_shape, snapshot_digest
from cpumanager.nodeview.snapshot import snapshot_from_tree

__all__ = ["ExtenderConfig", "create_app", "create_apps", "gc_paused"]


@dataclass(frozen=True, slots=True)
class ExtenderConfig:
    """How the extender treats pushes, stale nodes and approvals.

    ``stale_policy``: ``fail`` (a node without a fresh snapshot fails the filter, resolvably)
    or ``pass`` (it passes unchecked); both are counted. ``assume``: ``bind`` (bindVerb is
    ours: filter changes nothing, ``binding.py``) or ``all`` (the filter assumes the pod on
    every admitting node). ``authenticator``: ``auth.py`` (default: the shared ``token``).
    ``ready_after``: ``readiness.py``. ``workers``
    and ``fanout_threshold``: how one call's exact checks spread over processes
    (``fanout.py``).
    """

    token: bytes | None = None
    stale_after: float = 60.0
    stale_policy: str = "fail"
    assume_ttl: float = 30.0
    assume: str = "bind"
    authenticator: Authenticator | None = None
    ready_after: float = 20.0
    max_body: int = limits.MAX_FILTER_BODY_BYTES
    workers: int | None = None  # processes for exact checks; None: usable CPUs, at most 4
    fanout_threshold: int = 64  # fewer pending exact checks than this run in-process
    max_nodes: int = limits.MAX_EXTENDER_NODES  # nodes held; docs/limits.md for eviction
    body_timeout: float = 10.0  # seconds to receive a whole request body
    answer_timeout: float = 4.0  # seconds a filter or prioritize may take (the scheduler's is 5)
    bind_timeout: float = 4.5  # seconds a bind may wait for its lane and run (up to 3 API calls)
    bind_lane: int = 4  # binds at once (one per node: a lock per node); never filter's threads
    push_timeout: float = 60.0  # seconds a push may wait and restore before a 503
    max_buffered: int = limits.MAX_BUFFERED_BODY_BYTES  # bodies held at once, all requests


def _bad(message: str, status: int = 400) -> PlainTextResponse:
    return PlainTextResponse(one_line(message) + "\n", status_code=status)


def create_app(
    config: ExtenderConfig,
    store: NodeStore | None = None,
    *,
    fanout: FanoutSettings | None = None,
    api: PodSource | None = None,
) -> Starlette:
    """The extender's ASGI application over ``store`` (a new one by default), every route
    on one listener (one machine, a bench); exact checks spread over processes by
    ``fanout`` (by default from the configuration's ``workers`` and ``fanout_threshold``)."""
    verbs, pushes, lifespan = _routes(config, store, fanout, api)
    return Starlette(routes=[*verbs, *pushes], lifespan=lifespan)


def create_apps(
    config: ExtenderConfig,
    store: NodeStore | None = None,
    *,
    fanout: FanoutSettings | None = None,
    api: PodSource | None = None,
) -> tuple[Starlette, Starlette]:
    """Two applications over one state, for two listeners: the schedulers' (filter,
    prioritize, bind, metrics and the probes; it owns the lifespan) and the agents'
    (snapshot pushes and heartbeats). Each answers 404 for the other's routes, so what
    can reach the agents' port (every node) cannot call ``/bind``, and the NetworkPolicy
    admits each kind of caller to its own port only (docs/extender.md, threat model)."""
    verbs, pushes, lifespan = _routes(config, store, fanout, api)
    return Starlette(routes=verbs, lifespan=lifespan), Starlette(routes=pushes)


Lifespan = Callable[[Starlette], AbstractAsyncContextManager[None]]


def _routes(
    config: ExtenderConfig,
    store: NodeStore | None,
    fanout: FanoutSettings | None,
    api: PodSource | None,
) -> tuple[list[Route], list[Route], Lifespan]:
    """The schedulers' routes, the agents' routes and the lifespan, over one state."""
    nodes = store if store is not None else NodeStore()
    nodes.max_nodes, nodes.evict_after = config.max_nodes, config.stale_after
    if fanout is None:
        fanout = FanoutSettings(workers=config.workers, threshold=config.fanout_threshold)
    spread = Fanout(check, Verdict, fanout)
    metrics = Meters()
    bodies = Bodies(config.max_buffered, config.body_timeout)
    # Lanes: filters and prioritizes serialise on the store's lock anyway; restores run
    # one at a time so a burst of pushes cannot starve the verbs of the interpreter;
    # binds wait on the API server (up to three calls each) in their own lane, so slow
    # binds never hold filter or prioritize past the scheduler's timeout; small work
    # (heartbeats, the metrics page) never waits behind any of them.
    offload = Offload(verb=2, bind=config.bind_lane, push=1, small=4)
    started = nodes.clock()
    authenticator = config.authenticator or SharedToken(config.token)
    binds = PromCounter(
        "cpumanager_extender_binds",
        "Bind calls by outcome.",
        ["outcome"],
        registry=metrics.registry,
    )

    def timed(
        route: str, handler: Callable[[Request], Awaitable[Response]]
    ) -> Callable[[Request], Awaitable[Response]]:
        async def run(request: Request) -> Response:
            start = time.perf_counter()
            try:
                response = await handler(request)
            except InputError as exc:
                response = _bad(str(exc), 413 if isinstance(exc, BodyTooLarge) else 400)
            except BodyTimeout as exc:
                response = _bad(str(exc), 408)
            except Busy as exc:
                response = _bad(str(exc), 503)
            except ClientDisconnect:
                response = Response(status_code=499)  # nobody to send it to: counted only
            finally:
                bodies.release(request)
            metrics.latency.labels(route).observe(time.perf_counter() - start)
            metrics.requests.labels(route, str(response.status_code)).inc()
            return response

        return run

    decide = Decider(
        nodes, spread, metrics, stale_after=config.stale_after, stale_policy=config.stale_policy
    )

    async def filter_verb(request: Request) -> Response:
        raw = await bodies.read(request, config.max_body)
        return await offload.run("verb", config.answer_timeout, partial(filter_raw, raw))

    def filter_raw(raw: bytes) -> Response:
        with gc_paused():
            return filter_answer(parse_args(raw))

    def filter_answer(args: ExtenderArgs) -> Response:
        with nodes.lock:
            verdicts = decide(args)
            passed = [n for n, v in verdicts.items() if v.admitted]
            if config.assume == "all":  # no bindVerb: hold the pod wherever it may go
                nodes.forget(args.pod.uid)
                shape = pod_shape(args.pod_spec)
                for name in (n for n in passed if v_checked(verdicts[n])):
                    nodes.assume(name, args.pod, shape, config.assume_ttl, move=False)
                metrics.assumed.set(nodes.assumed_count())
        failed: dict[str, str] = {}
        unresolvable: dict[str, str] = {}
        outcomes = Counter(
            ("pass" if v.admitted else "fail", v.reason or "Admitted") for v in verdicts.values()
        )
        for (result, reason), count in outcomes.items():
            metrics.outcomes.labels(result, reason).inc(count)
        lines: dict[int, str] = {}  # nodes in one state share a verdict: explain it once
        for name, verdict in verdicts.items():
            if verdict.admitted:
                continue
            target = unresolvable if verdict.unresolvable else failed
            text = lines.get(id(verdict))
            if text is None:
                text = lines[id(verdict)] = one_line(verdict.explanation())
            target[name] = text
        return JSONResponse(filter_result(args, passed, failed, unresolvable))

    async def prioritize_verb(request: Request) -> Response:
        raw = await bodies.read(request, config.max_body)
        return await offload.run("verb", config.answer_timeout, partial(prioritize_raw, raw))

    def prioritize_raw(raw: bytes) -> Response:
        with gc_paused():
            args = parse_args(raw)
            with nodes.lock:
                verdicts = decide(args)
            scores = {n: (v.score if v.admitted else 0) for n, v in verdicts.items()}
            return JSONResponse(priority_list(scores))

    async def refusal(request: Request) -> Response | None:
        """None when the caller may push the node in the path (``auth.refused_push``)."""
        header, name = request.headers.get("authorization", ""), request.path_params["name"]
        check = partial(refused_push, authenticator, header, name)
        found = await offload.run("small", config.answer_timeout, check)
        if found is None:
            return None
        metrics.pushes.labels(found[1]).inc()
        return _bad(found[2], found[0])

    def node_name(request: Request) -> str:
        return limits.check_node_name(request.path_params["name"], "the node name in the path")

    async def push(request: Request) -> Response:
        refused = await refusal(request)
        if refused is not None:
            return refused
        try:
            name = node_name(request)
        except InputError:
            metrics.pushes.labels("invalid").inc()
            raise
        raw = await bodies.read(request, limits.MAX_PUSH_BYTES)
        return await offload.run("push", config.push_timeout, partial(store_push, name, raw))

    def store_push(name: str, raw: bytes) -> Response:
        """Decode, check and restore one pushed snapshot (in a thread)."""
        with gc_paused():
            return decode_and_store(name, raw)

    def decode_and_store(name: str, raw: bytes) -> Response:
        try:
            document = json.loads(raw)
        except (ValueError, RecursionError):
            metrics.pushes.labels("invalid").inc()
            return _bad("the snapshot is not JSON; send 'cpumanager node snapshot' output")
        if not isinstance(document, dict) or limits.depth_of(document) > limits.MAX_DEPTH:
            metrics.pushes.labels("invalid").inc()
            return _bad("the body is not a node snapshot (an object, nested at most 64 deep)")
        digest = snapshot_digest(document)
        if nodes.heartbeat(name, digest):  # the snapshot held: nothing to decode or restore
            metrics.pushes.labels("unchanged").inc()
            return JSONResponse({"node": name, "changed": False})
        try:
            snapshot = snapshot_from_tree(document)
        except InputError:
            metrics.pushes.labels("invalid").inc()
            raise
        if snapshot.node_name != name:
            metrics.pushes.labels("invalid").inc()
            return _bad(f"the snapshot is of node {snapshot.node_name!r}, not {name!r}")
        try:
            changed = nodes.put(snapshot, digest)
        except StoreFull as exc:
            metrics.pushes.labels("refused-full").inc()
            return _bad(str(exc), 507)
        metrics.pushes.labels("changed" if changed else "unchanged").inc()
        metrics.assumed.set(nodes.assumed_count())
        return JSONResponse({"node": name, "changed": changed})

    async def heartbeat(request: Request) -> Response:
        refused = await refusal(request)
        if refused is not None:
            return refused
        name = node_name(request)
        raw = await bodies.read(request, limits.MAX_HEARTBEAT_BYTES)
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            body = None
        digest = body.get("digest") if isinstance(body, dict) else None
        if not isinstance(digest, str):
            return _bad('a heartbeat body is {"digest": "<sha256 of the last pushed snapshot>"}')
        held = await offload.run(
            "small", config.answer_timeout, partial(nodes.heartbeat, name, digest)
        )
        if not held:
            metrics.pushes.labels("heartbeat-unknown").inc()
            return _bad("no snapshot with this digest is held: push the snapshot", 409)
        metrics.pushes.labels("heartbeat").inc()
        return JSONResponse({"node": name, "changed": False})

    async def metrics_page(request: Request) -> Response:
        return await offload.run("small", config.answer_timeout, render_metrics)

    def render_metrics() -> Response:
        # One series per held node: bounded by max_nodes, and every name is a node name.
        ages = nodes.ages()
        metrics.age.clear()
        for name, age in ages.items():
            metrics.age.labels(name).set(age)
        metrics.assumed.set(nodes.assumed_count())
        return Response(generate_latest(metrics.registry), media_type="text/plain; version=0.0.4")

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok\n")

    async def readyz(request: Request) -> Response:
        ready, why = readiness(nodes.ages(), nodes.clock() - started, config)
        return PlainTextResponse(why + "\n", status_code=200 if ready else 503)

    def check_one(args: ExtenderArgs) -> Verdict:
        with nodes.lock:
            return decide(args)[args.node_names[0]]

    bindings = None if api is None else Bindings(nodes, api, check_one, config.assume_ttl)

    async def bind_verb(request: Request) -> Response:
        args = parse_bind_args(await bodies.read(request, limits.MAX_HEARTBEAT_BYTES))
        if bindings is None:
            error = "this extender has no API server access to bind with"
        else:
            error = await offload.run("bind", config.bind_timeout, partial(bindings.bind, args))
        binds.labels("bound" if not error else "refused").inc()
        metrics.assumed.set(nodes.assumed_count())
        return JSONResponse({"Error": error})

    verbs = [
        Route("/filter", timed("filter", filter_verb), methods=["POST"]),
        Route("/prioritize", timed("prioritize", prioritize_verb), methods=["POST"]),
        Route("/bind", timed("bind", bind_verb), methods=["POST"]),
        Route("/metrics", metrics_page, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
    ]
    pushes = [
        Route("/v1/nodes/{name}/snapshot", timed("push", push), methods=["POST"]),
        Route("/v1/nodes/{name}/heartbeat", timed("heartbeat", heartbeat), methods=["POST"]),
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            spread.close()  # the workers hold copies of the nodes

    return verbs, pushes, lifespan
