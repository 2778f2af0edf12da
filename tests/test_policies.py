"""policies.toml: parsing, the guardrail block, and the lint after the reply."""

from __future__ import annotations

from pathlib import Path

import regex
from hypothesis import given
from hypothesis import strategies as st

from sadie_tui.engine.policies import (
    Policy,
    PolicyHit,
    PolicySet,
    guardrail_block,
    lint,
    load_policies,
    parse_policies,
)

EXAMPLE = r"""
[[policy]]
name = "no-diagnoses"
action = "block"          # rewrite | block | warn
pattern = "(?i)you (have|suffer from) (depression|adhd)"
message = "sadie does not diagnose"   # block: the note shown instead
scope = "chat"            # optional, default "chat"

[[policy]]
name = "gentle-words"
action = "rewrite"
pattern = "(?i)\\blazy\\b"
replacement = "tired"

[[policy]]
name = "money"
action = "warn"
pattern = "(?i)\\b(debt|loan)s?\\b"
"""


def policy(name: str, action: str, pattern: str, **kw: str) -> Policy:
    return Policy(
        name=name,
        action=action,
        pattern=regex.compile(pattern),
        message=kw.get("message", ""),
        replacement=kw.get("replacement", ""),
        scope=kw.get("scope", "chat"),
        description=kw.get("description", ""),
    )


# --------------------------------------------------------------------------- parsing


def test_example_parses():
    ps = parse_policies(EXAMPLE)
    assert ps.errors == ()
    assert [p.name for p in ps.policies] == ["no-diagnoses", "gentle-words", "money"]
    block, rewrite, warn = ps.policies
    assert block.action == "block" and block.message == "sadie does not diagnose"
    assert block.pattern.search("You have ADHD")
    assert rewrite.replacement == "tired" and rewrite.scope == "chat"  # default scope
    assert warn.action == "warn"


def test_load_missing_file_is_empty_without_error(tmp_path: Path):
    assert load_policies(tmp_path / "policies.toml") == PolicySet((), ())


def test_load_file(tmp_path: Path):
    path = tmp_path / "policies.toml"
    path.write_text(EXAMPLE, encoding="utf-8")
    ps = load_policies(path)
    assert len(ps.policies) == 3 and ps.errors == ()


def test_load_unreadable_file_is_an_error(tmp_path: Path):
    ps = load_policies(tmp_path)  # a folder, not a file
    assert ps.policies == ()
    assert len(ps.errors) == 1 and str(tmp_path) in ps.errors[0]


def test_invalid_toml_gives_no_policies_and_one_error_naming_file_and_line(tmp_path: Path):
    path = tmp_path / "policies.toml"
    path.write_text('[[policy]]\nname = "x"\naction = block\n', encoding="utf-8")
    ps = load_policies(path)
    assert ps.policies == ()
    assert len(ps.errors) == 1
    error = ps.errors[0]
    assert str(path) in error and "line 3" in error and "\n" not in error


def test_invalid_rule_among_valid_ones():
    text = EXAMPLE + '\n[[policy]]\nname = "oops"\naction = "shout"\npattern = "x"\n'
    ps = parse_policies(text, source="/home/me/policies.toml")
    assert [p.name for p in ps.policies] == ["no-diagnoses", "gentle-words", "money"]
    assert len(ps.errors) == 1
    assert ps.errors[0].startswith("/home/me/policies.toml: policy 'oops': unknown action")
    # the valid rules still apply
    assert lint("you are lazy", ps.policies).text == "you are tired"


def test_unnamed_rule_is_named_by_position():
    text = EXAMPLE + '\n[[policy]]\naction = "block"\n'
    ps = parse_policies(text)
    assert ps.errors == ("policies.toml: policy #4: missing 'pattern'",)


def test_unnamed_valid_rule_gets_a_positional_name():
    ps = parse_policies('[[policy]]\naction = "warn"\npattern = "x+"\n')
    assert ps.errors == ()
    assert ps.policies[0].name == "policy #1"


def test_bad_regex_includes_the_engine_message():
    ps = parse_policies('[[policy]]\nname = "broken"\naction = "warn"\npattern = "(unclosed"\n')
    assert ps.policies == ()
    (error,) = ps.errors
    assert "policy 'broken'" in error
    assert "invalid pattern '(unclosed': missing ) at position" in error


def test_pattern_that_matches_empty_text_is_rejected():
    ps = parse_policies('[[policy]]\nname = "all"\naction = "block"\npattern = "x*"\n')
    assert ps.policies == ()
    assert "matches empty text" in ps.errors[0]


