r"""``symbolic-attn completion bash|zsh``: a shell completion script, generated from the parsers.

Nothing is installed and no dependency is needed: the script is built from the argparse
parsers of every command (their subcommands, options and the choices of each option), so
it never disagrees with ``--help``.  Load it with::

    eval "$(symbolic-attn completion bash)"     # in ~/.bashrc
    eval "$(symbolic-attn completion zsh)"      # in ~/.zshrc (through zsh's bashcompinit)

It completes command names, option names, the values of options with a fixed set of
choices (``--format``, ``--exact``, ``--stage``, ``--mask-convention``...) and file names
elsewhere.

>>> import argparse
>>> parser = argparse.ArgumentParser(prog="demo")
>>> sub = parser.add_subparsers()
>>> one = sub.add_parser("one")
>>> _ = one.add_argument("--format", choices=("text", "json"))
>>> table = command_table(parser)
>>> table["one"]["values"]["--format"], table["one"]["options"]
(('text', 'json'), ['--format', '--help', '-h'])
"""

from __future__ import annotations

import argparse
import shlex

__all__ = ["add_parser", "command_table", "bash_script", "zsh_script", "SHELLS"]

SHELLS = ("bash", "zsh")
#: An option whose value is not one of fixed choices completes as a file name unless its
#: metavar says it is something else.
_NOT_FILES = {"N", "S", "SECONDS", "SPEC", "SCALE", "MATRIX", "TEXT", "PATH"}


def add_parser(subparsers) -> None:
    from symbolic_attn.cli.options import examples_epilog

    parser = subparsers.add_parser(
        "completion",
        help="print a shell completion script (bash or zsh)",
        description="Print a completion script for bash or zsh, generated from the command's own parsers.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=examples_epilog(
            'eval "$(symbolic-attn completion bash)"     # add this line to ~/.bashrc',
            'eval "$(symbolic-attn completion zsh)"      # add this line to ~/.zshrc',
            "symbolic-attn completion bash > /etc/bash_completion.d/symbolic-attn",
        ),
    )
    parser.add_argument("shell", choices=SHELLS, help="the shell: bash or zsh")
    parser.set_defaults(handler=run)


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices
    return {}


def command_table(parser, path: str = "", table: dict | None = None) -> dict:
    """``{command path: {"commands": [...], "options": [...], "values": {option: choices},
    "takes_value": [...], "files": [...]}}`` for the parser and every subcommand below it
    (the top level is ``""``; ``"autograder run"`` is a nested one)."""
    table = {} if table is None else table
    entry = {"commands": [], "options": [], "values": {}, "takes_value": [], "files": []}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        choices = action.choices or getattr(action, "completion_choices", None)
        if not action.option_strings:
            if choices:
                entry["commands"].extend(str(c) for c in choices)
            continue
        entry["options"].extend(action.option_strings)
        if action.nargs == 0:
            continue
        for option in action.option_strings:
            entry["takes_value"].append(option)
            if choices:
                entry["values"][option] = tuple(str(c) for c in choices)
            elif (action.metavar or "") not in _NOT_FILES:
                entry["files"].append(option)
    entry["options"].sort()
    table[path] = entry
    for name, child in _subparsers(parser).items():
        entry["commands"].append(name)
        command_table(child, f"{path} {name}".strip(), table)
    return table


def _words(items) -> str:
    return shlex.quote(" ".join(items))


def bash_script(parser, prog: str = "symbolic-attn") -> str:
    """The bash completion function and its ``complete`` line."""
    table = command_table(parser)
    function = "_" + "".join(c if c.isalnum() else "_" for c in prog)
    walk, value_cases, word_cases = [], [], []
    for path, entry in table.items():
        parent, _, name = path.rpartition(" ")
        if path:
            walk.append(f'            {shlex.quote(parent + ":" + name)}) cmd={shlex.quote(path)} ;;')
        for option, choices in entry["values"].items():
            value_cases.append(f'        {shlex.quote(path + ":" + option)}) COMPREPLY=($(compgen -W {_words(choices)} -- "$cur")); return ;;')
        for option in entry["files"]:
            value_cases.append(f'        {shlex.quote(path + ":" + option)}) COMPREPLY=($(compgen -f -- "$cur")); return ;;')
        for option in entry["takes_value"]:
            if option not in entry["values"] and option not in entry["files"]:
                value_cases.append(f'        {shlex.quote(path + ":" + option)}) return ;;')
        word_cases.append(f'        {shlex.quote(path)}) options={_words(entry["options"])}; commands={_words(entry["commands"])} ;;')
    lines = [
        f"# {prog} completion for bash (generated by `{prog} completion bash` from its parsers)",
        f"{function}() {{",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="" cmd="" options="" commands="" i w',
        '    (( COMP_CWORD > 0 )) && prev="${COMP_WORDS[COMP_CWORD-1]}"',
        "    for (( i = 1; i < COMP_CWORD; i++ )); do",
        '        w="${COMP_WORDS[i]}"',
        '        case "$cmd:$w" in',
        *walk,
        "        esac",
        "    done",
        '    case "$cmd:$prev" in',
        *value_cases,
        "    esac",
        '    case "$cmd" in',
        *word_cases,
        "    esac",
        '    if [[ "$cur" == -* ]]; then',
        '        COMPREPLY=($(compgen -W "$options" -- "$cur"))',
        '    elif [[ -n "$commands" ]]; then',
        '        COMPREPLY=($(compgen -W "$commands" -- "$cur"))',
        "    else",
        '        COMPREPLY=($(compgen -f -- "$cur"))',
        "    fi",
        "}",
        f"complete -o filenames -o bashdefault -F {function} {prog}",
    ]
    return "\n".join(lines) + "\n"


def zsh_script(parser, prog: str = "symbolic-attn") -> str:
    """The bash function, loaded in zsh through ``bashcompinit``."""
    return (f"# {prog} completion for zsh (generated by `{prog} completion zsh`; uses bashcompinit)\n"
            "autoload -U +X compinit && compinit\n"
            "autoload -U +X bashcompinit && bashcompinit\n"
            + bash_script(parser, prog).split("\n", 1)[1])


def run(args) -> int:
    """Print the script for ``args.shell``, built from ``args.root`` (the whole command line's
    parser, set by :func:`symbolic_attn.cli.build_parser`)."""
    parser = args.root
    print(bash_script(parser, parser.prog) if args.shell == "bash" else zsh_script(parser, parser.prog), end="")
    return 0
