"""`cpumanager extender`: the kube-scheduler extender over HTTP(S) (uvicorn).

Pushes need the shared bearer token (``--token-file``); without one every push is refused.
``--tls-cert``/``--tls-key`` serve HTTPS; ``--tls-client-ca`` also requires client
certificates (mTLS). See docs/extender.md for the scheduler's configuration.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import click

from cpumanager.cli.logs import configure, log, log_format_option
from cpumanager.cli.options import kubeconfig_option
from cpumanager.errors import InputError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

__all__ = ["access_logged", "check_tls", "extender", "parse_listen", "read_token"]

MAX_TOKEN_BYTES = 4096
MAX_STALE_AFTER = 3600.0  # an hour: an agent pushes every ten seconds
MAX_ASSUME_TTL = 3600.0  # an hour: a bound pod starts, and is reported, within minutes
MAX_READY_AFTER = 3600.0


class Seconds(click.ParamType[float]):
    """A finite number of seconds in [low, high]: ``nan`` and ``inf`` are refused (a
    ``nan`` time to live never expires; click.FloatRange lets it through)."""

    name = "seconds"

    def __init__(self, low: float, high: float) -> None:
        self.low, self.high = low, high

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or not self.low <= seconds <= self.high:
            self.fail(f"{value!r} is not a number from {self.low:g} to {self.high:g}", param, ctx)
        return seconds


def access_logged(app: App) -> App:
    """``app`` with one access line per HTTP request (logger ``cpumanager.access``):
    method, path, status, duration in milliseconds, client address; query strings and
    bodies are never logged (they may hold pod names only, but tokens travel in headers,
    which are not logged either)."""

    async def logged(scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [0]

        async def sending(message: Message) -> None:
            if message.get("type") == "http.response.start":
                status[0] = int(message.get("status", 0))
            await send(message)

        try:
            await app(scope, receive, sending)
        finally:
            client = scope.get("client") or ("-", 0)
            log(
                "access",
                f"{scope.get('method', '-')} {scope.get('path', '-')} {status[0] or '-'}",
                method=scope.get("method", "-"),
                path=scope.get("path", "-"),
                status=status[0],
                ms=round((time.perf_counter() - started) * 1000, 1),
                client=f"{client[0]}:{client[1]}",
            )

    return logged


def check_tls(cert: Path, key: Path, client_ca: Path | None) -> None:
    """Load the TLS files once as the server will; InputError (one line) when they are
    missing, unreadable, malformed or do not match."""
    import ssl

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    steps: list[tuple[str, Any]] = [
        ("--tls-cert/--tls-key", lambda: context.load_cert_chain(str(cert), str(key)))
    ]
    if client_ca is not None:
        steps.append(("--tls-client-ca", lambda: context.load_verify_locations(str(client_ca))))
    for what, step in steps:
        try:
            step()
        except ssl.SSLError as exc:
            reason = exc.reason or str(exc).splitlines()[0]
            msg = f"{what}: cannot use the TLS files ({reason}); check they are PEM and match"
            raise InputError(msg) from None
        except OSError as exc:
            msg = f"{what}: cannot read {exc.filename or 'a file'}: {exc.strerror or exc}"
            raise InputError(msg) from None


def parse_listen(text: str, option: str = "--listen") -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as a pair; InputError when malformed."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        msg = f"{option} {text!r} is not HOST:PORT; write e.g. 127.0.0.1:8888"
        raise InputError(msg)
    return host.strip("[]"), int(port)


def read_token(path: Path) -> bytes:
    """The shared token: a small regular file, surrounding whitespace stripped."""
    from cpumanager.adapters._text import read_bounded_bytes

    raw, _info = read_bounded_bytes(path, what="token file", max_bytes=MAX_TOKEN_BYTES + 1)
    token = raw.strip()
    if not token or len(raw) > MAX_TOKEN_BYTES or b"\n" in token:
        msg = f"token file {path} must hold one non-empty line under {MAX_TOKEN_BYTES} bytes"
        raise InputError(msg)
    return token


@click.command()
@click.option(
    "--listen",
    default="127.0.0.1:8888",
    show_default=True,
    help="HOST:PORT of the schedulers' verbs (filter, prioritize, bind), metrics and probes; "
    "without --push-listen, of the agents' pushes too.",
)
@click.option(
    "--push-listen",
    default=None,
    help="HOST:PORT of the agents' pushes and heartbeats alone (then --listen serves no "
    "pushes, this port no verbs): the nodes can then be let reach pushes only.",
)
@click.option(
    "--token-file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The shared token agents send as 'Authorization: Bearer'; none refuses all pushes.",
)
@click.option(
    "--stale-after",
    type=Seconds(1, MAX_STALE_AFTER),
    default=60.0,
    show_default=True,
    help="Seconds after which a node's snapshot is stale.",
)
@click.option(
    "--stale",
    "stale_policy",
    type=click.Choice(["fail", "pass"]),
    default="fail",
    show_default=True,
    help="A stale or missing node fails the filter, or passes it unchecked (counted).",
)
@click.option(
    "--assume",
    type=click.Choice(["bind", "all"]),
    default="bind",
    show_default=True,
    help="bind: the scheduler's bindVerb is ours, a pod is assumed where it is bound and "
    "filter changes nothing; all: (a scheduler that binds itself) assume on every "
    "admitting node.",
)
@click.option(
    "--auth",
    type=click.Choice(["tokenreview", "shared"]),
    default="shared",
    show_default=True,
    help="tokenreview: each push's projected ServiceAccount token must be bound to a pod on "
    "that node (TokenReview); shared: one --token-file for every node.",
)
@click.option(
    "--agent-service-account",
    "agent_accounts",
    multiple=True,
    default=("cpumanager-agent:cpumanager-agent",),
    show_default=True,
    help="NAMESPACE:NAME of the agents' ServiceAccount (--auth tokenreview).",
)
@kubeconfig_option(
    "API server access for bind and TokenReview [default: $KUBECONFIG, in-cluster, "
    "~/.kube/config]."
)
@click.option(
    "--no-api",
    is_flag=True,
    help="Run without API server access (no bind verb, shared token only).",
)
@click.option(
    "--ready-after",
    type=Seconds(0, MAX_READY_AFTER),
    default=20.0,
    show_default=True,
    help="Seconds up before /readyz may answer ready (two agent push intervals).",
)
@click.option(
    "--assume-ttl",
    type=Seconds(1, MAX_ASSUME_TTL),
    default=30.0,
    show_default=True,
    help="Seconds an approved pod is held before its node's agent reports it.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Processes for the exact checks (forked workers that hold the nodes); 1: none. "
    "Under a CPU quota, give the quota. [default: the usable CPUs, at most 4]",
)
@click.option(
    "--max-nodes",
    type=click.IntRange(min=1),
    default=10_000,
    show_default=True,
    help="Nodes held at most; a new node when full evicts the longest-silent stale one, "
    "else its push is refused (507).",
)
@click.option(
    "--tls-cert",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Serve HTTPS with this certificate (PEM; with --tls-key).",
)
@click.option(
    "--tls-key",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The private key of --tls-cert (PEM).",
)
@click.option(
    "--tls-client-ca",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Require client certificates signed by this CA (mTLS).",
)
@click.option(
    "--access-log/--no-access-log",
    default=True,
    show_default=True,
    help="Log one line per request (method, path, status, milliseconds, client).",
)
@log_format_option
def extender(
    *,
    listen: str,
    push_listen: str | None,
    token_file: Path | None,
    stale_after: float,
    stale_policy: str,
    assume: str,
    auth: str,
    agent_accounts: tuple[str, ...],
    kubeconfig: Path | None,
    no_api: bool,
    ready_after: float,
    assume_ttl: float,
    workers: int | None,
    max_nodes: int,
    tls_cert: Path | None,
    tls_key: Path | None,
    tls_client_ca: Path | None,
    access_log: bool,
    log_format: str,
) -> None:
    """Answer kube-scheduler's filter and prioritize calls with each node's kubelet
    admission, from the snapshots the node agents push."""
    import asyncio
    import ssl

    import uvicorn

    from cpumanager.extender.guards import header_timeout_protocol
    from cpumanager.extender.server import ExtenderConfig, create_app, create_apps

    host, port = parse_listen(listen)
    push_at = None if push_listen is None else parse_listen(push_listen, "--push-listen")
    if push_at is not None and push_at[1] == port:
        msg = "--push-listen needs a port of its own, not --listen's"
        raise InputError(msg)
    if (tls_cert is None) != (tls_key is None):
        msg = "give --tls-cert and --tls-key together"
        raise InputError(msg)
    if tls_client_ca is not None and tls_cert is None:
        msg = "--tls-client-ca needs --tls-cert and --tls-key"
        raise InputError(msg)
    if tls_cert is not None and tls_key is not None:
        check_tls(tls_cert, tls_key, tls_client_ca)
    token = read_token(token_file) if token_file is not None else None
    configure(log_format)
    notes: list[str] = []  # logged after the start line
    api = None
    if not no_api:
        from cpumanager.adapters.kube_api import KubeApiError, api_client

        try:
            # Short calls: a bind makes up to three within the scheduler's 5 s.
            api = api_client(kubeconfig, timeout=1.2)
        except KubeApiError as exc:
            if kubeconfig is not None or auth == "tokenreview":
                raise
            notes.append(
                f"no API server access, no bind verb ({exc}); with a scheduler that binds "
                "itself give --assume all"
            )
    authenticator = None
    if auth == "tokenreview":
        from cpumanager.extender.auth import NodeTokens

        if api is None:
            msg = "--auth tokenreview needs API server access (drop --no-api)"
            raise InputError(msg)
        for account in agent_accounts:
            if account.count(":") != 1 or not all(account.split(":")):
                msg = f"--agent-service-account {account!r} is not NAMESPACE:NAME"
                raise InputError(msg)
        authenticator = NodeTokens(api.token_review, frozenset(agent_accounts))
    elif token is None:
        notes.append("no --token-file: every snapshot push is refused")
    config = ExtenderConfig(
        token=token,
        stale_after=stale_after,
        stale_policy=stale_policy,
        assume=assume,
        assume_ttl=assume_ttl,
        workers=workers,
        authenticator=authenticator,
        ready_after=ready_after,
        max_nodes=max_nodes,
    )
    scheme = "https" if tls_cert else "http"

    def url(where: tuple[str, int]) -> str:
        return (
            f"{scheme}://[{where[0]}]:{where[1]}"
            if ":" in where[0]
            else (f"{scheme}://{where[0]}:{where[1]}")
        )

    log(
        "extender",
        "starting",
        listen=url((host, port)),
        pushListen=url(push_at) if push_at is not None else "same",
        token="set" if token is not None else "none",
        staleAfter=stale_after,
        stale=stale_policy,
        assume=assume,
        auth=auth,
        api=api is not None,
        assumeTtl=assume_ttl,
        workers=workers if workers is not None else "auto",
        tls=scheme == "https",
        mtls=tls_client_ca is not None,
        maxNodes=max_nodes,
    )
    for note in notes:
        log("extender", note, level=30)
    if push_at is None:
        listeners = [((host, port), create_app(config, api=api))]
    else:
        verbs, pushes = create_apps(config, api=api)
        listeners = [((host, port), verbs), (push_at, pushes)]
    servers = [
        uvicorn.Server(
            uvicorn.Config(
                access_logged(app) if access_log else app,
                host=where[0],
                port=where[1],
                log_level="warning",
                log_config=None,
                http=header_timeout_protocol(10.0),
                limit_concurrency=1000,  # connections; past it uvicorn answers 503
                lifespan="auto" if index == 0 else "off",
                ssl_certfile=str(tls_cert) if tls_cert else None,
                ssl_keyfile=str(tls_key) if tls_key else None,
                ssl_ca_certs=str(tls_client_ca) if tls_client_ca else None,
                ssl_cert_reqs=ssl.CERT_REQUIRED if tls_client_ca else ssl.CERT_NONE,
            )
        )
        for index, (where, app) in enumerate(listeners)
    ]
    asyncio.run(serve_together(servers))


async def serve_together(servers: list[Any]) -> None:
    """Run uvicorn servers on one event loop (one process, one state); when one stops (a
    signal, a port it could not take), the others stop too."""
    import asyncio

    async def serve(server: Any) -> None:
        try:
            await server.serve()
        finally:
            for other in servers:
                other.should_exit = True

    await asyncio.gather(*(serve(server) for server in servers))