def test_missing_and_wrongly_typed_fields():
    text = """
[[policy]]
name = "no-action"
pattern = "x"

[[policy]]
name = "typed"
action = "warn"
pattern = 42

[[policy]]
name = "empty"
action = "warn"
pattern = ""
"""
    ps = parse_policies(text)
    assert ps.policies == ()
    assert ps.errors == (
        "policies.toml: policy 'no-action': missing 'action' (expected rewrite, block or warn)",
        "policies.toml: policy 'typed': 'pattern' must be text, not int",
        "policies.toml: policy 'empty': 'pattern' is empty",
    )


def test_rewrite_without_replacement():
    ps = parse_policies('[[policy]]\nname = "r"\naction = "rewrite"\npattern = "x"\n')
    assert ps.policies == ()
    assert ps.errors == ("policies.toml: policy 'r': action 'rewrite' needs a 'replacement'",)


def test_rewrite_with_empty_replacement_deletes():
    ps = parse_policies(
        '[[policy]]\nname = "r"\naction = "rewrite"\npattern = " ?um,?"\nreplacement = ""\n'
    )
    assert ps.errors == ()
    assert lint("well um, yes", ps.policies).text == "well yes"


def test_duplicate_names_first_wins():
    text = """
[[policy]]
name = "same"
action = "warn"
pattern = "first"

[[policy]]
name = "same"
action = "block"
pattern = "second"
"""
    ps = parse_policies(text)
    assert [p.pattern.pattern for p in ps.policies] == ["first"]
    (error,) = ps.errors
    assert "policy 'same'" in error and "duplicate" in error


def test_action_is_case_insensitive():
    ps = parse_policies('[[policy]]\nname = "w"\naction = " Warn "\npattern = "x"\n')
    assert ps.policies[0].action == "warn"


def test_unknown_keys_are_reported_but_rule_kept():
    ps = parse_policies(
        '[[policy]]\nname = "w"\naction = "warn"\npattern = "x"\nsevertiy = "high"\n'
    )
    assert len(ps.policies) == 1
    assert ps.errors == ("policies.toml: policy 'w': unknown key 'severtiy' (ignored)",)


def test_policy_must_be_an_array_of_tables():
    ps = parse_policies('policy = "nope"\n')
    assert ps.policies == ()
    assert len(ps.errors) == 1


def test_every_error_is_one_line():
    text = (
        '[[policy]]\nname = "a"\naction = "x"\npattern = "(?P<"\n'
        '[[policy]]\naction = "rewrite"\npattern = "y"\n'
    )
    ps = parse_policies(text)
    assert len(ps.errors) == 3
    assert all("\n" not in e for e in ps.errors)


def test_empty_text_is_no_policies():
    assert parse_policies("") == PolicySet((), ())


# --------------------------------------------------------------------------- scope


def test_scope_filtering():
    text = """
[[policy]]
name = "chat-only"
action = "warn"
pattern = "a"

[[policy]]
name = "ask-only"
action = "warn"
pattern = "b"
scope = "ask"

[[policy]]
name = "everywhere"
action = "warn"
pattern = "c"
scope = "all"
"""
    ps = parse_policies(text)
    assert [p.name for p in ps.for_scope("chat")] == ["chat-only", "everywhere"]
    assert [p.name for p in ps.for_scope("ask")] == ["ask-only", "everywhere"]
    assert [p.name for p in ps.for_scope("other")] == ["everywhere"]


# --------------------------------------------------------------------------- guardrail


def test_guardrail_block_empty():
    assert guardrail_block(()) == ""


def test_guardrail_block_text():
    ps = parse_policies(EXAMPLE)
    block = guardrail_block(ps.policies)
    lines = block.splitlines()
    assert lines[0] == "Rules for this conversation (they are enforced after you reply):"
    assert lines[1] == (
        "- Never write text matching /you (have|suffer from) (depression|adhd)/ "
        '(ignoring case). Rule "no-diagnoses": sadie does not diagnose. '
        "A reply that breaks this rule is withheld."
    )
    assert lines[2] == (
        r'- Avoid text matching /\blazy\b/ (ignoring case). Rule "gentle-words": '
        'it will be replaced with "tired".'
    )
    assert lines[3] == (
        r'- Be careful with text matching /\b(debt|loan)s?\b/ (ignoring case). Rule "money": '
        "it is recorded."
    )
    assert "regular expression" in lines[-1]


