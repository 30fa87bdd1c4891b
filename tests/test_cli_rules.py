"""The command line's rules, checked on every subcommand's parser (walked recursively, so
options and commands added later are held to them too):

* no single-letter long options (``--m``) among the visible options: descriptive names,
  the paper's symbol in the help text;
* every option whose default is not None/False says its default in ``--help``;
* ``--json`` on every command that runs something;
* one name for parallelism (``--jobs``);
* ``--time-limit`` is wall time for the whole call, everywhere;
* old spellings stay as hidden, deprecated aliases of the new options;
* ``--encoding`` is checked where it is read.
"""
from __future__ import annotations

import argparse
import json
import re
import warnings

import pytest

from trustlab.cli import build_parser, main
from trustlab.commands._common import PARALLELISM_OPTION, _DeprecatedAlias

#: option names that mean "how much parallelism" (one of them, PARALLELISM_OPTION, is used)
_PARALLEL = re.compile(r"^--(?:[a-z0-9]+-)*(?:jobs|workers|threads|processes|procs|cores|cpus|parallelism)$")


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(path, parser, is_leaf) for ``parser`` and every subcommand parser below it."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    yield path, parser, not subs
    seen = set()
    for action in subs:
        for name, sub in action.choices.items():
            if id(sub) not in seen:
                seen.add(id(sub))
                yield from _walk(sub, path + (name,))


PARSERS = [(p, parser, leaf) for p, parser, leaf in _walk(build_parser()) if p]
IDS = [" ".join(p) for p, _, _ in PARSERS]


def _visible(parser):
    return [a for a in parser._actions if a.option_strings and a.help is not argparse.SUPPRESS]


def _help(parser, action) -> str:
    return parser._get_formatter()._expand_help(action) if action.help else ""


def test_the_walk_finds_every_command():
    names = set(IDS)
    assert {"partition", "resolve", "privatize", "warmup", "bias weat", "explain-metrics consistency"} <= names
    assert len(names) >= 15


@pytest.mark.parametrize("path, parser, leaf", PARSERS, ids=IDS)
def test_no_single_letter_long_options(path, parser, leaf):
    bad = [s for a in _visible(parser) for s in a.option_strings if re.fullmatch(r"--[A-Za-z0-9]", s)]
    assert not bad, f"{' '.join(path)}: give {bad} descriptive names (keep the symbol in the help text)"


@pytest.mark.parametrize("path, parser, leaf", PARSERS, ids=IDS)
def test_every_default_is_shown(path, parser, leaf):
    silent = []
    for a in _visible(parser):
        if a.default is None or a.default is False or a.default is argparse.SUPPRESS:
            continue
        if "default" not in _help(parser, a).lower():
            silent.append(a.option_strings[-1])
    assert not silent, f"{' '.join(path)}: --help does not show the default of {silent}"


@pytest.mark.parametrize("path, parser, leaf", [x for x in PARSERS if x[2]], ids=[i for i, x in zip(IDS, PARSERS)
                                                                                    if x[2]])
def test_every_command_takes_json(path, parser, leaf):
    assert "--json" in parser._option_string_actions, f"{' '.join(path)} has no --json"


def test_one_name_for_parallelism():
    names = {s for _, parser, _ in PARSERS for a in _visible(parser) for s in a.option_strings if _PARALLEL.match(s)}
    assert names == {PARALLELISM_OPTION}, f"parallelism is spelled {sorted(names)}; use {PARALLELISM_OPTION} only"


def test_time_limit_is_wall_time_for_the_whole_call():
    found = 0
    for path, parser, _ in PARSERS:
        for a in _visible(parser):
            if "--time-limit" in a.option_strings:
                found += 1
                text = " ".join(_help(parser, a).split())
                assert "wall-clock seconds for the whole call" in text, (path, text)
                assert "per component" not in text, (path, text)
    assert found >= 2  # partition and resolve


@pytest.mark.parametrize("path, parser, leaf", PARSERS, ids=IDS)
def test_old_spellings_are_hidden_aliases(path, parser, leaf):
    for alias in [a for a in parser._actions if isinstance(a, _DeprecatedAlias)]:
        assert alias.help is argparse.SUPPRESS
        new = [a for a in _visible(parser) if a.dest == alias.dest]
        assert len(new) == 1 and alias.new in new[0].option_strings, (path, alias.option_strings)
        assert alias.type is new[0].type and alias.choices == new[0].choices
        old = alias.option_strings[0]
        assert not re.search(rf"{re.escape(old)}(?![\w-])", parser.format_help())
        ns = argparse.Namespace()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            alias(parser, ns, "7", old)
            alias(parser, ns, "8", old)
        assert getattr(ns, alias.dest) == "8"
        msgs = [str(w.message) for w in caught if issubclass(w.category, FutureWarning)]
        assert len(msgs) == 1 and old in msgs[0] and alias.new in msgs[0]  # warns once


def test_the_renamed_options(capsys):
    renamed = {("privatize",): {"--m": "--target-dim", "--threads": "--jobs"},
               ("privacy-utility",): {"--m": "--target-dim"},
               ("partition",): {"--workers": "--cpsat-portfolio"},
               ("bias", "direct"): {"--c": "--strictness"},
               ("explain-metrics", "consistency"): {"--a": "--saliency-a", "--b": "--saliency-b"}}
    parsers = {p: parser for p, parser, _ in PARSERS}
    for path, names in renamed.items():
        aliases = {a.option_strings[0]: a.new for a in parsers[path]._actions if isinstance(a, _DeprecatedAlias)}
        assert aliases == names, path


def test_deprecated_spelling_works_and_warns_once(capsys):
    from trustlab.commands.info import bundled_files

    w = next(p for p in bundled_files()["cplib"] if p.endswith("wildcats.txt"))
    with pytest.warns(FutureWarning, match="--workers is deprecated.*use --cpsat-portfolio"):
        rc_old = main(["partition", w, "--workers", "1", "--workers", "1", "--json", "--seed", "0"])
    old = json.loads(capsys.readouterr().out)
    rc_new = main(["partition", w, "--cpsat-portfolio", "1", "--json", "--seed", "0"])
    new = json.loads(capsys.readouterr().out)
    assert rc_old == rc_new == 0
    assert (old["objective"], old["n_clusters"], old["status"]) == (new["objective"], new["n_clusters"], new["status"])


def test_bogus_encoding_is_refused_where_it_is_read(capsys):
    for path, parser, _ in PARSERS:
        if "--encoding" in parser._option_string_actions:
            with pytest.raises(SystemExit) as info:
                parser.parse_known_args(["--encoding", "bogus"])
            assert info.value.code == 2
            err = capsys.readouterr().err
            assert "--encoding" in err and "bogus" in err, (path, err)
    rc = main(["resolve", "--dataset", "restaurant", "--encoding", "bogus", "--json"])
    assert rc == 2
    assert "--encoding" in capsys.readouterr().err
