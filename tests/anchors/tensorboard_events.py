"""TensorBoard's own reader on event files, and Lightning's TensorBoardLogger
writing them, for tests/trainer/tensorboard_logger_test.cc's Anchors* test.

    build/anchors/bin/python tests/anchors/tensorboard_events.py CASES.json

CASES.json is a list of {ours: an event file trialshim wrote, lightning:
{dir, options: {TensorBoardLogger keywords}, params: {...} or null,
metrics: [[step, {name: value as float.hex()}], ...], status}}. For each case Lightning
2.2.5's TensorBoardLogger (torch's SummaryWriter) logs the params, each
metrics dict at its step and finalizes with status, in a fresh `dir`; then
both files are read with TensorBoard's LegacyEventFileLoader (the events as
written, each record's CRCs checked) and its EventAccumulator. Prints a JSON list with, for each
case, {ours: VIEW, lightning: VIEW, lightning_file: its path relative to
dir}; a VIEW is {file_version, values: ["<step> <tag> <simple_value or
plugin name>", ...] in file order, scalars: {tag: [[step, repr(value)],
...]} (EventAccumulator), hparams: {tag: the hparams plugin's content in text
format}, session_logs: ["<step> <status>", ...]}.
"""
import glob
import json
import os
import sys
import warnings

warnings.simplefilter("ignore")

from google.protobuf import text_format  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader  # noqa: E402
from tensorboard.compat.proto.event_pb2 import SessionLog  # noqa: E402
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData  # noqa: E402


def view(path):
    out = {"file_version": "", "values": [], "session_logs": []}
    for event in LegacyEventFileLoader(path).Load():
        if event.HasField("file_version"):
            out["file_version"] = event.file_version
        if event.HasField("session_log"):
            status = SessionLog.SessionStatus.Name(event.session_log.status)
            out["session_logs"].append(f"{event.step} {status}")
        for v in event.summary.value:
            shown = (repr(v.simple_value) if v.HasField("simple_value")
                     else v.metadata.plugin_data.plugin_name)
            out["values"].append(f"{event.step} {v.tag} {shown}")
    acc = EventAccumulator(path)
    acc.Reload()
    out["scalars"] = {tag: [[s.step, repr(s.value)] for s in acc.Scalars(tag)]
                      for tag in acc.Tags()["scalars"]}
    out["hparams"] = {}
    try:
        hparams = acc.PluginTagToContent("hparams")
    except KeyError:  # no hparams plugin in the file
        hparams = {}
    for tag, content in hparams.items():
        data = HParamsPluginData.FromString(content)
        out["hparams"][tag] = text_format.MessageToString(data, as_one_line=True)
    return out


def lightning(case):
    from lightning.pytorch.loggers import TensorBoardLogger

    logger = TensorBoardLogger(case["dir"], **case.get("options", {}))
    if case.get("params") is not None:
        logger.log_hyperparams(case["params"])
    for step, metrics in case.get("metrics", []):
        logger.log_metrics({k: float.fromhex(v) for k, v in metrics.items()}, step)
    logger.save()
    logger.finalize(case.get("status", "success"))
    files = glob.glob(os.path.join(case["dir"], "**", "events.out.tfevents.*"),
                      recursive=True)
    assert len(files) == 1, files
    return files[0]


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    out = []
    for case in cases:
        theirs = lightning(case["lightning"])
        out.append({"ours": view(case["ours"]), "lightning": view(theirs),
                    "lightning_file": os.path.relpath(theirs, case["lightning"]["dir"])})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