def test_guardrail_orders_strictest_first_and_adds_descriptions():
    rules = [
        policy("w", "warn", "x"),
        policy("r", "rewrite", "y", replacement=""),
        policy("b", "block", "z", description="Keep it kind"),
    ]
    lines = guardrail_block(rules).splitlines()[1:4]
    assert lines[0] == (
        '- Never write text matching /z/. Rule "b". A reply that breaks this rule is withheld. '
        "Keep it kind."
    )
    assert lines[1] == '- Avoid text matching /y/. Rule "r": it will be removed.'
    assert lines[2].startswith("- Be careful with text matching /x/.")


# --------------------------------------------------------------------------- lint


def test_no_policies_leaves_text_alone():
    result = lint("anything at all", ())
    assert result.text == "anything at all"
    assert result.blocked_by is None and result.hits == () and result.changed is False


def test_rewrite():
    ps = parse_policies(EXAMPLE)
    result = lint("You seemed Lazy, not lazy-minded.", ps.policies)
    assert result.text == "You seemed tired, not tired-minded."
    assert result.changed is True and result.blocked_by is None
    assert result.hits == (PolicyHit("gentle-words", "rewrite", "Lazy"),)


def test_rewrites_apply_in_file_order():
    rules = [
        policy("one", "rewrite", "cat", replacement="dog"),
        policy("two", "rewrite", "dog", replacement="bird"),
    ]
    assert lint("cat", rules).text == "bird"
    assert lint("cat", rules[::-1]).text == "dog"


def test_rewrite_replacement_is_literal():
    rules = [policy("slashy", "rewrite", r"(\w+)@", replacement=r"\1 \g<0> \\ \n")]
    result = lint("mail me@home", rules)
    assert result.text == r"mail \1 \g<0> \\ \nhome"


def test_rewrite_replacement_with_backslashes_from_toml():
    ps = parse_policies(
        '[[policy]]\nname = "r"\naction = "rewrite"\npattern = "(x)"\nreplacement = \'\\1\\\\2\'\n'
    )
    assert ps.errors == ()
    assert lint("axb", ps.policies).text == "a\\1\\\\2b"


def test_block():
    ps = parse_policies(EXAMPLE)
    result = lint("I think you have depression.", ps.policies)
    assert result.text == (
        'This reply was withheld by the policy "no-diagnoses": sadie does not diagnose.'
    )
    assert result.blocked_by is not None and result.blocked_by.name == "no-diagnoses"
    assert result.changed is True
    assert PolicyHit("no-diagnoses", "block", "you have depression") in result.hits


def test_block_without_message():
    result = lint("secret", [policy("hush", "block", "secret")])
    assert result.text == 'This reply was withheld by the policy "hush".'


def test_block_after_rewrite():
    rules = [
        policy("soften", "rewrite", "stupid", replacement="unwise"),
        policy("no-unwise", "block", "unwise", message="too judgemental"),
    ]
    result = lint("that was stupid", rules)
    assert result.blocked_by is rules[1]
    assert result.text == 'This reply was withheld by the policy "no-unwise": too judgemental.'
    assert [h.policy for h in result.hits] == ["soften", "no-unwise"]


def test_rewrite_can_defuse_a_block():
    rules = [
        policy("no-bad", "block", "bad"),
        policy("fix", "rewrite", "bad", replacement="good"),
    ]
    result = lint("a bad day", rules)
    assert result.blocked_by is None and result.text == "a good day"


def test_first_block_in_file_order_wins():
    rules = [policy("b1", "block", "x"), policy("b2", "block", "y")]
    result = lint("y and x", rules)
    assert result.blocked_by is rules[0]


def test_warn_is_recorded_silently():
    ps = parse_policies(EXAMPLE)
    result = lint("Your loans are paid off.", ps.policies)
    assert result.text == "Your loans are paid off."
    assert result.changed is False and result.blocked_by is None
    assert result.hits == (PolicyHit("money", "warn", "loans"),)


def test_all_actions_together():
    ps = parse_policies(EXAMPLE)
    result = lint("You're lazy about debt.", ps.policies)
    assert result.text == "You're tired about debt."
    assert result.hits == (
        PolicyHit("gentle-words", "rewrite", "lazy"),
        PolicyHit("money", "warn", "debt"),
    )


def test_zero_width_matches_never_fire():
    rules = [policy("look", "rewrite", r"(?=a)", replacement="!"), policy("w", "warn", "b?")]
    result = lint("banana", rules)
    assert result.text == "banana"
    assert result.hits == (PolicyHit("w", "warn", "b"),)


@given(st.text(max_size=60), st.text(max_size=10))
def test_lint_never_raises_on_any_replacement(text, replacement):
    rules = [policy("any", "rewrite", r"[a-z]+", replacement=replacement)]
    result = lint(text, rules)
    assert result.changed == (result.text != text)
    assert result.blocked_by is None
