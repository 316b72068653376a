"""Messages with files, as Discord takes them: `multipart/form-data` with a `payload_json`
part (the message's JSON) and one `files[n]` part per file.

Rules (Discord's "Uploading Files" reference): every file part has a filename; at most
10 files; at most 10 MiB in all for a bot without boosts; `payload_json`, when present,
is JSON; an `attachments` entry's `description` is at most 1,024 characters. The parsed
message is the payload's JSON with the files under `FILES` (filename, content type,
size, bytes), which the fake keeps on the message it creates.
"""

from __future__ import annotations

import json
import mimetypes
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

from tests.servers.discord_wire import DiscordError, invalid

FILES = "_files"
MAX_FILES = 10
MAX_BYTES = 10 * 1024 * 1024


def multipart_message(content_type: str, raw: bytes) -> dict[str, Any]:
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + raw)
    if not message.is_multipart():
        raise DiscordError(400, 50109, "The request body contains invalid JSON.")
    body: dict[str, Any] = {}
    files: list[dict[str, Any]] = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        data = part.get_payload(decode=True) or b""
        if name == "payload_json":
            try:
                body = json.loads(data)
            except ValueError as exc:
                raise DiscordError(400, 50109, "The request body contains invalid JSON.") from exc
        elif isinstance(name, str) and name.startswith("files["):
            filename = part.get_filename()
            if not filename:
                raise invalid(name, "A file needs a filename.")
            files.append(
                {
                    "filename": filename,
                    # Discord names the type from the file name (discord.py sends octet-stream)
                    "content_type": mimetypes.guess_type(filename)[0] or part.get_content_type(),
                    "size": len(data),
                    "data": bytes(data),
                }
            )
    if len(files) > MAX_FILES:
        raise invalid("files", f"At most {MAX_FILES} files.")
    if sum(f["size"] for f in files) > MAX_BYTES:
        raise DiscordError(413, 40005, "Request entity too large")
    for a in body.get("attachments", []):
        if len(str(a.get("description", ""))) > 1024:
            raise invalid("attachments", "A description is at most 1024 characters.")
    body[FILES] = files
    return body
