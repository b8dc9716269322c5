"""The client's CSS parsed once a process (client/parsed_css.py): the same text with the same
variables is not parsed again, anything else is, a text with errors is refused every time, and
an app started on rules parsed before has the rules of an app that parsed its own."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
import textual.css.stylesheet
from textual.css.stylesheet import Stylesheet, StylesheetParseError
from tonk.client import app as client_app
from tonk.client import parsed_css
from tonk.client.app import ClientConfig, TonkApp

CSS = "Label { color: $ink; } .b { width: 3; }"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The texts Textual's own parser is given, with the cache installed and empty."""
    given: list[str] = []
    textual_parse = textual.css.stylesheet.parse

    def counted(scope: str, css: str, *args: Any, **kwargs: Any) -> Any:
        given.append(css)
        return textual_parse(scope, css, *args, **kwargs)

    monkeypatch.setattr(textual.css.stylesheet, "parse", counted)
    monkeypatch.setattr(parsed_css, "_PARSED", {})
    monkeypatch.setattr(Stylesheet, "_parse_rules", parsed_css._TEXTUALS_PARSE)
    parsed_css.share_parsed_css()
    yield given


def sheet(css: str, ink: str) -> Stylesheet:
    stylesheet = Stylesheet(variables={"ink": ink})
    stylesheet.add_source(css, read_from=("test", ""))
    stylesheet.parse()
    return stylesheet


def test_the_same_text_and_variables_are_parsed_once(parses: list[str]) -> None:
    first, second = sheet(CSS, "red"), sheet(CSS, "red")
    assert parses == [CSS]
    assert second.rules == first.rules and second.css == first.css
    second.reparse()  # (what an app's refresh of its CSS does: a new stylesheet inside)
    assert parses == [CSS]


def test_other_variables_or_another_text_are_parsed_again(parses: list[str]) -> None:
    red, blue = sheet(CSS, "#ff0000"), sheet(CSS, "#0000ff")
    other = sheet(CSS + " .c { height: 2; }", "#ff0000")
    assert len(parses) == 3
    assert "FF0000" in red.css and "0000FF" in blue.css and "FF0000" not in blue.css
    assert ".c" in other.css and ".c" not in red.css


def test_a_text_with_errors_is_refused_every_time(parses: list[str]) -> None:
    for _ in range(2):
        with pytest.raises(StylesheetParseError) as refused:
            sheet("Label { colour: red; }", "red")
        assert "colour" in str(refused.value.errors.rules[0].errors)
    assert len(parses) == 1  # (its rules are kept with their errors, and said again)


def started_css(monkeypatch: pytest.MonkeyPatch, shared: bool) -> list[tuple[str, str, bool]]:
    """Every rule of the table app's stylesheet at its first screen (its selectors, styles and
    whether it is a default), its CSS parsed by Textual alone or through the cache (after an
    app before it filled it)."""
    if not shared:
        monkeypatch.setattr(Stylesheet, "_parse_rules", parsed_css._TEXTUALS_PARSE)
        monkeypatch.setattr(client_app, "share_parsed_css", lambda: None)

    async def refused() -> Any:
        raise ConnectionRefusedError("(no server)")

    async def run() -> list[tuple[str, str, bool]]:
        config = ClientConfig(name="Ann", host="nowhere")
        config.opener = refused
        app = TonkApp(config)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause()
            return [
                (rule.selectors, repr(rule.styles.get_rules()), rule.is_default_rules)
                for rule in app.stylesheet.rules
            ]

    return asyncio.run(run())


def test_an_app_on_rules_parsed_before_has_the_stylesheet_of_one_that_parsed_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parsed_css, "_PARSED", {})
    first = started_css(monkeypatch, shared=True)  # fills the cache
    assert parsed_css._PARSED
    again = started_css(monkeypatch, shared=True)  # takes every rule from it
    with monkeypatch.context() as plain:
        own = started_css(plain, shared=False)
    assert len(own) > 100  # (the app's rules and its widgets')
    assert first == again == own
