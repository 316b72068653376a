"""The fake Slack's file uploads, as `files_upload_v2` makes them, and as strict as Slack.

Three steps (Slack's method reference for files.getUploadURLExternal and
files.completeUploadExternal):
1. `files.getUploadURLExternal` with `filename` and `length` (bytes, a positive integer):
   a file id and an upload URL (here, on the fake itself); `alt_txt` at most 1,000
   characters. A missing scope is `missing_scope` (needs `files:write`).
2. A POST of the bytes to that URL: exactly `length` bytes, or the upload fails (400).
3. `files.completeUploadExternal` with `files` (a JSON list of `{"id", "title"}`) and
   `channel_id` (and `thread_ts`, which must be a message there) to share them: an id
   never issued or whose bytes never came is `file_not_found`; one completed before is
   `file_already_completed`; an unknown channel is `channel_not_found`.

Each shared file is recorded in `FakeSlack.uploads` (channel, thread, name, title, bytes).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tests.servers.slack_checks import SlackError

if TYPE_CHECKING:
    from tests.servers.slack_fake import FakeSlack

MAX_ALT_TEXT = 1000
_ids = itertools.count(1)


@dataclass
class Upload:
    file_id: str
    filename: str
    length: int
    alt_txt: str
    data: bytes | None = None
    channel: str = ""
    thread_ts: str = ""
    title: str = ""
    completed: bool = False


def get_upload_url(fake: FakeSlack, params: dict[str, Any]) -> dict[str, Any]:
    if "files:write" in fake.missing_scopes:
        raise SlackError("missing_scope", needed="files:write", provided="chat:write")
    filename = str(params.get("filename") or "")
    length = str(params.get("length") or "")
    if not filename or not length.isdigit() or int(length) <= 0:
        raise SlackError("invalid_arguments")
    alt = str(params.get("alt_txt") or "")
    if len(alt) > MAX_ALT_TEXT:
        raise SlackError("invalid_arguments")
    file_id = f"F{next(_ids):08d}"
    fake.pending_uploads[file_id] = Upload(file_id, filename, int(length), alt)
    return {"file_id": file_id, "upload_url": f"{fake.origin}/upload/{file_id}"}


def receive(fake: FakeSlack, file_id: str, data: bytes) -> tuple[int, str]:
    """The upload URL's answer to a POST of the file's bytes."""
    upload = fake.pending_uploads.get(file_id)
    if upload is None or upload.data is not None:
        return 404, "not found"
    if len(data) != upload.length:
        return 400, f"length mismatch: declared {upload.length}, got {len(data)}"
    upload.data = data
    return 200, f"OK - {len(data)}"


def complete_upload(fake: FakeSlack, params: dict[str, Any]) -> dict[str, Any]:
    raw = params.get("files")
    files = json.loads(raw) if isinstance(raw, str) else raw
    if not isinstance(files, list) or not files:
        raise SlackError("invalid_arguments")
    channel = str(params.get("channel_id") or "")
    thread_ts = str(params.get("thread_ts") or "")
    if thread_ts and not channel:
        raise SlackError("invalid_arguments")
    if channel:
        fake._channel({"channel": channel})  # an unknown channel is channel_not_found
        if thread_ts:
            fake._require_parent(channel, thread_ts)
    done = []
    for f in files:
        upload = fake.pending_uploads.get(str(f.get("id")))
        if upload is None or upload.data is None:
            raise SlackError("file_not_found")
        if upload.completed:
            raise SlackError("file_already_completed")
        upload.completed = True
        upload.channel, upload.thread_ts = channel, thread_ts
        upload.title = str(f.get("title") or upload.filename)
        fake.uploads.append(upload)
        done.append({"id": upload.file_id, "title": upload.title, "name": upload.filename})
    return {"files": done}


FILES_METHODS: dict[str, Callable[[FakeSlack, dict[str, Any]], dict[str, Any]]] = {
    "files.getUploadURLExternal": get_upload_url,
    "files.completeUploadExternal": complete_upload,
}
