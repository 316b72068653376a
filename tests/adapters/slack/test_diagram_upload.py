"""An architecture answer's diagram is uploaded into its thread, through the strict fake Web
API (files.getUploadURLExternal, the upload URL, files.completeUploadExternal)."""

from __future__ import annotations

import io

from PIL import Image

from bot.core import Core
from tests.servers.slack_fake import FakeSlack
from tests.support.gitrepo import GitRepo
from tests.support.layered_app import build_layered_app
from tests.support.slack_driver import CHANNEL, Driver, replies_in


def _index_app(core: Core, tmp_path) -> None:
    repo = build_layered_app(GitRepo(tmp_path / "relay"))
    core.index_repo(str(repo.path), name="relay")


def test_the_diagram_is_uploaded_into_the_answers_thread(
    slack: FakeSlack, core: Core, driver: Driver, tmp_path
) -> None:
    _index_app(core, tmp_path)
    msg = driver.say("I'm new here: how is relay organised?")
    upload = slack.wait_for(lambda: slack.uploads[0] if slack.uploads else None)
    assert (upload.channel, upload.thread_ts) == (CHANNEL, msg["ts"])
    assert upload.filename == "relay-architecture.png" and upload.title == "Architecture of relay"
    assert upload.alt_txt.startswith("flowchart TD") and "router.py" in upload.alt_txt
    assert upload.data is not None
    picture = Image.open(io.BytesIO(upload.data))
    assert picture.format == "PNG" and picture.width >= 360
    [reply] = replies_in(slack, CHANNEL, msg["ts"])
    assert "where to start" in reply["text"]  # the text went first, then the picture
    order = [c.method for c in slack.calls if c.ok]
    assert order.index("chat.postMessage") < order.index("files.getUploadURLExternal")
    assert order.index("files.getUploadURLExternal") < order.index("files.completeUploadExternal")


def test_without_files_write_the_answer_still_arrives(
    slack: FakeSlack, core: Core, driver: Driver, tmp_path
) -> None:
    _index_app(core, tmp_path)
    slack.missing_scopes.add("files:write")
    msg = driver.say("how is relay organised?")
    reply = slack.wait_for(lambda: (r := replies_in(slack, CHANNEL, msg["ts"])) and r[0])
    assert "where to start" in reply["text"]
    slack.wait_for(lambda: slack.calls_to("reactions.remove") or None)  # the answer is done
    tried = [c.method for c in slack.calls if c.method.startswith("files.")]
    assert tried == ["files.getUploadURLExternal"]  # refused: missing_scope, logged only
    assert not slack.uploads


def test_an_ordinary_answer_uploads_nothing(slack: FakeSlack, driver: Driver) -> None:
    msg = driver.say("where do we retry failed webhooks?")
    slack.wait_for(lambda: replies_in(slack, CHANNEL, msg["ts"]) or None)
    assert not slack.calls_to("files.getUploadURLExternal")
