"""The ASGI application: the pages, their read-only JSON API and ``/metrics``.

Every page is a small HTML file of ``static/`` whose ES module draws it from
the JSON API (docs/web.md lists the endpoints). A store query or a replay is
computed in a worker thread (:func:`trio.to_thread.run_sync`, at most
:data:`THREADS` at once) and cached by :mod:`.data`; only the spectator's
view of the tables in progress is read on the referee's trio loop, and it is
a copy of the rules core's public view, a few microseconds.

Errors never show a traceback: under ``/api/`` a JSON ``{"error": ...}``
with the right status, elsewhere a short error page.
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from wizard_referee.referee.arena import Arena
from wizard_referee.referee.logs import get_logger
from wizard_referee.web.data import (
    MAX_ID_CHARS,
    MemoryData,
    NotFound,
    StoreData,
    Unavailable,
    Withheld,
)
from wizard_referee.web.plot import ratings_svg
from wizard_referee.web.spectator import tables_json

if TYPE_CHECKING:  # (the ladder's pages need the [ladder] extra: loaded only with one)
    from wizard_referee.web.ladder import LadderData

__all__ = ["THREADS", "WebState", "create_app"]

STATIC = Path(__file__).parent / "static"
#: Worker threads the pages may use at once (the rest wait their turn).
THREADS = 2
#: Seconds the pages on a loop of their own reuse one view of the tables
#: in progress (the tables page asks every second).
TABLES_EVERY = 0.25


@dataclass
class WebState:
    """What one web server shows: a results store and/or a running referee."""

    store: StoreData | None = None
    arena: Arena | None = None
    ladder: LadderData | None = None
    """A ladder's store (``ladder run --web``): its standings and entrants."""
    spectator_delay: float | None = None
    """Seconds after which a finished round's hands are shown to spectators
    while the game goes on (None: only once the game has ended)."""
    metrics: Any = None
    """The Prometheus registry of ``/metrics`` (None: no metrics here)."""
    memory: MemoryData | None = None
    referee: trio.lowlevel.TrioToken | None = None
    """The referee's trio loop when the pages run on a loop of their own
    (:func:`.serve.start_web`: a thread); None: the same loop."""
    limiter: trio.CapacityLimiter | None = field(default=None, repr=False)
    _tables: tuple[float, Any] = field(default=(-1.0, None), repr=False)

    def __post_init__(self) -> None:
        if self.store is None and self.ladder is None and self.arena is not None:
            self.memory = MemoryData(self.arena, self.referee)
        if self.metrics is None and self.arena is not None:
            from wizard_referee.web.metrics import registry

            self.metrics = registry(self.arena)

    @property
    def games_source(self) -> StoreData | LadderData | MemoryData:
        source = self.store or self.ladder or self.memory
        if source is None:
            raise Unavailable("no results store and no referee to show")
        return source

    async def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in a worker thread (off the referee's loop)."""
        if self.limiter is None:
            self.limiter = trio.CapacityLimiter(THREADS)
        return await trio.to_thread.run_sync(fn, *args, limiter=self.limiter)

    async def on_referee(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on the referee's trio loop, where its tables and
        counters change: here, or through a worker thread from the pages'
        own loop (a few microseconds of the referee's)."""
        token = self.referee
        if token is None:
            return fn(*args)
        return await trio.to_thread.run_sync(
            lambda: trio.from_thread.run_sync(fn, *args, trio_token=token)
        )

    async def tables(self, game_ids: list[str] | None = None) -> dict[str, Any]:
        """The spectator's view of the tables in progress (``game_ids``: those
        alone). On a loop of their own the pages ask the referee at most
        every :data:`TABLES_EVERY` seconds for all of them (answers share it)."""
        arena = self.arena
        assert arena is not None
        if game_ids is None and self.referee is not None:
            at, data = self._tables
            if data is not None and trio.current_time() - at < TABLES_EVERY:
                return dict(data)
        wanted = (
            game_ids
            if game_ids is not None
            else await self.on_referee(lambda: list(arena.live_tables))
        )
        deals = await _deals_in_play(self, wanted)

        def view() -> dict[str, Any]:
            live = arena.live_tables
            tables = {g: live[g] for g in wanted if g in live}
            if deals is not None:  # a table started since the question waits for the next one
                tables = {g: t for g, t in tables.items() if g in deals}
            return tables_json(tables, self.spectator_delay, deals)

        data = await self.on_referee(view)
        if game_ids is None and self.referee is not None:
            self._tables = (trio.current_time(), data)
        return dict(data)


# -- errors -------------------------------------------------------------------------------------


def _error_status(e: BaseException) -> tuple[int, str]:
    if isinstance(e, NotFound):
        return 404, str(e)
    if isinstance(e, Withheld):
        return 403, str(e)
    if isinstance(e, Unavailable):
        return 503, str(e)
    if isinstance(e, HTTPException):
        return e.status_code, str(e.detail)
    return 500, "internal error: the server's log has the details"


def error_page(status: int, message: str) -> HTMLResponse:
    text = html.escape(message)
    body = (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{status} - Wizard Arena</title>"
        '<link rel=stylesheet href="/static/style.css"></head><body>'
        '<nav><a href="/">Wizard Arena</a></nav>'
        f'<main><h1>{status}</h1><p class="error">{text}</p>'
        '<p><a href="/">back to the start page</a></p></main></body></html>'
    )
    return HTMLResponse(body, status_code=status)


def _error_response(request: Request, e: BaseException) -> Response:
    status, message = _error_status(e)
    if status >= 500 and not isinstance(e, Unavailable):
        get_logger().error("web_error", path=request.url.path, error=repr(e))
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message, "status": status}, status_code=status)
    return error_page(status, message)


async def _on_error(request: Request, exc: Exception) -> Response:
    return _error_response(request, exc)


# -- the routes -----------------------------------------------------------------------------------

Handler = Callable[[Request], Awaitable[Response]]


def _state(request: Request) -> WebState:
    state: WebState = request.app.state.web
    return state


def _store(request: Request) -> StoreData:
    store = _state(request).store
    if store is None:
        raise HTTPException(404, "this server has no results store: no leaderboard or entrants")
    return store


def _id(request: Request, key: str, what: str) -> str:
    """A game id or entrant name of the path, refused (404) before any
    lookup when longer than any real one."""
    value: str = request.path_params[key]
    return _short(value, what)


def _short(value: str, what: str) -> str:
    if len(value) > MAX_ID_CHARS:
        raise NotFound(f"no {what} has a name of {len(value)} characters (at most {MAX_ID_CHARS})")
    return value


async def api_info(request: Request) -> Response:
    st = _state(request)
    info = await st.run(st.games_source.info)
    info["spectator_delay"] = st.spectator_delay
    info["live_tables"] = st.arena is not None
    info["metrics"] = st.metrics is not None
    return JSONResponse(info)


async def api_leaderboard(request: Request) -> Response:
    store = _store(request)
    return JSONResponse(await _state(request).run(store.leaderboard))


async def api_history(request: Request) -> Response:
    store = _store(request)
    return JSONResponse(await _state(request).run(store.history))


async def ratings_plot(request: Request) -> Response:
    store = _store(request)
    history = await _state(request).run(store.history)
    return Response(ratings_svg(history), media_type="image/svg+xml")


async def api_games(request: Request) -> Response:
    st = _state(request)
    entrant = request.query_params.get("entrant")
    if entrant is not None:
        _short(entrant, "entrant")
    return JSONResponse(await st.run(st.games_source.games, entrant))


async def api_game(request: Request) -> Response:
    st = _state(request)
    return JSONResponse(await st.run(st.games_source.game, _id(request, "game_id", "game")))


async def api_entrants(request: Request) -> Response:
    store = _store(request)
    return JSONResponse(await _state(request).run(store.entrants))


async def api_entrant(request: Request) -> Response:
    store = _store(request)
    return JSONResponse(await _state(request).run(store.entrant, _id(request, "name", "entrant")))


async def api_game_analysis(request: Request) -> Response:
    st = _state(request)
    game_id = _id(request, "game_id", "game")
    if st.store is None:
        # a ladder's or a referee's games: withheld or unknown as their replay
        # says, else not graded here
        await st.run(st.games_source.game, game_id)
        raise HTTPException(404, "games are graded from a tournament's results store only")
    return JSONResponse(await st.run(st.store.analysis, game_id))


async def api_entrant_analysis(request: Request) -> Response:
    store = _store(request)
    name = _id(request, "name", "entrant")
    return JSONResponse(await _state(request).run(store.entrant_analysis, name))


def _arena(request: Request) -> Arena:
    arena = _state(request).arena
    if arena is None:
        raise HTTPException(404, "no game is being played here: no referee runs in this server")
    return arena


async def api_tables(request: Request) -> Response:
    """The tables in progress: read on the referee's trio loop (they are
    changed only there), cheap."""
    _arena(request)
    return JSONResponse(await _state(request).tables())


async def _deals_in_play(st: WebState, game_ids: list[str]) -> dict[str, list[str]] | None:
    """With a tournament's or a ladder's store: each table's unfinished
    games of its deal (read in a worker thread). A referee without a store
    deals every game afresh: None."""
    source = st.store or st.ladder
    if source is None or not game_ids:
        return None
    deals: dict[str, list[str]] = await st.run(source.deals_in_play, game_ids)
    return deals


async def api_table(request: Request) -> Response:
    _arena(request)
    game_id = _id(request, "game_id", "game")
    data = await _state(request).tables([game_id])
    if not data["tables"]:
        raise NotFound(f"game {game_id!r} is not being played (finished games: /api/games)")
    return JSONResponse(data["tables"][0])


async def metrics(request: Request) -> Response:
    """Prometheus' text format, read on the trio loop (a few integers per metric)."""
    from wizard_referee.web.metrics import CONTENT_TYPE, scrape

    st = _state(request)
    if st.metrics is None:
        raise HTTPException(404, "no referee runs in this server: no metrics")
    return Response(await st.on_referee(scrape, st.metrics), media_type=CONTENT_TYPE)


def _page(name: str, check: Callable[[Request], Awaitable[None]] | None = None) -> Handler:
    async def page(request: Request) -> Response:
        if check is not None:
            await check(request)  # an unknown game or entrant: its error page
        return FileResponse(STATIC / name, media_type="text/html")

    return page


async def _game_exists(request: Request) -> None:
    st = _state(request)
    await st.run(st.games_source.game, _id(request, "game_id", "game"))


# -- a ladder ---------------------------------------------------------------------------------


def _ladder(request: Request) -> LadderData:
    ladder = _state(request).ladder
    if ladder is None:
        raise HTTPException(404, "this server shows no ladder")
    return ladder


async def api_standings(request: Request) -> Response:
    ladder = _ladder(request)
    return JSONResponse(await _state(request).run(ladder.standings))


async def api_ladder_entrant(request: Request) -> Response:
    ladder = _ladder(request)
    name = _id(request, "name", "entrant")
    return JSONResponse(await _state(request).run(ladder.entrant, name))


async def ladder_plot(request: Request) -> Response:
    ladder = _ladder(request)
    name = _id(request, "name", "entrant")
    svg = await _state(request).run(ladder.history_svg, name)
    return Response(svg, media_type="image/svg+xml")


async def entrant_page(request: Request) -> Response:
    """An entrant's page: a ladder's (versions, rating over time) or a tournament's."""
    st = _state(request)
    name = _id(request, "name", "entrant")
    if st.ladder is not None:
        await st.run(st.ladder.entrant, name)
        return FileResponse(STATIC / "ladder_entrant.html", media_type="text/html")
    await st.run(_store(request).entrant, name)
    return FileResponse(STATIC / "entrant.html", media_type="text/html")


async def no_icon(request: Request) -> Response:
    return Response(status_code=204)


async def home(request: Request) -> Response:
    st = _state(request)
    if st.ladder is not None:
        await st.run(st.ladder.check)  # a missing or broken store: its error page
        return FileResponse(STATIC / "ladder.html")
    if st.store is not None:
        await st.run(st.store.check)  # a missing or broken store: its error page
        return FileResponse(STATIC / "leaderboard.html")
    return FileResponse(STATIC / "tables.html")


def routes() -> list[Route | Mount]:
    return [
        Route("/", home),
        Route("/favicon.ico", no_icon),
        Route("/games", _page("games.html")),
        Route("/games/{game_id:path}", _page("replay.html", _game_exists)),
        Route("/entrants/{name:path}", entrant_page),
        Route("/api/info", api_info),
        Route("/api/leaderboard", api_leaderboard),
        Route("/api/leaderboard/history", api_history),
        Route("/plot/ratings.svg", ratings_plot),
        Route("/api/games", api_games),
        Route("/api/games/{game_id:path}", api_game),
        Route("/api/analysis/games/{game_id:path}", api_game_analysis),
        Route("/api/analysis/entrants/{name:path}", api_entrant_analysis),
        Route("/api/entrants", api_entrants),
        Route("/api/entrants/{name:path}", api_entrant),
        Route("/tables", _page("tables.html")),
        Route("/api/ladder/standings", api_standings),
        Route("/api/ladder/entrants/{name:path}", api_ladder_entrant),
        Route("/plot/ladder/{name:path}", ladder_plot),
        Route("/api/tables", api_tables),
        Route("/api/tables/{game_id:path}", api_table),
        Route("/metrics", metrics),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]


def create_app(
    state: WebState, extra: list[Route | Mount] | None = None, *, metrics_only: bool = False
) -> Starlette:
    """The application showing ``state`` (``extra``: more routes, before the
    pages'); with ``metrics_only`` just ``/metrics`` (``--metrics-port``)."""
    pages = [Route("/metrics", metrics)] if metrics_only else routes()
    app = Starlette(
        routes=[*(extra or []), *pages],
        exception_handlers={
            NotFound: _on_error,
            Unavailable: _on_error,
            Withheld: _on_error,
            HTTPException: _on_error,
            Exception: _on_error,
        },
    )
    app.state.web = state
    return app
