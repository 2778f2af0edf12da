"""Vault markup: wiki links in their four shapes, embeds taken out of the text, #tags, and
Logseq's key:: value properties."""

from __future__ import annotations

import pytest

from sadie_tui.engine.ingest.markup import (
    Link,
    links_in,
    page_key,
    parse_link,
    property_list,
    read_markup,
    tags_in,
)


@pytest.mark.parametrize(
    ("inner", "expected"),
    [
        ("Ana Ribeiro", Link("Ana Ribeiro", "ana ribeiro")),
        ("Ana Ribeiro|Ana", Link("Ana Ribeiro", "ana ribeiro", alias="Ana")),
        ("Lisbon trip#Day two", Link("Lisbon trip", "lisbon trip", section="Day two")),
        ("Lisbon trip#^a1b2c3", Link("Lisbon trip", "lisbon trip", section="a1b2c3")),
        ("People/Ana  Ribeiro.md|A", Link("Ana  Ribeiro", "ana ribeiro", alias="A")),
        ("#Only a heading here", None),
    ],
)
def test_parse_link(inner: str, expected: Link | None) -> None:
    assert parse_link(inner) == expected


def test_page_key_is_the_case_folded_stem() -> None:
    assert page_key("People/Ana Ribeiro.md") == "ana ribeiro"
    assert page_key("TOMÁS") == "tomás"


def test_read_markup_takes_embeds_out_and_keeps_links() -> None:
    body = (
        "Coffee with [[Ana Ribeiro|Ana]] and [[Henrik]].\n\n"
        "![[run-map.png]]\n\n\n"
        "![a photo](attachments/kiosk.jpg)\n"
        "See [[Lisbon trip#Day two]] and again [[ana ribeiro]]."
    )
    markup = read_markup(body)
    assert markup.embeds == ["run-map.png", "attachments/kiosk.jpg"]
    assert "![[" not in markup.body and "kiosk.jpg" not in markup.body
    assert "\n\n\n" not in markup.body
    assert [link.page for link in markup.links] == ["Ana Ribeiro", "Henrik", "Lisbon trip"]
    assert "[[Ana Ribeiro|Ana]]" in markup.body  # links stay as written


def test_links_in_gives_spans_and_logseq_tag_links() -> None:
    text = "ran with [[Henrik]] #[[long run]] ![[x.png]]"
    found = links_in(text)
    assert [(text[s:e], link.key) for s, e, link in found] == [
        ("[[Henrik]]", "henrik"),
        ("#[[long run]]", "long run"),
    ]


def test_tags() -> None:
    text = (
        "# A heading, not a tag\n## Another\n"
        "Ran #running #work/project and #2026goals, not #1 or C# or http://x.org/#frag.\n"
        "Logseq #[[long run]]. `#code` and\n```\n#fenced\n```\n#running again"
    )
    assert tags_in(text) == ["running", "work/project", "2026goals", "long run"]


def test_logseq_properties_at_the_top_are_metadata_and_leave_the_text() -> None:
    body = "alias:: Tom, [[T.]]\ntype:: [[person]]\n\n- My partner.\n  id:: 64f0c2\n- Likes coffee."
    markup = read_markup(body)
    assert markup.properties == {"alias": "Tom, [[T.]]", "type": "[[person]]"}
    assert markup.body == "- My partner.\n- Likes coffee."
    assert property_list(markup.properties["alias"]) == ["Tom", "T."]
    assert property_list("[[a, b]], #c") == ["a, b", "c"]
