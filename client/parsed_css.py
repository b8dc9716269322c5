"""A speed trick, fenced here: Textual's CSS parsed once a process, by its text and the
theme's variables (BENCHMARKS.md, "Tricks outside the fence").

Textual parses an app's CSS (tonk.tcss and every widget's DEFAULT_CSS) at its start, and again
when the app refreshes its CSS on entering its first mode, into a new stylesheet whose own cache
is empty: every start parsed the same text twice (20 parses where 10 do), about 60 ms of the
124 ms of CPU a start added to the import (`bench/client_start.py --screen`). The door
sessions' template parses it once for every session it forks. The rules parsed are Textual's
own values, shared as its per-stylesheet cache already shares them between parses; a text with
errors is kept with them, and refused again with the same errors by every stylesheet that has
it."""

from __future__ import annotations

from textual.css.model import RuleSet
from textual.css.stylesheet import Stylesheet
from textual.css.types import CSSLocation

#: The rules parsed so far, by (variables, text, where it was read, default or not, the
#: tie-breaker, the scope): every argument the parse depends on.
_PARSED: dict[tuple[object, ...], list[RuleSet]] = {}
#: Textual's own parse, called on a text not parsed before.
_TEXTUALS_PARSE = Stylesheet._parse_rules


def _parse_rules(
    self: Stylesheet,
    css: str,
    read_from: CSSLocation,
    is_default_rules: bool = False,
    tie_breaker: int = 0,
    scope: str = "",
) -> list[RuleSet]:
    key = (
        tuple(sorted(self._variables.items())),
        css,
        read_from,
        is_default_rules,
        tie_breaker,
        scope,
    )
    rules = _PARSED.get(key)
    if rules is None:
        rules = _TEXTUALS_PARSE(self, css, read_from, is_default_rules, tie_breaker, scope)
        _PARSED[key] = rules
    return rules


def share_parsed_css() -> None:
    """From now on in this process, a CSS text parsed once with the same variables is not
    parsed again (called at each app's start; once is enough)."""
    Stylesheet._parse_rules = _parse_rules  # type: ignore[method-assign]
