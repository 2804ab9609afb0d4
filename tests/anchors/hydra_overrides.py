"""What Hydra 1.3.2's own override parser reads in each argument, for the
Anchors* tests that judge trialshim's translations by it
(tests/cli/vertex_args_test.cc, tests/translate/translate_test.cc), or what
merging it does (tests/config/override_parser_test.cc).

    build/anchors/bin/python tests/anchors/hydra_overrides.py [--apply] ARGS.json

ARGS.json is a list of strings. Prints a JSON list with, for each, the
override Hydra's OverridesParser.parse_override makes of it as one line
"<type> <key> @<package> <value type>: <repr of the value>" (so 1, 1.0, '1'
and True differ), or {"error": message} where it refuses the text (a flag
such as --multirun is no override). With --apply, each is merged as Hydra
merges the command line's overrides into a config ({a: {b: 1}}, struct
mode): "ok", or {"error": message, "cause": the cause's type and message}.
"""
import json
import sys

from hydra._internal.config_loader_impl import ConfigLoaderImpl
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import OmegaConf


def describe(parser, text):
    try:
        o = parser.parse_override(text)
    except HydraException as e:
        return {"error": str(e)}
    value_type = o.value_type.name if o.value_type else None
    return f"{o.type.name} {o.key_or_group} @{o.package} {value_type}: {o.value()!r}"


def apply(parser, text):
    cfg = OmegaConf.create({"a": {"b": 1}})
    OmegaConf.set_struct(cfg, True)
    try:
        ConfigLoaderImpl._apply_overrides_to_config([parser.parse_override(text)], cfg)
    except Exception as e:  # the outcome compared
        cause = e.__cause__
        return {"error": str(e),
                "cause": f"{type(cause).__name__}: {cause}" if cause else ""}
    return "ok"


def main():
    with open(sys.argv[-1]) as f:
        args = json.load(f)
    parser = OverridesParser.create()
    run = apply if "--apply" in sys.argv[1:-1] else describe
    json.dump([run(parser, a) for a in args], sys.stdout)


if __name__ == "__main__":
    main()
